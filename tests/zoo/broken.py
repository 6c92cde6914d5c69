"""Broken executors: each is the correct `ZooExecutor` with one deliberate bug.

`VIOLATES` names exactly the clauses `certify` must report failing for the executor — no more
(the bug must not spill into unrelated clauses) and no fewer (the kit must see it). Where one bug
necessarily breaks more than one clause, the docstring says why each is in the set.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import traceback
from collections.abc import Container, Coroutine, Mapping
from typing import Any, ClassVar

import jsonschema
from jsonschema import validators

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

from .base import ZooExecutor, shorten, thaw

# --- dispatch: outcomes -------------------------------------------------------------------------


class NoToolCallExecuted(ZooExecutor):
    """An action without a tool call is reported as executed (E1 wants NOT_EXECUTED)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E1",)

    def no_tool_call_outcome(self, action: Action) -> ActionOutcome:
        return self.outcome(ActionStatus.EXECUTED, "nothing to do", False)


class NoToolCallNotSynthetic(ZooExecutor):
    """Right status for a code action, but the sentence is flagged as the environment's (E1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E1",)

    def no_tool_call_outcome(self, action: Action) -> ActionOutcome:
        return self.outcome(ActionStatus.NOT_EXECUTED, "no tool call", False)


class RejectionNotSynthetic(ZooExecutor):
    """A validation rejection claims to be the environment's text (E2 wants synthetic)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E2",)

    async def rejected_outcome(self, call: ToolCall, exc: ToolValidationError) -> ActionOutcome:
        return self.outcome(ActionStatus.NOT_EXECUTED, str(exc), False)


class EnvErrorPrefixed(ZooExecutor):
    """ENV_ERROR observation is ``"ToolEnvironmentError: ..."`` instead of ``str(exc)`` (E3)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E3",)

    def env_error_text(self, exc: Exception) -> str:
        return self.exception_text(exc)


class EnvErrorAsNotExecuted(ZooExecutor):
    """A broken environment is reported as "not executed", so it looks like the model's fault."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E3",)

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, ToolEnvironmentError):
            return self.outcome(ActionStatus.NOT_EXECUTED, self.env_error_text(exc), True)
        return super().exception_outcome(spec, exc)


class LeaksTraceback(ZooExecutor):
    """The observation of a failing handler carries the whole traceback (E4: no traceback;
    E12: the whole observation is "<ClassName>: <exception str() failed>", issue 18)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4", "E12")

    def exception_text(self, exc: Exception) -> str:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return f"{super().exception_text(exc)}\n{trace}"


class ExceptionMessageOnly(ZooExecutor):
    """Drops the exception's class name: ``"boom"`` instead of ``"RuntimeError: boom"`` (E4)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4",)

    def exception_text(self, exc: Exception) -> str:
        return super().exception_text(exc).split(": ", 1)[1]


class StripsObservation(ZooExecutor):
    """Trims whitespace around the handler's text (E5: exactly that string)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        outcome = super().result_outcome(spec, result)
        return self.outcome(outcome.status, outcome.observation.strip(), False)


class TruncatesObservation(ZooExecutor):
    """Silently cuts long observations and still reports 0 truncated characters (E5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)
    LIMIT = 20

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        outcome = super().result_outcome(spec, result)
        return self.outcome(outcome.status, outcome.observation[: self.LIMIT], False)


class SwallowsCancellation(ZooExecutor):
    """Turns a cancelled handler into an ordinary observation (E6: must propagate)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E6",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        try:
            return await super().invoke(spec, arguments)
        except asyncio.CancelledError:
            return "cancelled"


class CatchesBaseException(ZooExecutor):
    """``except BaseException`` around the handler: cancellation and exits become observations."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E6",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        try:
            return await super().invoke(spec, arguments)
        except Exception:
            raise
        except BaseException as exc:  # the bug
            return f"{type(exc).__name__}: {exc}"


class ReportsCompletion(ZooExecutor):
    """Claims the environment reported the goal reached on every outcome (E7)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E7",)

    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
        return ActionOutcome(
            status=status,
            observation=observation,
            observation_is_synthetic=synthetic,
            env_reported_completion=True,
            observation_truncated_chars=0,
        )


class ReportsTruncation(ZooExecutor):
    """Reports a non-zero truncation count for executed outcomes though nothing was cut (E7)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E7",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        outcome = super().result_outcome(spec, result)
        return ActionOutcome(
            status=outcome.status,
            observation=outcome.observation,
            observation_is_synthetic=False,
            env_reported_completion=False,
            observation_truncated_chars=1,
        )


