"""The executor subject's catalog rows: contract sections 5 (validation, V) and 6 (dispatch, E)."""

from __future__ import annotations

from conformance._core.catalog import Clause, clause

__all__ = ["ROWS"]

ROWS: tuple[Clause, ...] = (
    # 5. Validation
    clause(
        "validation",
        "V1",
        "core",
        "Validation never rejects what JSON Schema accepts",
        """Arguments that a full JSON Schema validator accepts for the tool's parameters, under
       the dialect the schema declares (draft-04 to 2020-12; 2020-12 when absent), are never
       rejected. Up to draft-07 a $ref makes its sibling keywords inert.""",
    ),
    clause(
        "validation",
        "V2",
        "core",
        "Unknown tool name is rejected, naming the tool",
        """A call naming a tool the registry does not have is rejected; the message names the
       tool and the visible tools: all of them, or the first 20 and a count of the rest when
       there are more (the kit checks that the tool and all visible tools, or 20 of them, are
       named).""",
    ),
    clause(
        "validation",
        "V3",
        "core",
        "Non-mapping arguments are rejected",
        """A call whose arguments are not a mapping is rejected.""",
    ),
    clause(
        "validation",
        "V4",
        "core",
        "Missing required keys are rejected, naming them",
        """A call missing a key listed in the schema's top-level required is rejected, and the
       message names the missing keys (of more than ten, the kit asks for at least ten: V8
       keeps messages short).""",
    ),
    clause(
        "validation",
        "V5",
        "core",
        "Keys outside a closed schema are rejected, naming them",
        """With additionalProperties false (and no patternProperties), a key not in properties is
       rejected and the message names the keys (of more than ten, at least ten).""",
    ),
    clause(
        "validation",
        "V6",
        "core",
        "Top-level property type mismatches are rejected",
        """A top-level property whose schema declares type and receives a value of another JSON
       type is rejected, with JSON semantics: bool is not a number, an integral float is an
       integer, a list of types means any of them, an unknown type name accepts anything.""",
    ),
    clause(
        "validation",
        "V7",
        "core",
        "Nothing else is checked before dispatch",
        """Nested schemas, enum, ranges, formats and combinators are not checked before
       dispatch: such calls reach the handler, which fails there and returns an ordinary
       observation (an executor may still reject them, E14).""",
    ),
    clause(
        "validation",
        "V8",
        "strict",
        "Rejections never echo argument values; under 2,000 chars",
        """Rejection messages name keys and type names but never echo argument values, and stay
       under 2,000 characters whatever the input; long names are shortened.""",
    ),
    # 6. Dispatch
    clause(
        "dispatch",
        "E1",
        "core",
        "An action without a tool call is NOT_EXECUTED",
        """An action that carries code instead of a tool call yields NOT_EXECUTED with a
       synthetic observation of the executor's own, and no handler runs.""",
    ),
    clause(
        "dispatch",
        "E2",
        "core",
        "A rejected call is NOT_EXECUTED with the rejection message",
        """A call that validation rejects yields NOT_EXECUTED with the rejection message as a
       synthetic observation, and no handler runs.""",
    ),
    clause(
        "dispatch",
        "E3",
        "core",
        "ToolEnvironmentError yields ENV_ERROR with str(exc)",
        """A handler that raises ToolEnvironmentError yields ENV_ERROR whose observation is
       str(exc), not synthetic.""",
    ),
    clause(
        "dispatch",
        "E4",
        "core",
        "Any other handler exception is an EXECUTED observation",
        """A handler that raises any other Exception yields EXECUTED with the observation
       "<ClassName>: <str(exc)>" (the name is type(exc).__name__), without a traceback, not
       synthetic.""",
    ),
    clause(
        "dispatch",
        "E5",
        "core",
        "A returned str is the observation, exactly",
        """A handler that returns a str yields EXECUTED with exactly that string as the
       observation, not synthetic.""",
    ),
    clause(
        "dispatch",
        "E6",
        "core",
        "CancelledError and other BaseExceptions propagate unchanged",
        """Cancellation, and any BaseException that is not an Exception, propagates out of
       execute unchanged; no outcome is produced.""",
    ),
    clause(
        "dispatch",
        "E7",
        "core",
        "No completion claim and no truncation on this path",
        """Every outcome has env_reported_completion False and observation_truncated_chars 0.""",
    ),
    clause(
        "dispatch",
        "E8",
        "core",
        "The handler is awaited once, with only the arguments",
        """For an accepted call the handler is awaited exactly once with a mapping equal to the
       call's arguments and nothing else; for E1/E2 it is never called.""",
    ),
    clause(
        "dispatch",
        "E9",
        "core",
        "A non-str return raises TypeError naming the tool",
        """A handler that returns something other than str makes execute raise TypeError naming
       the tool. Judged on honest values: None, numbers, bytes, lists, dicts, an object of a
       user class (a str subclass is a str, as isinstance sees it).""",
    ),
    clause(
        "dispatch",
        "E10",
        "core",
        "Only ToolEnvironmentError yields ENV_ERROR",
        """Only ToolEnvironmentError yields ENV_ERROR; a handler's ValueError, its own
       ToolValidationError or an OSError is an ordinary exception (E4).""",
    ),
    clause(
        "dispatch",
        "E11",
        "strict",
        "Concurrent calls give the same outcomes as sequential ones",
        """The executor is re-entrant: outcomes of concurrent execute calls on one executor
       equal those of the same calls run one at a time.""",
    ),
    clause(
        "dispatch",
        "E12",
        "strict",
        "An exception whose str() raises still gives an outcome",
        """An exception whose str() itself raises (with an Exception) gives an outcome whose
       whole observation is "<ClassName>: <exception str() failed>", never a crash; for a
       ToolEnvironmentError, whose observation is str(exc) (E3), the bare "<exception str()
       failed>" conforms too. A __str__ raising a BaseException is level hardened's.""",
    ),
    clause(
        "dispatch",
        "E13",
        "strict",
        "The handler gets its own plain dict",
        """The handler gets its own plain dict (nested dicts and lists) equal to the arguments;
       whatever it mutates reaches neither the recorded ToolCall nor any later call. Judged on
       JSON arguments; non-JSON leaves are level hardened's.""",
    ),
    clause(
        "dispatch",
        "E14",
        "core",
        "Calls only full JSON Schema rejects may go either way",
        """A call that full JSON Schema rejects but the subset accepts (an enum violation, say)
       may be dispatched (E3–E5 apply) or rejected (E2 applies); both conform.""",
    ),
    clause(
        "dispatch",
        "E15",
        "core",
        "The executor is an ActionExecutor",
        """execute is a coroutine function, every outcome is an ActionOutcome instance (not a
       look-alike), and parameters() returns a mapping of str to str, the same on every call; a
       RegistryExecutor returns exactly {"tools": "a,b,c"} (names in order, comma-joined).""",
    ),
)
