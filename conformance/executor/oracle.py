"""The outcome the contract expects, computed without the executor under test.

`expect(schemas, action, behaviour)` answers, for one action sent to an executor serving tools
with these parameter schemas and a handler scripted with `behaviour`, which outcomes conform.
Two sources decide it, neither of them the executor:

* what validation MUST reject (V2 unknown name, V3 non-mapping arguments, V4 missing required
  keys, V5 keys outside a closed ``properties``, V6 top-level type mismatches) — computed here
  from the contract's own rules, including the draft <= 07 rule that ``$ref`` makes its siblings
  inert;
* what it MUST accept (V1): everything `jsonschema` accepts under the schema's dialect.

A call in between — `jsonschema` rejects it, the subset need not — is E14 territory: the oracle
then returns both a rejection and the handler's outcome as acceptable.
"""

from __future__ import annotations

import asyncio
import enum
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance._core.dialect import ref_siblings_inert
from conformance._core.ground_truth import (
    JSON_TYPES,
    UnresolvedReference,
    accepts,
    closed_properties,
    depends_on_dialect_choice,
    effective_required,
    full_validator,
    json_types_of,
    typed_properties,
)
from conformance._core.text import STR_FAILED, exception_text, type_name
from conformance.executor import behaviours as bh
from conformance.executor.runner import Observed, exception_summary
from polyloop import Action, ActionOutcome, ActionStatus

__all__ = [
    "JSON_TYPES",
    "STR_FAILED",
    "CallVerdict",
    "Expectation",
    "Expected",
    "Observed",
    "Reason",
    "UnresolvedReference",
    "accepts",
    "closed_properties",
    "depends_on_dialect_choice",
    "effective_required",
    "expect",
    "full_validator",
    "json_types_of",
    "mentions",
    "mismatch",
    "must_reject",
    "plain_keys",
    "ref_siblings_inert",
    "schemas_of",
    "typed_properties",
]


class _ForeignKey:
    """Stands for a key that is not a str in `plain_keys`: equal only to itself, whatever the
    original key's ``__eq__`` does."""

    __slots__ = ("key",)

    def __init__(self, key: object) -> None:
        self.key = key


def plain_keys(arguments: Mapping[Any, Any]) -> dict[Any, Any]:
    """`arguments` with keys the oracle can compare safely (E2): a str subclass as the plain str
    it holds, any other non-str key as an object equal only to itself. A key whose own
    ``__eq__`` or ``__hash__`` is hostile then never runs (a hash shared with a required key
    would make ``"q" in arguments`` call it)."""
    plain: dict[Any, Any] = {}
    for key, value in arguments.items():
        if type(key) is str:
            plain[key] = value
        elif issubclass(type(key), str):  # not isinstance: a lying __class__ does not count
            plain[str.__str__(key)] = value
        else:
            plain[_ForeignKey(key)] = value
    return plain


@dataclass(frozen=True, kw_only=True)
class Reason:
    """Why validation must reject a call: the clause, a sentence, and what it must name."""

    clause: str
    detail: str
    names: tuple[str, ...] = ()


def must_reject(
    schemas: Mapping[str, Mapping[str, Any]], name: str, arguments: Any
) -> tuple[Reason, ...]:
    """Every reason the contract gives (V2–V6) for rejecting this call; empty if none."""
    if name not in schemas:
        return (Reason(clause="V2", detail="the tool name is unknown", names=(name,)),)
    if not isinstance(arguments, Mapping):
        return (
            Reason(
                clause="V3", detail=f"arguments are a {type(arguments).__name__}, not a mapping"
            ),
        )
    schema = schemas[name]
    if not isinstance(schema, Mapping):
        return ()
    arguments = plain_keys(arguments)
    reasons = []
    missing = tuple(key for key in effective_required(schema) if key not in arguments)
    if missing:
        reasons.append(Reason(clause="V4", detail="required keys are missing", names=missing))
    allowed = closed_properties(schema)
    if allowed is not None:
        extra = tuple(key for key in arguments if key not in allowed)
        if extra:
            # A non-str key is counted but not required by name: a message can only name it
            # by some repr of its own.
            named = tuple(key for key in extra if type(key) is str)
            reasons.append(Reason(clause="V5", detail="keys outside a closed schema", names=named))
    for key, types in typed_properties(schema).items():
        if key not in arguments:
            continue
        value = arguments[key]
        actual = json_types_of(value)
        if not actual or actual & types:
            continue  # json_types_of counts 3.0 as an integer: never a certain rejection
        reasons.append(
            Reason(
                clause="V6",
                detail=f"property {key!r} must be {' or '.join(sorted(types))}",
                names=(key,),
            )
        )
    return tuple(reasons)