class CallsHandlerTwice(ZooExecutor):
    """Awaits the handler a second time (a "warm-up" call) and keeps the second result (E8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        first = await super().invoke(spec, thaw(arguments))
        del first
        return await super().invoke(spec, arguments)


class CallsHandlerOnRejectedCall(ZooExecutor):
    """Runs the handler "to see what happens" before returning the correct rejection (E8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    async def rejected_outcome(self, call: ToolCall, exc: ToolValidationError) -> ActionOutcome:
        spec = self.registry.spec_for(call.name)
        if spec is not None and spec.handler is not None:
            with contextlib.suppress(Exception):
                await spec.handler(thaw(call.arguments))
        return await super().rejected_outcome(call, exc)


class HandlerGetsToolCall(ZooExecutor):
    """Passes the whole call (name and arguments) instead of only the arguments (E8).

    The handler sees a ``{"name": ..., "arguments": {...}}`` dict: a plain dict, so E13 holds,
    but not one equal to the call's arguments.
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def handler_arguments(self, call: ToolCall) -> object:
        return {"name": call.name, "arguments": thaw(call.arguments)}


class StringifiesResult(ZooExecutor):
    """Quietly ``str()``s a non-str return value instead of raising TypeError (E9)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E9",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        return super().result_outcome(spec, str(result))


class CatchesValueError(ZooExecutor):
    """Treats a handler's ValueError as "invalid arguments" (the bug the contract warns about).

    E10 is the clause for it: a handler's ValueError (and its own ToolValidationError) must be
    ordinary exceptions. Other exceptions (RuntimeError, KeyError, ...) are untouched, so E4's
    own cases still pass.
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("E10",)

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, ValueError):
            return self.outcome(
                ActionStatus.NOT_EXECUTED, f"invalid arguments for tool {spec.name!r}", True
            )
        return super().exception_outcome(spec, exc)


class HandlerValidationErrorIsRejection(ZooExecutor):
    """A ToolValidationError raised *by the handler* becomes a rejection (E10)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E10",)

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, ToolValidationError):
            return self.outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        return super().exception_outcome(spec, exc)


class EverythingIsEnvError(ZooExecutor):
    """Every handler exception is reported as a broken environment (E10, and E4's outcome)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4", "E10")

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        return self.outcome(ActionStatus.ENV_ERROR, self.env_error_text(exc), False)


class SharedResultSlot(ZooExecutor):
    """Keeps the in-flight result on ``self``, so concurrent calls read each other's (E11)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E11",)

    def __init__(self, registry: Any) -> None:
        super().__init__(registry)
        self._last: object = None

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        self._last = await super().invoke(spec, arguments)
        await asyncio.sleep(0)  # e.g. an audit write; any await lets another call overwrite it
        return self._last


class CrashesOnUnprintableException(ZooExecutor):
    """Calls ``str(exc)`` unguarded, so an exception whose ``__str__`` raises escapes (E12)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E12",)

    def exception_text(self, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"

    def env_error_text(self, exc: Exception) -> str:
        return str(exc)


class PassesFrozenArguments(ZooExecutor):
    """Hands the handler the recorded (read-only) arguments instead of its own dict (E13)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def handler_arguments(self, call: ToolCall) -> object:
        return call.arguments


class ShallowCopiesArguments(ZooExecutor):
    """``dict(arguments)``: the top level is plain, nested values stay read-only views (E13)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def handler_arguments(self, call: ToolCall) -> object:
        return dict(call.arguments)


class ReusesArgumentDicts(ZooExecutor):
    """Caches the thawed arguments per (tool, arguments): a mutation leaks to later calls (E13)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def __init__(self, registry: Any) -> None:
        super().__init__(registry)
        self._cache: dict[str, object] = {}

    def handler_arguments(self, call: ToolCall) -> object:
        try:
            key = json.dumps([call.name, thaw(call.arguments)], sort_keys=True, default=repr)
        except (TypeError, ValueError):
            return super().handler_arguments(call)
        if key not in self._cache:
            self._cache[key] = super().handler_arguments(call)
        return self._cache[key]


# --- validation ---------------------------------------------------------------------------------


