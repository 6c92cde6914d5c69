"""Every clause of the polyloop tool contract, one row each.

This table is the single source for clause IDs, levels and titles: the certification report, the
`ExecutorContract` test names, the generated `docs/contract.md` and the CLI's progress lines all
read it, so a clause is renamed in one place. The authoritative wording stays in CONTRACT.md;
the summaries here are the kit's one-paragraph paraphrase of each clause.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLAUSES", "CONTRACT_VERSION", "LEVELS", "SECTIONS", "Clause", "get"]

CONTRACT_VERSION = "1.0"
"""Version of CONTRACT.md this catalog describes; reports carry it."""

LEVELS = ("core", "strict", "hardened")
"""Certification levels: ``core`` checks design 0008's clauses; ``strict`` adds the [H]
hardening. Both judge realistic input only (calls as JSON decoding makes them, handlers that
return honest values and raise honest exceptions). ``hardened`` is opt-in: strict's clauses
plus objects that lie about themselves (a key whose ``__eq__`` raises, a metaclass hiding
``__name__``, a ``__class__`` claiming ``str``, a ``__str__`` raising a BaseException, non-JSON
leaves). It measures polyloop's own paranoia; no third-party executor is expected to pass it."""

SECTIONS = ("spec", "registry", "validation", "dispatch", "session", "tools", "api", "batch")
"""Section names in contract order (section 1–2 of the contract, types and ports, have no IDs)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Clause:
    """One contract clause: its stable ID, the level that checks it, and what it says."""

    id: str
    level: str
    """``"core"`` (design 0008) or ``"strict"`` (this project's [H] hardening)."""
    title: str
    summary: str
    section: str


def _c(section: str, clause_id: str, level: str, title: str, summary: str) -> Clause:
    return Clause(
        id=clause_id, level=level, title=title, summary=" ".join(summary.split()), section=section
    )


CLAUSES: tuple[Clause, ...] = (
    # 3. Tool specs
    _c(
        "spec",
        "S1",
        "core",
        "ToolSpec is a frozen, slotted, keyword-only dataclass",
        """ToolSpec takes keyword arguments only (positional construction raises TypeError) and
       has the fields name, description, parameters, replay_policy (default NEVER),
       completes_run (default False), handler (default None) and concurrency_safe (default
       False, appended for batch dispatch), in that order; new fields are only ever appended,
       and polyloop's own API guard sees such an append as compatible.""",
    ),
    _c(
        "spec",
        "S2",
        "core",
        "parameters is a plain JSON Schema dict, copied and deep-frozen",
        """parameters is a plain JSON Schema mapping, never a third-party model object. It is
       copied and deep-frozen at construction, so changes to the caller's dict never reach the
       spec and the stored value cannot be mutated at any depth.""",
    ),
    _c(
        "spec",
        "S3",
        "core",
        "Bad spec input raises at construction, naming the problem",
        """A name that is not a str (TypeError) or is blank (ValueError), a description that is
       not a str, parameters that are not a mapping, or a handler that is not callable raise
       at construction with a message naming the problem.""",
    ),
    _c(
        "spec",
        "S4",
        "strict",
        "parameters must be JSON data; errors name the JSON path",
        """parameters may hold only JSON data: str-keyed mappings, lists/tuples, str, int,
       finite float, bool and None. Anything else, a reference cycle, or nesting deeper than 64
       levels raises TypeError/ValueError naming the JSON path, never RecursionError.""",
    ),
    _c(
        "spec",
        "S5",
        "strict",
        "handler must be an async callable",
        """handler must be an async def function, an object whose __call__ is async def, or a
       functools.partial of either; a plain function raises TypeError at construction naming
       the tool and suggesting async def.""",
    ),
    _c(
        "spec",
        "S6",
        "core",
        "concurrency_safe is True, False or a plain callable; fail-closed",
        """concurrency_safe is True, False, or a plain (not async) callable taking the call's
       read-only arguments and answering whether this call may overlap other concurrency-safe
       calls; anything else raises TypeError at construction naming the tool. The default
       False makes a tool exclusive.""",
    ),
    # 4. The registry
    _c(
        "registry",
        "R1",
        "core",
        "ToolRegistry keeps registration order",
        """ToolRegistry(specs=()) keeps registration order, and names() and schema_for_model()
       follow it.""",
    ),
    _c(
        "registry",
        "R2",
        "core",
        "ToolRegistry rejects non-specs and duplicate names",
        """A non-ToolSpec item raises TypeError and a duplicate tool name raises ValueError
       naming it.""",
    ),
    _c(
        "registry",
        "R3",
        "core",
        "Registries compare by content and order; unhashable",
        """Two registries are equal when their specs are equal and in the same order, not by
       identity; registries are unhashable.""",
    ),
    _c(
        "registry",
        "R4",
        "core",
        "restrict_to returns a new registry in registration order",
        """restrict_to(names) returns a new registry in registration order whatever the order or
       type of names, leaves the original unchanged, carries every field (handlers included),
       and raises ValueError listing unknown and available names for any unknown name.""",
    ),
    _c(
        "registry",
        "R5",
        "core",
        "schema_for_model shows only name, description, parameters",
        """schema_for_model() returns, per tool in order, exactly name, description and
       parameters as fresh plain dicts and lists: mutating the result changes nothing and
       json.dumps always works.""",
    ),
    _c(
        "registry",
        "R6",
        "core",
        "Model-visible schema is deterministic across processes",
        """The same construction code yields byte-identical json.dumps(schema_for_model()) and
       names() under any PYTHONHASHSEED, including after restrict_to(a_set).""",
    ),
    _c(
        "registry",
        "R7",
        "core",
        "spec_for returns the spec or None",
        """spec_for(name) returns the spec, or None for an unknown name.""",
    ),
    _c(
        "registry",
        "R8",
        "core",
        "executor() names every spec that lacks a handler",
        """executor() raises ValueError naming all specs without a handler, otherwise returns a
       RegistryExecutor whose registry equals this registry.""",
    ),
    _c(
        "registry",
        "R9",
        "core",
        "batch_executor() checks handlers and max_concurrency",
        """batch_executor(*, max_concurrency=10) checks handlers as executor() does and
       max_concurrency (an int >= 1, not a bool: TypeError/ValueError naming it), and returns a
       RegistryBatchExecutor with .registry, .max_concurrency and parameters() ==
       {"tools": "a,b,c", "max_concurrency": "10"}.""",
    ),
    # 5. Validation
    _c(
        "validation",
        "V1",
        "core",
        "Validation never rejects what JSON Schema accepts",
        """Arguments that a full JSON Schema validator accepts for the tool's parameters, under
       the dialect the schema declares (draft-04 to 2020-12; 2020-12 when absent), are never
       rejected. Up to draft-07 a $ref makes its sibling keywords inert.""",
    ),
    _c(
        "validation",
        "V2",
        "core",
        "Unknown tool name is rejected, naming the tool",
        """A call naming a tool the registry does not have is rejected; the message names the
       tool and the visible tools: all of them, or the first 20 and a count of the rest when
       there are more (the kit checks that the tool and all visible tools, or 20 of them, are
       named).""",
    ),
    _c(
        "validation",
        "V3",
        "core",
        "Non-mapping arguments are rejected",
        """A call whose arguments are not a mapping is rejected.""",
    ),
    _c(
        "validation",
        "V4",
        "core",
        "Missing required keys are rejected, naming them",
        """A call missing a key listed in the schema's top-level required is rejected, and the
       message names the missing keys (of more than ten, the kit asks for at least ten: V8
       keeps messages short).""",
    ),
    _c(
        "validation",
        "V5",
        "core",
        "Keys outside a closed schema are rejected, naming them",
        """With additionalProperties false (and no patternProperties), a key not in properties is
       rejected and the message names the keys (of more than ten, at least ten).""",
    ),
    _c(
        "validation",
        "V6",
        "core",
        "Top-level property type mismatches are rejected",
        """A top-level property whose schema declares type and receives a value of another JSON
       type is rejected, with JSON semantics: bool is not a number, an integral float is an
       integer, a list of types means any of them, an unknown type name accepts anything.""",
    ),
    _c(
        "validation",
        "V7",
        "core",
        "Nothing else is checked before dispatch",
        """Nested schemas, enum, ranges, formats and combinators are not checked before
       dispatch: such calls reach the handler, which fails there and returns an ordinary
       observation (an executor may still reject them, E14).""",
    ),
    _c(
        "validation",
        "V8",
        "strict",
        "Rejections never echo argument values; under 2,000 chars",
        """Rejection messages name keys and type names but never echo argument values, and stay
       under 2,000 characters whatever the input; long names are shortened.""",
    ),
    # 6. Dispatch
    _c(
        "dispatch",
        "E1",
        "core",
        "An action without a tool call is NOT_EXECUTED",
        """An action that carries code instead of a tool call yields NOT_EXECUTED with a
       synthetic observation of the executor's own, and no handler runs.""",
    ),
    _c(
        "dispatch",
        "E2",
        "core",
        "A rejected call is NOT_EXECUTED with the rejection message",
        """A call that validation rejects yields NOT_EXECUTED with the rejection message as a
       synthetic observation, and no handler runs.""",
    ),
    _c(
        "dispatch",
        "E3",
        "core",
        "ToolEnvironmentError yields ENV_ERROR with str(exc)",
        """A handler that raises ToolEnvironmentError yields ENV_ERROR whose observation is
       str(exc), not synthetic.""",
    ),
    _c(
        "dispatch",
        "E4",
        "core",
        "Any other handler exception is an EXECUTED observation",
        """A handler that raises any other Exception yields EXECUTED with the observation
       "<ClassName>: <str(exc)>" (the name is type(exc).__name__), without a traceback, not
       synthetic.""",
    ),
    _c(
        "dispatch",
        "E5",
        "core",
        "A returned str is the observation, exactly",
        """A handler that returns a str yields EXECUTED with exactly that string as the
       observation, not synthetic.""",
    ),
    _c(
        "dispatch",
        "E6",
        "core",
        "CancelledError and other BaseExceptions propagate unchanged",
        """Cancellation, and any BaseException that is not an Exception, propagates out of
       execute unchanged; no outcome is produced.""",
    ),
    _c(
        "dispatch",
        "E7",
        "core",
        "No completion claim and no truncation on this path",
        """Every outcome has env_reported_completion False and observation_truncated_chars 0.""",
    ),
    _c(
        "dispatch",
        "E8",
        "core",
        "The handler is awaited once, with only the arguments",
        """For an accepted call the handler is awaited exactly once with a mapping equal to the
       call's arguments and nothing else; for E1/E2 it is never called.""",
    ),
    _c(
        "dispatch",
        "E9",
        "core",
        "A non-str return raises TypeError naming the tool",
        """A handler that returns something other than str makes execute raise TypeError naming
       the tool. Judged on honest values: None, numbers, bytes, lists, dicts, an object of a
       user class (a str subclass is a str, as isinstance sees it).""",
    ),
    _c(
        "dispatch",
        "E10",
        "core",
        "Only ToolEnvironmentError yields ENV_ERROR",
        """Only ToolEnvironmentError yields ENV_ERROR; a handler's ValueError, its own
       ToolValidationError or an OSError is an ordinary exception (E4).""",
    ),
    _c(
        "dispatch",
        "E11",
        "strict",
        "Concurrent calls give the same outcomes as sequential ones",
        """The executor is re-entrant: outcomes of concurrent execute calls on one executor
       equal those of the same calls run one at a time.""",
    ),
    _c(
        "dispatch",
        "E12",
        "strict",
        "An exception whose str() raises still gives an outcome",
        """An exception whose str() itself raises (with an Exception) gives an outcome whose
       whole observation is "<ClassName>: <exception str() failed>", never a crash; for a
       ToolEnvironmentError, whose observation is str(exc) (E3), the bare "<exception str()
       failed>" conforms too. A __str__ raising a BaseException is level hardened's.""",
    ),
    _c(
        "dispatch",
        "E13",
        "strict",
        "The handler gets its own plain dict",
        """The handler gets its own plain dict (nested dicts and lists) equal to the arguments;
       whatever it mutates reaches neither the recorded ToolCall nor any later call. Judged on
       JSON arguments; non-JSON leaves are level hardened's.""",
    ),
    _c(
        "dispatch",
        "E14",
        "core",
        "Calls only full JSON Schema rejects may go either way",
        """A call that full JSON Schema rejects but the subset accepts (an enum violation, say)
       may be dispatched (E3–E5 apply) or rejected (E2 applies); both conform.""",
    ),
    _c(
        "dispatch",
        "E15",
        "core",
        "The executor is an ActionExecutor",
        """execute is a coroutine function, every outcome is an ActionOutcome instance (not a
       look-alike), and parameters() returns a mapping of str to str, the same on every call; a
       RegistryExecutor returns exactly {"tools": "a,b,c"} (names in order, comma-joined).""",
    ),
    # 7. Run requests
    _c(
        "session",
        "N1",
        "core",
        "History shows the observation only for EXECUTED",
        """observation_for_history(outcome, synthetic) returns the executor's observation for
       EXECUTED and the configured synthetic text otherwise.""",
    ),
    _c(
        "session",
        "N2",
        "core",
        "RunRequest checks a RegistryExecutor's registry",
        """RunRequest raises ValueError if its executor is a RegistryExecutor whose registry does
       not equal tools (by content); any other executor is accepted.""",
    ),
    # 8. Tool authors' checks
    _c(
        "tools",
        "H1",
        "core",
        "The handler is async",
        """A tool's handler is an async callable (S5).""",
    ),
    _c(
        "tools",
        "H2",
        "core",
        "parameters is a valid 2020-12 schema of type object",
        """parameters passes the Draft 2020-12 metaschema and its top level is
       "type": "object".""",
    ),
    _c(
        "tools",
        "H3",
        "core",
        "The schema is satisfiable",
        """Some call can pass: the parameters schema is satisfiable.""",
    ),
    _c(
        "tools",
        "H4",
        "core",
        "Generated calls pass validation and the handler behaves",
        """For arguments generated from the tool's own schema, the subset validator accepts them
       and the handler returns a str or raises an Exception within the deadline.""",
    ),
    _c(
        "tools",
        "H5",
        "core",
        "The model-visible schema survives a JSON round trip",
        """json.loads(json.dumps(schema_for_model())) equals schema_for_model().""",
    ),
    _c(
        "tools",
        "H6",
        "core",
        "A SAFE tool replays to the same observation (opt-in)",
        """Opt-in: a tool declared SAFE returns the same observation when the same call is
       replayed.""",
    ),
    # 9. Public API evolution
    _c(
        "api",
        "M1",
        "core",
        "Public dataclasses are keyword-only",
        """Every public dataclass of the scanned package takes no positional constructor
       parameter besides self, except classes named in an allowlist.""",
    ),
    _c(
        "api",
        "M2",
        "core",
        "The keyword-only allowlist only shrinks",
        """An allowlist entry that names a missing class or a class that now complies fails the
       check.""",
    ),
    _c(
        "api",
        "M3",
        "core",
        "Dataclass fields are only appended, with defaults",
        """Against the committed baseline, a field may only be appended after the recorded ones
       and only with a default, unless the package's major version rose.""",
    ),
    _c(
        "api",
        "M4",
        "core",
        "What counts as public, and import failures fail the scan",
        """Public means a non-underscore class defined in a module with no underscore-prefixed
       part, or listed in a public module's __all__; modules that fail to import fail the check
       by name, and an empty scan fails.""",
    ),
    _c(
        "api",
        "M5",
        "core",
        "Keyword-only fields stay out of __match_args__",
        """Keyword-only fields are absent from __match_args__, and the baseline records
       __match_args__ so a change there is visible.""",
    ),
)

# 10. Batch dispatch, one row per clause: "ID level: title", then the indented summary. Kept as
# text so the eighteen rows fit the kit's module-size limit.
_BATCH_ROWS = """
B1 core: One outcome per call, in model order; an empty batch does nothing
    execute_batch returns a tuple of exactly len(actions) outcomes and out[i] answers call i. An
    empty batch returns () and calls no handler, classifier or journal method.

B2 core: Commits in model order, each as soon as its prefix is known
    With a journal, committed(i, out[i]) is called exactly once per call, in model order, as
    soon as outcomes 0..i are known; execute_batch never returns or raises CancelledError before
    every call is committed, and the committed outcome is the one returned.

B3 core: Calls are entered in model order
    When call j is entered, every accepted call i < j has been entered or resolved without
    entering.

B4 core: Each call's outcome is execute's
    A batch of one gives the same outcome (or raises the same exception) with the same handler
    calls as execute(action); in every batch each call's outcome follows the E table unless
    B13-B16 stop the batch first.

B5 core: Outcomes never depend on timing
    Outcomes, synthetic texts included, depend only on the batch, what each handler did and
    which calls had been entered when the batch stopped; no synthetic observation holds a time
    or duration.

B6 core: Only concurrency-safe calls overlap; exclusive calls run alone
    Two handlers overlap only if both calls are concurrency-safe. An exclusive call is entered
    only after every earlier call settled, and no later call is entered before it settles.

B7 core: At most max_concurrency handlers run
    At no moment do more than max_concurrency handlers of one batch run; with max_concurrency=1
    the batch is strictly sequential.

B8 core: Work-conserving: a freed slot is filled at once
    Unless the batch is stopping, at the start and whenever a running call settles, every next
    call that B3, B6 and B7 allow is entered: no fixed windows, no waiting for an unrelated
    call.

B9 core: Fail-closed classification, asked at most once, never for rejected calls
    The classifier is called at most once per accepted call, before that call is entered, with a
    read-only view of its arguments, and never for a rejected call; only an exact True makes a
    call concurrency-safe, and whatever it returns or raises changes scheduling only.

B10 core: Rejected calls take no slot and are no barrier
    A rejected call (E1, E2) is resolved NOT_EXECUTED in its position without entering a
    handler, taking a concurrency slot or acting as a barrier.

B11 core: Each handler gets its own copy of its arguments
    Each handler gets its own plain copy of its arguments (E13): what one handler mutates
    reaches neither a sibling nor any recorded call.

B12 core: An ordinary failure changes only its own outcome
    An ordinary handler exception (E4) or a rejection changes only that call's outcome: siblings
    run and end as if it had returned a string, and later calls are entered as usual.

B13 core: ENV_ERROR stops the batch; running calls finish
    An ENV_ERROR outcome stops the batch: nothing is entered afterwards, running handlers finish
    and keep their outcomes, and every accepted call not entered gets NOT_EXECUTED naming the
    lowest-indexed call whose outcome is ENV_ERROR.

B14 core: Cancellation drains started calls and commits every call
    On cancellation nothing is entered afterwards; running handlers are cancelled and awaited
    however often the batch is cancelled; calls not entered get "not run: the batch was
    cancelled", finished calls keep their outcome, calls ended by the cancellation get the
    ENV_ERROR "interrupted while running; its effects are unknown"; then CancelledError is
    raised, never swallowed, and no task the batch created outlives it.

B15 core: A handler's BaseException stops the batch and is re-raised
    A handler raising a BaseException that is not an Exception stops the batch like B14 (its own
    outcome is the "interrupted" one; calls not entered get "not run: call k raised <Class>"),
    and execute_batch re-raises that same exception object.

B16 core: A journal fault or a non-str result stops the batch without invented outcomes
    If the journal raises or a handler returns a non-str (E9), nothing is entered afterwards,
    running handlers are cancelled and awaited, and execute_batch raises that exception; no
    outcome is invented for an entered call and nothing more is committed.

B17 core: started(i) comes immediately before the handler is entered
    started(i, action) is called after call i is accepted and classified and immediately before
    its handler is entered, never for a rejected call; a call stopped while started(i) is
    awaited is entered and ends by the stop, or is committed as not run.

B18 strict: Concurrent batches are independent
    Concurrent execute_batch calls on one executor neither order nor limit each other
    (exclusivity and max_concurrency are per batch), and their outcomes equal those of the same
    batches run one after the other.
"""


def _batch_clauses() -> tuple[Clause, ...]:
    clauses = []
    for row in _BATCH_ROWS.strip().split("\n\n"):
        head, _, summary = row.partition("\n")
        clause_id, _, rest = head.partition(" ")
        level, _, title = rest.partition(": ")
        clauses.append(_c("batch", clause_id, level, title, summary))
    return tuple(clauses)


CLAUSES += _batch_clauses()

_BY_ID = {clause.id: clause for clause in CLAUSES}


def get(clause_id: str) -> Clause:
    """The clause with this ID; an unknown ID raises ValueError listing the known ones."""
    try:
        return _BY_ID[clause_id]
    except (KeyError, TypeError):
        known = ", ".join(clause.id for clause in CLAUSES)
        raise ValueError(f"unknown contract clause {clause_id!r}; known clauses: {known}") from None