@dataclass(frozen=True, kw_only=True)
class Expected:
    """One acceptable result of ``execute``: an outcome, or an exception it must raise."""

    clause: str
    """The contract row this alternative is (E1–E6, E9)."""
    statuses: frozenset[ActionStatus] = frozenset()
    """Acceptable statuses; empty when execute must raise instead of returning."""
    observation: str | None = None
    """The exact observation, or None for "non-empty text of the executor's own"."""
    synthetic: bool | None = None
    handler_calls: int | None = None
    """How often the handler runs; None when unknown (black-box)."""
    raises: type[BaseException] | None = None
    same_exception: bool = False
    """E6: execute must raise the very exception object the handler raised."""
    cancel_message: str | None = None
    """E6, a CancelledError: one carrying this message (the kit's cancellation, as delivered to
    execute) also counts as unchanged — a handler run in a child task (a task group,
    ``asyncio.shield``) sees a CancelledError of its own, while execute's is the kit's."""
    must_name: tuple[str, ...] = ()
    """Names the observation (or the exception message) must mention."""

    def describe(self) -> str:
        calls = "" if self.handler_calls is None else f"; handler called {self.handler_calls}x"
        if self.raises is not None:
            same = " (the handler's own exception object)" if self.same_exception else ""
            naming = f" naming {', '.join(map(repr, self.must_name))}" if self.must_name else ""
            return f"[{self.clause}] execute raises {self.raises.__name__}{same}{naming}{calls}"
        status = "|".join(sorted(s.name for s in self.statuses))
        text = (
            "the executor's own non-empty text"
            if self.observation is None
            else repr(self.observation)
            if len(self.observation) <= 200
            else repr(self.observation[:200]) + f"... ({len(self.observation)} chars)"
        )
        naming = f" naming {', '.join(map(repr, self.must_name))}" if self.must_name else ""
        synthetic = "" if self.synthetic is None else f", synthetic={self.synthetic}"
        return f"[{self.clause}] {status}, observation {text}{naming}{synthetic}{calls}"


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """What the contract allows for one action."""

    verdict: CallVerdict
    reasons: tuple[Reason, ...]
    alternatives: tuple[Expected, ...]

    def describe(self) -> str:
        return " OR ".join(alternative.describe() for alternative in self.alternatives)

    def rejection(self) -> Expected | None:
        return next((a for a in self.alternatives if a.clause == "E2"), None)

    def dispatched(self) -> tuple[Expected, ...]:
        return tuple(a for a in self.alternatives if a.clause not in ("E1", "E2"))


class CallVerdict(str, enum.Enum):
    """What the contract says about one action, before the executor runs it."""

    NO_TOOL_CALL = "no tool call"
    MUST_REJECT = "must reject"
    MUST_ACCEPT = "must accept"
    EITHER = "either"
    """Only full JSON Schema rejects the call: a rejection or a dispatch both conform (E14)."""


def mentions(text: str, name: str) -> bool:
    """Whether `text` names `name`: verbatim, escaped as repr or JSON would, or — when that
    form is long, which the contract lets messages shorten — by its first 16 characters."""
    forms = {name, repr(name)[1:-1], json.dumps(name)[1:-1], ascii(name)[1:-1]}
    forms |= {form[:16] for form in forms if len(form) > 32}
    return any(form in text for form in forms)


def _passed_on(
    clause: str, status: ActionStatus, observation: str, calls: int | None
) -> tuple[Expected, ...]:
    """The handler's own result, passed on as it is (E3-E5, E10, E12)."""
    return (
        Expected(
            clause=clause,
            statuses=frozenset({status}),
            observation=observation,
            synthetic=False,
            handler_calls=calls,
        ),
    )