class UnknownToolMessageOmitsTools(ZooExecutor):
    """Rejects an unknown tool but never says which tools exist (V2)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V2",)

    def unknown_tool_message(self, call: ToolCall) -> str:
        return "unknown tool"


class UnknownToolMessageOmitsVisibleTools(ZooExecutor):
    """Names the unknown tool but not the tools that exist, so the model cannot recover (V2)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V2",)

    def unknown_tool_message(self, call: ToolCall) -> str:
        return f"unknown tool {call.name[:60]!r}"


class DispatchesNonMappingArguments(ZooExecutor):
    """Lets a non-object ``arguments`` through to the handler (V3)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V3",)

    def validate(self, call: ToolCall) -> None:
        if not isinstance(call.arguments, Mapping):
            self.check_name(call)
            return
        super().validate(call)


class IgnoresRequired(ZooExecutor):
    """Never checks ``required`` (V4)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V4",)

    def check_required(self, schema: Any, arguments: Any) -> str | None:
        return None


class RequiredMessageOmitsKeys(ZooExecutor):
    """Rejects a missing required key without naming it (V4: "naming the missing keys")."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V4",)

    def check_required(self, schema: Any, arguments: Any) -> str | None:
        if super().check_required(schema, arguments) is None:
            return None
        return "some required arguments are missing"


class IgnoresAdditionalPropertiesFalse(ZooExecutor):
    """Never checks ``additionalProperties: false`` (V5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V5",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return False


class AdditionalDespitePatternProperties(ZooExecutor):
    """Enforces ``additionalProperties: false`` even when ``patternProperties`` is present.

    A key matched only by a pattern is then rejected though JSON Schema accepts it: a false
    rejection (V1). V5's "skipped when patternProperties is present" exists only to prevent
    exactly that; rejecting a key no pattern matches is sound (and allowed by E14), so V5 itself
    is not broken in any observable way.
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return schema.get("additionalProperties") is False


class AcceptsBoolForInteger(ZooExecutor):
    """Python's ``isinstance(True, int)``: a boolean passes as an integer/number (V6)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name in ("integer", "number") and isinstance(value, bool):
            return True
        return super().type_matches(value, type_name)


class RejectsIntegralFloat(ZooExecutor):
    """``3.0`` is refused for ``"type": "integer"`` — JSON Schema (draft-06+) accepts it (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name == "integer" and isinstance(value, float):
            return False
        return super().type_matches(value, type_name)


class ChecksTypeBesideRef(ZooExecutor):
    """Checks ``type`` next to ``$ref`` under draft-07, where the sibling is inert (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        return super().check_types(schema, arguments, "modern")


class FirstListedTypeOnly(ZooExecutor):
    """For ``"type": ["string", "null"]`` only the first name counts (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def value_has_type(self, value: object, declared: object) -> bool:
        if isinstance(declared, (list, tuple)) and declared:
            declared = declared[0]
        return super().value_has_type(value, declared)


class UnknownTypeRejects(ZooExecutor):
    """An unknown type name (``"dict"``, ``"float"``) accepts nothing instead of everything (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    KNOWN = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name not in self.KNOWN:
            return False
        return super().type_matches(value, type_name)


class EchoesArgumentValues(ZooExecutor):
    """Rejection messages quote the offending arguments, values included (V8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V8",)

    def validate(self, call: ToolCall) -> None:
        try:
            super().validate(call)
        except ToolValidationError as exc:
            raise ToolValidationError(f"{exc} (arguments: {thaw(call.arguments)!r})") from None


class UnboundedRejectionMessage(ZooExecutor):
    """Lists every offending key and tool in full, however many and however long (V8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V8",)

    def unknown_tool_message(self, call: ToolCall) -> str:
        return f"unknown tool {call.name!r}; available tools: {', '.join(self.registry.names())}"

    def rejection_text(self, call: ToolCall, problems: list[str]) -> str:
        return f"invalid arguments for tool {call.name!r}: " + "; ".join(problems)

    def check_required(self, schema: Any, arguments: Any) -> str | None:
        if super().check_required(schema, arguments) is None:
            return None
        missing = [repr(k) for k in schema["required"] if k not in arguments]
        return f"missing required arguments: {', '.join(missing)}"

    def check_additional(self, schema: Any, arguments: Any) -> str | None:
        if super().check_additional(schema, arguments) is None:
            return None
        properties = schema.get("properties")
        known = properties if isinstance(properties, Mapping) else {}
        return "unexpected arguments: " + ", ".join(repr(k) for k in arguments if k not in known)


def _full_schema_rejects(registry: ToolRegistry, call: ToolCall) -> bool:
    """Whether full JSON Schema rejects a call the subset accepts (a V7/E14 call)."""
    spec = registry.spec_for(call.name)
    if spec is None:
        return False
    schema = thaw(spec.parameters)
    try:
        cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        return not cls(schema).is_valid(thaw(call.arguments))
    except Exception:
        return False


class _BeyondSubset(ZooExecutor):
    """Shared by the V7 and E14 entries: spots a call only full JSON Schema rejects."""

    def beyond_subset(self, action: Action) -> ToolCall | None:
        call = action.tool_call
        if call is None:
            return None
        try:
            self.validate(call)
        except ToolValidationError:
            return None
        return call if _full_schema_rejects(self.registry, call) else None


class AnswersBeyondSubsetItself(_BeyondSubset):
    """A call only full JSON Schema rejects gets a made-up EXECUTED outcome; its handler never
    runs (V7: such errors reach the handler)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V7",)

    async def execute(self, action: Action) -> ActionOutcome:
        if self.beyond_subset(action) is not None:
            return self.outcome(ActionStatus.EXECUTED, "the arguments do not fit the schema", False)
        return await super().execute(action)


class BeyondSubsetReturnsRawResult(_BeyondSubset):
    """A call only full JSON Schema rejects runs its handler, but the raw result (or the
    handler's exception) comes back instead of an `ActionOutcome` (E14: rejected or
    dispatched, nothing else)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E14",)

    async def execute(self, action: Action) -> ActionOutcome:
        call = self.beyond_subset(action)
        if call is None:
            return await super().execute(action)
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        result: Any = await self.invoke(spec, self.handler_arguments(call))
        return result  # type: ignore[no-any-return]


class ExecuteNotACoroutineFunction(ZooExecutor):
    """``execute`` is a plain method that returns the coroutine of another: awaitable, and
    every outcome is right, but an ActionExecutor's ``execute`` is a coroutine function (E15)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def execute(self, action: Action) -> Coroutine[Any, Any, ActionOutcome]:  # type: ignore[override]
        return self._execute(action)

    async def _execute(self, action: Action) -> ActionOutcome:
        return await super().execute(action)


# ---- issue 10: gaps found by mutation analysis
# Each reproduces what a surviving mutant of polyloop/tools.py or polyloop/_json.py did to the
# observable behaviour (docs/detection.md); the kit's property was strengthened to catch it.


class StrSystemExitEscapes(ZooExecutor):
    """An exception whose ``__str__`` raises ``SystemExit`` (or any non-``Exception``) crashes
    ``execute`` instead of giving "<Name>: <exception str() failed>" (E12).

    The mutants of ``_exception_text`` that narrow ``except BaseException`` to ``except
    Exception``."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E12",)

    def exception_str(self, exc: Exception) -> str | None:
        try:
            return str(exc)
        except Exception:  # the bug: a SystemExit from __str__ escapes execute
            return None


class ExceptionNameCrashes(ZooExecutor):
    """An exception class whose ``__name__`` raises (a metaclass property) crashes ``execute``
    instead of giving "<RealName>: <message>" (E4).

    The mutants of ``_exception_name`` that read ``type(exc).__name__`` unguarded."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4",)

    def exception_name(self, exc: Exception) -> str:
        return type(exc).__name__  # the bug: __name__ itself may raise


class ClaimedStrAccepted(ZooExecutor):
    """A handler result whose ``__class__`` claims ``str`` passes ``isinstance`` and then fails
    in ``str.__str__`` with a TypeError that does not name the tool (E9).

    The mutants of ``RegistryExecutor.execute`` that test the result with ``isinstance``
    instead of ``issubclass(type(result), str)``."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E9",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        if isinstance(result, str):  # the bug: isinstance believes __class__
            return self.outcome(ActionStatus.EXECUTED, str.__str__(result), False)
        return super().result_outcome(spec, result)


class NonJsonLeavesShared(ZooExecutor):
    """Leaves and keys that are not JSON scalars (a set of mutable objects, a str subclass with
    attributes, an object key) reach the handler by reference, so its mutation reaches the
    recorded call and every later call (E13).

    The mutants of ``thaw``/``thaw_arguments``/``_copy_leaf`` that skip the deep copy of such
    leaves."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def handler_arguments(self, call: ToolCall) -> object:
        return thaw(call.arguments, leaf=lambda value: value)  # the bug: leaves are shared


class HostileKeyCrashesValidation(ZooExecutor):
    """A mapping key whose ``__eq__`` raises (hashed like a required key) makes validation
    raise that error out of ``execute`` instead of rejecting the call (E2).

    The mutants of ``_CompiledTool.problem`` that drop the guard around the checks and of
    ``_plain_key`` that compare keys with their own ``__eq__``."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E2",)

    def present_keys(self, arguments: Mapping[Any, object]) -> Container[object]:
        return arguments  # the bug: `in` runs the hostile key's own __eq__


class FalseTypeComplaint(ZooExecutor):
    """When a call is rejected for another reason, a property whose ``type`` is a list is judged
    by the first listed type only, so a valid value of a later type (null for
    ``["integer", "null"]``) is named as wrong in the message (V6).

    The ``_type_rule`` mutant ``if len(names) == 1`` -> ``if not len(names) == 1``: the
    subset's fast path still accepts every valid call, only the rejection message lies."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)

    def validate(self, call: ToolCall) -> None:
        try:
            super().validate(call)
        except ToolValidationError as exc:
            accused = self._first_type_accusations(call)
            if not accused or "must be" in str(exc):
                raise
            raise ToolValidationError(f"{exc}; " + "; ".join(accused)) from None

    def _first_type_accusations(self, call: ToolCall) -> list[str]:
        spec = self.registry.spec_for(call.name)
        properties = spec.parameters.get("properties") if spec is not None else None
        if not isinstance(properties, Mapping) or not isinstance(call.arguments, Mapping):
            return []
        accused = []
        for key, value in call.arguments.items():
            prop = properties.get(key)
            declared = prop.get("type") if isinstance(prop, Mapping) else None
            if isinstance(declared, (list, tuple)) and len(declared) > 1:
                first = declared[0]  # the bug: only the first listed type counts
                if isinstance(first, str) and not self.type_matches(value, first):
                    accused.append(
                        f"{shorten(repr(key), 40)} must be {first!r}, "
                        f"got {self.json_type_name(value)}"
                    )
        return accused


def _is_json(value: object) -> bool:
    if isinstance(value, Mapping):
        return all(type(key) is str and _is_json(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return all(_is_json(item) for item in value)
    return value is None or type(value) in (str, int, float, bool)


class NonJsonLeavesAsText(ZooExecutor):
    """Non-JSON leaves reach the handler as their ``str()`` (as a ``json.dumps(...,
    default=str)`` round trip would make them), so the handler does not get arguments equal to
    the call's (E13: its own plain dict *equal to the arguments*).

    The ``thaw`` mutants that turn every leaf into a set (``if not type(value) is
    frozenset``): E8's calls hold JSON only, so E13 must judge the hand-over itself."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def handler_arguments(self, call: ToolCall) -> object:
        return thaw(call.arguments, leaf=lambda value: value if _is_json(value) else str(value))


class NonJsonLeavesNeverHandedOver(ZooExecutor):
    """A call whose arguments hold a non-JSON leaf never reaches its handler: the executor
    answers with an error observation of its own (E13: the handler gets its own copy).

    The ``thaw`` mutants whose comparison of types raises (``type(value) > frozenset``): the
    ``TypeError`` is caught around the handler call, which never happens."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        if not _is_json(arguments):
            raise TypeError("'>' not supported between instances of 'type' and 'type'")
        return await super().invoke(spec, arguments)


class FlatCallsShareObjectKeys(ZooExecutor):
    """A fast path for calls whose values are all scalars hands over a shallow copy, judging
    only the values: a key that is not a ``str`` (an object) is shared with the handler, whose
    mutation of it reaches the recorded call (E13).

    The ``thaw_arguments`` mutants ``type(key) is not str`` -> ``is str`` / ``== str``."""

    LEVEL = "hardened"

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)

    def handler_arguments(self, call: ToolCall) -> object:
        if all(
            type(item) in (str, int, float, bool, type(None)) for item in call.arguments.values()
        ):
            return dict(call.arguments)  # the bug: the keys are not looked at
        return super().handler_arguments(call)


class NamesOnlyFiveKeys(ZooExecutor):
    """A rejection lists at most five missing, unexpected or mistyped keys ("and 7 more"),
    where the contract owes all of them and the kit, since V8 keeps messages short, the first
    ten (V4, V5, V6).

    The ``_quoted_list`` mutant ``limit: int = 10`` -> ``9`` and the ``_describe`` mutant
    ``wrong[:10]`` -> ``wrong[:9]``: only a call with more than nine such keys shows them."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V4", "V5", "V6")
    NAMES_SHOWN = 5  # the bug


class RegistryPropertyGivesNames(RegistryExecutor):
    """A RegistryExecutor whose ``.registry`` gives the tool names, not the registry it
    dispatches to (E15: a RegistryExecutor holds its registry, so a run request can check it).

    The mutant that drops ``@property`` from ``RegistryExecutor.registry``."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)
    KNOWN_MISS: ClassVar[str | None] = None

    @property
    def registry(self) -> Any:  # type: ignore[override]
        return tuple(super().registry.names())


# ---- issue 18: gaps an independent broken set (tests/specificity/broken) exposed ----------


class RequiredOnlyAmongProperties(ZooExecutor):
    """Checks only the required keys ``properties`` describes: a required key the schema does
    not list under ``properties`` may be missing (V4 says any key listed in ``required``)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V4",)

    def check_required(
        self, schema: Mapping[str, object], arguments: Mapping[str, object]
    ) -> str | None:
        properties = schema.get("properties")
        listed = properties if isinstance(properties, Mapping) else {}
        narrowed = {**schema, "required": [k for k in schema.get("required") or () if k in listed]}  # type: ignore[attr-defined]
        return super().check_required(narrowed, arguments)


class ClosedNeedsProperties(ZooExecutor):
    """Closes a schema only when it has ``properties``: ``additionalProperties: false`` with
    none (or ``{}``) lets every key through (V5: no key is in ``properties`` then)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V5",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return bool(schema.get("properties")) and super().additional_applies(schema)


class SharedArgumentBuffer(ZooExecutor):
    """Reuses one dict for every call's arguments: concurrent calls whose handlers read their
    arguments after an ``await`` see the other call's (E11)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E11",)

    def __init__(self, registry: Any) -> None:
        super().__init__(registry)
        self._buffer: dict[str, object] = {}

    def handler_arguments(self, call: ToolCall) -> object:
        self._buffer.clear()
        self._buffer.update(thaw(call.arguments))  # type: ignore[arg-type]
        return self._buffer


class ParametersCountCalls(ZooExecutor):
    """``parameters()`` reports how many calls ran: two reads with no ``execute`` between them
    agree, but it changes once ``execute`` ran (E15: the same on every call)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def __init__(self, registry: Any) -> None:
        super().__init__(registry)
        self._calls = 0

    def parameters(self) -> Mapping[str, str]:
        return {**super().parameters(), "calls": str(self._calls)}

    async def execute(self, action: Action) -> ActionOutcome:
        self._calls += 1
        return await super().execute(action)


class KeepsResultOfLateCancel(ZooExecutor):
    """Runs the handler as a task and, when cancelled after that task finished, returns its
    result instead of re-raising (E6: what ``asyncio.wait_for`` does before 3.12)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E6",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        inner = super().invoke

        async def boxed() -> tuple[bool, object]:
            # A KeyboardInterrupt raised in a task of its own escapes the event loop itself
            # (3.10), not `execute`: carry it back as a value and raise it here.
            try:
                return False, await inner(spec, arguments)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                return True, exc

        task = asyncio.ensure_future(boxed())
        try:
            raised, value = await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done() or task.cancelled():
                task.cancel()
                raise
            raised, value = task.result()
        if raised:
            assert isinstance(value, BaseException)
            raise value
        return value


class FallbackWithoutClassName(ZooExecutor):
    """Says only ``<exception str() failed>`` for an ordinary exception whose ``str()`` raises,
    without the class name (E12 asks for the whole line)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E12",)

    def exception_text(self, exc: Exception) -> str:
        text = self.exception_str(exc)
        return "<exception str() failed>" if text is None else super().exception_text(exc)


BROKEN: tuple[type[Any], ...] = tuple(
    cls
    for cls in list(globals().values())
    if isinstance(cls, type)
    and issubclass(cls, (ZooExecutor, RegistryExecutor))
    and cls not in (ZooExecutor, RegistryExecutor)
    and not cls.__name__.startswith("_")
)
"""Every broken executor, in definition order."""