def _dispatch_alternatives(
    behaviour: bh.Behaviour | None, tool: str, calls: int | None
) -> tuple[Expected, ...]:
    non_str = Expected(clause="E9", raises=TypeError, must_name=(tool,), handler_calls=calls)
    if behaviour is None:  # black-box: the real handler's result is unknown
        return (
            Expected(
                clause="E3-E5",
                statuses=frozenset({ActionStatus.EXECUTED, ActionStatus.ENV_ERROR}),
                synthetic=False,
                handler_calls=calls,
            ),
            non_str,
        )
    final = behaviour.final
    if isinstance(final, bh.ReturnText):
        return _passed_on("E5", ActionStatus.EXECUTED, final.text, calls)
    if isinstance(final, bh.EchoArguments):  # its text depends on what the handler got (E8)
        return (
            Expected(
                clause="E5",
                statuses=frozenset({ActionStatus.EXECUTED}),
                synthetic=False,
                handler_calls=calls,
            ),
        )
    if isinstance(final, bh.RaiseEnvironmentError):
        return _passed_on("E3", ActionStatus.ENV_ERROR, str(final.build()), calls)
    if isinstance(final, bh.RaiseError):
        exc = final.build()
        clause = "E10" if final.kind in bh.ENVIRONMENT_LIKE_ERROR_KINDS else "E4"
        return _passed_on(clause, ActionStatus.EXECUTED, f"{type_name(exc)}: {exc}", calls)
    if isinstance(final, bh.RaiseUnprintable):
        status = ActionStatus.ENV_ERROR if final.environment else ActionStatus.EXECUTED
        text = f"{type_name(final.build())}: {STR_FAILED}"
        return _passed_on("E12", status, text, calls)
    if isinstance(final, bh.ReturnNonStr):
        return (non_str,)
    if isinstance(final, bh.RaiseBaseException):
        raised = type(bh.BASE_EXCEPTION_KINDS[final.kind]())
        # Any other BaseException must arrive as the very object the handler raised. A
        # CancelledError a handler raises itself, in a child task of a correct executor
        # (``asyncio.shield``), becomes a new one when asyncio cancels the waiting parent, so
        # only its type can be required; a cancellation the kit delivers is checked exactly
        # (Suspend, below).
        same = raised is not asyncio.CancelledError
        return (Expected(clause="E6", raises=raised, handler_calls=calls, same_exception=same),)
    if isinstance(final, bh.Suspend):
        # With `finish` the handler returned, so it holds no CancelledError to hand back; and
        # an executor that re-raises the cancellation asyncio.wait_for swallowed (3.11:
        # Task.cancelling()) cannot recover the message: only the type is required.
        return (
            Expected(
                clause="E6",
                raises=asyncio.CancelledError,
                handler_calls=calls,
                same_exception=not final.finish,
                cancel_message=None if final.finish else bh.CANCEL_MESSAGE,
            ),
        )
    raise TypeError(f"the oracle does not know the behaviour {behaviour!r}")


def expect(
    schemas: Mapping[str, Mapping[str, Any]],
    action: Action,
    behaviour: bh.Behaviour | None,
    *,
    white_box: bool = True,
) -> Expectation:
    """The outcomes the contract allows when `action` is sent to an executor serving tools with
    these parameter schemas (name -> schema), whose handler is scripted with `behaviour` (None
    in black-box mode, where handlers are not the kit's)."""
    once, never = (1, 0) if white_box else (None, None)
    call = action.tool_call
    if call is None:
        return Expectation(
            verdict=CallVerdict.NO_TOOL_CALL,
            reasons=(),
            alternatives=(
                Expected(
                    clause="E1",
                    statuses=frozenset({ActionStatus.NOT_EXECUTED}),
                    synthetic=True,
                    handler_calls=never,
                ),
            ),
        )
    reasons = must_reject(schemas, call.name, call.arguments)
    naming = tuple(
        name for reason in reasons if reason.clause in ("V2", "V4", "V5") for name in reason.names
    )
    rejection = Expected(
        clause="E2",
        statuses=frozenset({ActionStatus.NOT_EXECUTED}),
        synthetic=True,
        handler_calls=never,
        must_name=naming,
    )
    if reasons:
        return Expectation(
            verdict=CallVerdict.MUST_REJECT, reasons=reasons, alternatives=(rejection,)
        )
    dispatched = _dispatch_alternatives(behaviour, call.name, once)
    if accepts(schemas[call.name], call.arguments) and not depends_on_dialect_choice(
        schemas[call.name], call.arguments
    ):
        return Expectation(verdict=CallVerdict.MUST_ACCEPT, reasons=(), alternatives=dispatched)
    return Expectation(
        verdict=CallVerdict.EITHER, reasons=(), alternatives=(rejection, *dispatched)
    )


def mismatch(expected: Expected, observed: Observed) -> str | None:
    """Why `observed` is not `expected`, or None when it is."""
    problems: list[str] = []
    if observed.timed_out is not None:
        return f"execute did not finish within {observed.timed_out:g}s"
    if (
        expected.handler_calls is not None
        and observed.calls is not None
        and len(observed.calls) != expected.handler_calls
    ):
        problems.append(f"the handler ran {len(observed.calls)}x, not {expected.handler_calls}x")
    if expected.raises is not None:
        if observed.raised is None:
            return "; ".join(
                [*problems, f"execute returned instead of raising {expected.raises.__name__}"]
            )
        if not isinstance(observed.raised, expected.raises):
            problems.append(
                f"execute raised {type_name(observed.raised)}, not {expected.raises.__name__}"
            )
        elif (
            expected.same_exception
            # Python 3.10: awaiting a task that ended in CancelledError raises a *new* one,
            # without the message, so an executor that runs the handler in its own task (a
            # correct design) cannot hand back the same object there: only the type counts.
            and (
                sys.version_info >= (3, 11)
                or not issubclass(expected.raises, asyncio.CancelledError)
            )
            and observed.calls is not None
            and not any(call.raised is observed.raised for call in observed.calls)
            and not (
                expected.cancel_message is not None
                and expected.cancel_message in observed.raised.args
            )
        ):
            original = next((call.raised for call in observed.calls if call.raised), None)
            lost = (
                f" (args {observed.raised.args!r}, the handler's {original.args!r})"
                if original is not None and original.args != observed.raised.args
                else ""
            )
            problems.append(f"execute raised a different exception object than the handler's{lost}")
        text = _safe_str(observed.raised)
        unnamed = [name for name in expected.must_name if not mentions(text, name)]
        if unnamed:
            problems.append(f"the exception message does not name {', '.join(map(repr, unnamed))}")
        return "; ".join(problems) or None
    if observed.raised is not None:
        return "; ".join([*problems, f"execute raised {exception_summary(observed.raised)}"])
    outcome = observed.outcome
    if not isinstance(outcome, ActionOutcome):
        return "; ".join(
            [*problems, f"execute returned {type(outcome).__name__}, not an ActionOutcome"]
        )
    if outcome.status not in expected.statuses:
        problems.append(f"status {outcome.status.name}")
    if expected.observation is not None and outcome.observation != expected.observation:
        problems.append("a different observation")
    if expected.observation is None and not (
        isinstance(outcome.observation, str) and outcome.observation.strip()
    ):
        problems.append("an empty observation")
    if (
        expected.synthetic is not None
        and outcome.observation_is_synthetic is not expected.synthetic
    ):
        problems.append(f"observation_is_synthetic={outcome.observation_is_synthetic!r}")
    unnamed = [
        name
        for name in expected.must_name
        if not (isinstance(outcome.observation, str) and mentions(outcome.observation, name))
    ]
    if unnamed:
        problems.append(f"the observation does not name {', '.join(map(repr, unnamed))}")
    return "; ".join(problems) or None


def _safe_str(exc: BaseException) -> str:
    text = exception_text(exc)
    return "" if text == STR_FAILED else text


def schemas_of(tools: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """name -> plain parameters schema, for ToolSpecs, ToolDefs or a ToolRegistry."""
    return {tool.name: bh.plain_copy(tool.parameters) for tool in tools}
