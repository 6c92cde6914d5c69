"""Broken executors for the blind spots the independent zoo of issue 9 found.

Each is a realistic integrator bug in one hook of the correct `ZooExecutor` (or, for E15, of
polyloop's own `RegistryExecutor`), and `VIOLATES` names exactly the clauses it breaks. Where
the kit does not see the bug yet, `KNOWN_MISS` says why (then its test in
``tests/kit/test_zoo_independent.py`` is a strict xfail; a non-strict one where
`KNOWN_UNSTABLE` says the verdict depends on the process or the Hypothesis version, not only
on the seed). The measurements behind those notes are in ``independent_analysis.md``;
``python tests/zoo/measure_independent.py`` repeats them.

Some entries keep state beyond one executor (a class attribute or a factory object): that is
their bug. Such state lives in the entry itself, never at module level.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeGuard

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ReplayPolicy,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

from .base import ZooExecutor, shorten, thaw

# --- dialects -----------------------------------------------------------------------------------


class LegacyDialectOnlyWithHash(ZooExecutor):
    """Recognises draft-04/06/07 only by the exact ``$schema`` URI ending in ``#``.

    ``"http://json-schema.org/draft-07/schema"`` (no ``#``, which jsonschema accepts as
    draft-07) is then taken for 2020-12, so a ``type`` beside a property's ``$ref`` is checked
    although it is inert there: a call JSON Schema accepts is rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)
    LEGACY = frozenset(f"http://json-schema.org/draft-0{n}/schema#" for n in (3, 4, 6, 7))

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        declared = schema.get("$schema")
        modern = declared is None or declared not in self.LEGACY
        return super().check_types(schema, arguments, "modern" if modern else dialect)


class RefSilencesSiblingsOnlyInDraft07(ZooExecutor):
    """Applies the "``$ref`` silences its siblings" rule only when ``$schema`` says draft-07.

    Draft-04 and draft-06 have the same rule, so a ``type`` beside a property's ``$ref`` is
    wrongly checked there and a valid call is rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        declared = str(schema.get("$schema", ""))
        return super().check_types(
            schema, arguments, dialect if "draft-07" in declared else "modern"
        )


class RefSilencesSiblingsInEveryDialect(ZooExecutor):
    """Treats a ``type`` beside a property's ``$ref`` as inert in every dialect.

    From 2019-09 on the sibling applies, so a wrong JSON type for such a property is let
    through to the handler: V6 requires the rejection.
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        return super().check_types(schema, arguments, "legacy")


# --- closed objects -----------------------------------------------------------------------------


class FalsyAdditionalPropertiesCloses(ZooExecutor):
    """``if not schema.get("additionalProperties", True)``: the empty schema ``{}`` is falsy.

    ``additionalProperties: {}`` allows every extra key, yet they are rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return not schema.get("additionalProperties", True) and "patternProperties" not in schema


class AdditionalPropertiesSchemaCloses(ZooExecutor):
    """Any ``additionalProperties`` other than ``true`` closes the object.

    ``{"type": "string"}`` (or ``{}``) allows extra keys of that type, yet every extra key is
    rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        extra = schema.get("additionalProperties", True)
        return extra is not True and "patternProperties" not in schema


class PatternPropertiesAnchoredMatch(ZooExecutor):
    """Enforces ``additionalProperties: false`` beside ``patternProperties``, exempting keys a
    pattern matches, but with ``re.match`` (anchored at the start) instead of a search.

    ``"user_id"`` matches ``"_id$"`` by JSON Schema's (search) semantics but not by
    ``re.match``, so a valid key is rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return schema.get("additionalProperties") is False

    def allowed_key(self, schema: Mapping[str, object]) -> Callable[[str], bool] | None:
        declared = super().allowed_key(schema)
        patterns = schema.get("patternProperties")
        try:
            regexes = [re.compile(p) for p in (patterns if isinstance(patterns, Mapping) else {})]
        except (re.error, TypeError):
            return None
        if declared is None:
            return None
        return lambda key: declared(key) or any(rx.match(key) for rx in regexes)


# --- numbers ------------------------------------------------------------------------------------


class IntegralFloatByDecimalText(ZooExecutor):
    """Decides whether a float is integral from its text: ``repr(value)`` must end in ``.0``.

    ``1e16`` and ``1e300`` are integral floats (JSON Schema integers, draft-06+) but their
    repr is ``1e+16``, so they are refused for ``"type": "integer"`` (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name == "integer" and isinstance(value, float):
            return bool(re.fullmatch(r"-?\d+\.0", repr(value)))
        return super().type_matches(value, type_name)


def _numeric_int(value: object, type_name: str) -> TypeGuard[int]:
    """A Python int (not a bool) checked against ``integer`` or ``number``: where the two
    bugs below part from JSON Schema's unbounded integers."""
    return (
        type_name in ("integer", "number")
        and isinstance(value, int)
        and not isinstance(value, bool)
    )


class IntegersLimitedTo64Bits(ZooExecutor):
    """An integer must fit a signed 64-bit word, as in the Go/Rust service it fronts.

    JSON Schema integers are unbounded, so ``2**64`` is a valid integer and rejecting it is a
    false rejection (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if _numeric_int(value, type_name) and not -(2**63) <= value < 2**63:
            return False
        return super().type_matches(value, type_name)


class NumberCheckOnlyRulesOutBools(ZooExecutor):
    """Checks ``number`` as "anything but a bool" (the guard a bool-is-an-int fix leaves behind
    when its ``isinstance(value, (int, float))`` half is dropped): ``"7"`` and ``null`` pass as
    numbers (V6)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name == "number":
            return not isinstance(value, bool)
        return super().type_matches(value, type_name)


class NumberViaFloat(ZooExecutor):
    """Checks ``number``/``integer`` with ``math.isfinite(float(value))`` and rejects on
    ``OverflowError``: an integer beyond float range (``10**400``) is a valid JSON number,
    so it is falsely rejected (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if _numeric_int(value, type_name):
            try:
                float(value)
            except OverflowError:
                return False
        return super().type_matches(value, type_name)


class ArgumentsThroughFloat64(ZooExecutor):
    """Hands the handler arguments decoded as a JavaScript bridge would: every integer becomes
    a float64. ``2**64 + 1`` then arrives as ``1.8446744073709552e19``, a different number
    (E8: a mapping equal to the call's arguments)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def handler_arguments(self, call: ToolCall) -> object:
        return json.loads(json.dumps(thaw(call.arguments), default=repr), parse_int=float)


# --- stricter validation, wrong at the edge (E14 allows stricter, V1 forbids false rejections) --


def _numbers_at(
    schema: Mapping[str, Any], arguments: Mapping[str, object]
) -> list[tuple[Any, Any]]:
    """(property schema, value) for every top-level numeric argument with a property schema."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found = []
    for key, value in arguments.items():
        sub = properties.get(key)
        if (
            isinstance(sub, Mapping)
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            found.append((sub, value))
    return found


class MinimumTreatedAsExclusive(ZooExecutor):
    """Its own range check rejects ``value <= minimum``: ``minimum`` is inclusive, so a value
    exactly at the bound is valid and falsely rejected (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        for sub, value in _numbers_at(schema, arguments):
            low = sub.get("minimum")
            if isinstance(low, (int, float)) and value <= low:
                return problem or "a number is below its minimum"
        return problem


class MaximumTreatedAsExclusive(ZooExecutor):
    """Its own range check rejects ``value >= maximum`` (V1 at exactly the bound)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        for sub, value in _numbers_at(schema, arguments):
            high = sub.get("maximum")
            if isinstance(high, (int, float)) and value >= high:
                return problem or "a number is above its maximum"
        return problem


class ExclusiveMinimumAsIntegerStep(ZooExecutor):
    """Rewrites ``exclusiveMinimum: m`` as ``minimum: m + 1`` (right for integers only).

    ``2.5`` under ``{"type": "number", "exclusiveMinimum": 2}`` is valid, yet rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        for sub, value in _numbers_at(schema, arguments):
            bound = sub.get("exclusiveMinimum")
            if (
                isinstance(bound, (int, float))
                and not isinstance(bound, bool)
                and value < bound + 1
            ):
                return problem or "a number is not above its exclusive minimum"
        return problem


class MaxLengthCountsUtf8Bytes(ZooExecutor):
    """Enforces ``maxLength`` on ``len(value.encode())``: JSON Schema counts characters, so a
    non-ASCII string at ``maxLength`` characters is valid and falsely rejected (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        properties = schema.get("properties")
        for key, value in arguments.items():
            sub = properties.get(key) if isinstance(properties, Mapping) else None
            if isinstance(sub, Mapping) and isinstance(value, str):
                longest = sub.get("maxLength")
                if (
                    isinstance(longest, int)
                    and len(value.encode("utf-8", "surrogatepass")) > longest
                ):
                    return problem or f"{shorten(repr(key), 40)} is too long"
        return problem


class StrictDateTimeFormat(ZooExecutor):
    """Checks ``format: date-time`` with a regex that allows only ``YYYY-MM-DDTHH:MM:SSZ``.

    RFC 3339 also allows fractional seconds, offsets and lowercase ``t``/``z``, and JSON Schema
    treats ``format`` as an annotation: a valid call is rejected (V1).
    """

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)
    _DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        properties = schema.get("properties")
        for key, value in arguments.items():
            sub = properties.get(key) if isinstance(properties, Mapping) else None
            if (
                isinstance(sub, Mapping)
                and sub.get("format") == "date-time"
                and isinstance(value, str)
                and not self._DATE_TIME.fullmatch(value)
            ):
                return problem or f"{shorten(repr(key), 40)} is not a date-time"
        return problem


# --- near-miss tool names -----------------------------------------------------------------------


class ToolLookupSwapsDashAndUnderscore(ZooExecutor):
    """Looks the name up again with ``-`` and ``_`` swapped when it is unknown, so
    ``read-file`` runs ``read_file`` instead of being rejected (V2)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V2",)

    def resolve(self, name: str) -> str:
        if self.registry.spec_for(name) is None:
            for other in (name.replace("-", "_"), name.replace("_", "-")):
                if self.registry.spec_for(other) is not None:
                    return other
        return name

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is not None:
            name = self.resolve(call.name)
            if name != call.name:
                action = Action(tool_call=ToolCall(name=name, arguments=call.arguments))
        return await super().execute(action)


class ToolLookupStripsFunctionsPrefix(ToolLookupSwapsDashAndUnderscore):
    """Strips an OpenAI-style ``functions.`` prefix before the lookup, so
    ``functions.read_file`` runs ``read_file`` (V2: an unknown name is rejected)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V2",)

    def resolve(self, name: str) -> str:
        if self.registry.spec_for(name) is None and name.startswith("functions."):
            stripped = name[len("functions.") :]
            if self.registry.spec_for(stripped) is not None:
                return stripped
        return name


class ToolLookupDropsNamespace(ToolLookupSwapsDashAndUnderscore):
    """Drops an MCP-style namespace (``server/tool``, ``server:tool``, ``server__tool``) from
    an unknown name and runs the tool it ends with (V2)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V2",)

    def resolve(self, name: str) -> str:
        if self.registry.spec_for(name) is None:
            for separator in ("/", ":", "__"):
                if separator in name:
                    tail = name.rsplit(separator, 1)[1]
                    if self.registry.spec_for(tail) is not None:
                        return tail
        return name


# --- V8: never echo values, of any JSON type ----------------------------------------------------


class EchoesNonStringValues(ZooExecutor):
    """Type errors quote the offending value unless it is a string ("strings may be secrets"):
    ``'limit' must be 'integer', got boolean True``. V8 forbids echoing any argument value."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V8",)

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        if problem is None:
            return None
        shown = [
            f"{shorten(repr(key), 40)}={value!r}"
            for key, value in arguments.items()
            if isinstance(value, (int, float, type(None)))
        ]
        return f"{problem} (values: {', '.join(shown)})" if shown else problem


# --- E4 / E10: the observation of a handler exception -------------------------------------------


class ExceptionQualnameInObservation(ZooExecutor):
    """Writes ``type(exc).__qualname__`` (``Client.Timeout: ...``) instead of
    ``type(exc).__name__`` (``Timeout: ...``), E4's exact text."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4",)

    def exception_text(self, exc: Exception) -> str:
        return f"{type(exc).__qualname__}: {super().exception_text(exc).split(': ', 1)[-1]}"


class AppendsExceptionCause(ZooExecutor):
    """Appends the ``__cause__`` (``... (caused by OSError: ...)``) to the observation; E4's
    text is exactly ``f"{type(exc).__name__}: {exc}"``."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4",)

    def exception_text(self, exc: Exception) -> str:
        text = super().exception_text(exc)
        cause = exc.__cause__ or exc.__context__
        if cause is not None:
            text += f" (caused by {type(cause).__name__}: {cause})"
        return text


class UnwrapsExceptionGroup(ZooExecutor):
    """Reports the first exception inside an ``ExceptionGroup`` (what a task-group runtime
    raises) instead of the group: E4 wants ``"ExceptionGroup: ..."`` for an ordinary
    exception that happens to be a group, and a group holding a ToolEnvironmentError becomes
    ENV_ERROR, which only a ToolEnvironmentError itself may be (E10)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4", "E10")

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        inner = getattr(exc, "exceptions", None)
        if isinstance(inner, tuple) and inner and isinstance(inner[0], Exception):
            return super().exception_outcome(spec, inner[0])
        return super().exception_outcome(spec, exc)


class NetworkErrorsAreEnvErrors(ZooExecutor):
    """Reports ``ConnectionRefusedError``, ``ConnectionResetError`` and ``socket.gaierror`` as
    ENV_ERROR ("the backend is down"): only ToolEnvironmentError may be (E10)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E10",)
    NETWORK = (ConnectionRefusedError, ConnectionResetError, socket.gaierror)

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, self.NETWORK):
            return self.outcome(ActionStatus.ENV_ERROR, str(exc) or type(exc).__name__, False)
        return super().exception_outcome(spec, exc)


class TimeoutIsEnvError(ZooExecutor):
    """Reports a handler's ``TimeoutError`` (``asyncio.TimeoutError`` on 3.10) as ENV_ERROR
    (E10)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E10",)

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            return self.outcome(ActionStatus.ENV_ERROR, self.env_error_text(exc), False)
        return super().exception_outcome(spec, exc)


# --- E5: exactly the handler's string -----------------------------------------------------------


def _rewrites_text(rewrite: Any) -> Any:
    def result_outcome(self: ZooExecutor, spec: ToolSpec, result: object) -> ActionOutcome:
        outcome = ZooExecutor.result_outcome(self, spec, result)
        return self.outcome(outcome.status, rewrite(outcome.observation), False)

    return result_outcome


class ExactStrResultOnly(ZooExecutor):
    """Accepts only an exact ``str`` result (``type(result) is str``), so a handler returning an
    ``enum.StrEnum`` member or another ``str`` subclass raises TypeError (E5: a ``str`` subclass
    is a ``str``; E9 is for non-``str`` values only)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        if type(result) is not str:
            raise TypeError(f"the handler of tool {spec.name!r} returned a non-str value")
        return self.outcome(ActionStatus.EXECUTED, result, False)


class NormalisesCrlf(ZooExecutor):
    """Turns ``\\r\\n`` into ``\\n`` ("Windows tools") (E5: exactly the handler's string)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)
    result_outcome = _rewrites_text(lambda text: text.replace("\r\n", "\n"))


class NormalisesUnicodeNfc(ZooExecutor):
    """NFC-normalises the observation, so ``"e\\u0301"`` becomes ``"\\u00e9"`` (E5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)
    result_outcome = _rewrites_text(lambda text: unicodedata.normalize("NFC", text))


class StripsTrailingSpacesPerLine(ZooExecutor):
    """Strips spaces and tabs at the end of every line (a "tidy output" pass) (E5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)
    result_outcome = _rewrites_text(
        lambda text: "\n".join(line.rstrip(" \t") for line in text.split("\n"))
    )


class DropsC1ControlCharacters(ZooExecutor):
    """Removes DEL and the C1 controls (U+007F-U+009F) so a terminal cannot be hijacked (E5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E5",)
    result_outcome = _rewrites_text(lambda text: re.sub("[\x7f-\x9f]", "", text))


# --- E9, E6 -------------------------------------------------------------------------------------


class NonStrMessageNamesHandler(ZooExecutor):
    """The TypeError for a non-str result names the handler function, not the tool (E9)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E9",)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        if not isinstance(result, str):
            handler = getattr(spec.handler, "__qualname__", repr(spec.handler))
            raise TypeError(f"{handler}() returned {type(result).__name__}, not str")
        return super().result_outcome(spec, result)


class ReraisesFreshCancelledError(ZooExecutor):
    """Catches the handler's cancellation, logs it and raises a new ``CancelledError()``: the
    cancel message is lost and the object is not the one asyncio delivered (E6: propagates
    unchanged)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E6",)
    MIN_PYTHON: ClassVar[tuple[int, int]] = (3, 11)
    """On 3.10 a task boundary already replaces a CancelledError by a fresh one without its
    message, so a correct task-per-call executor looks exactly like this bug: the kit judges
    only the type there (`oracle.mismatch`)."""

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        try:
            return await super().invoke(spec, arguments)
        except asyncio.CancelledError:
            raise asyncio.CancelledError() from None


# --- E8 -----------------------------------------------------------------------------------------


class FillsSchemaDefaults(ZooExecutor):
    """Fills each absent top-level property that has a ``default`` before calling the handler
    (as pydantic would): the handler must get exactly the call's arguments (E8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        spec = self.registry.spec_for(call.name)
        properties = spec.parameters.get("properties") if spec is not None else None
        if isinstance(arguments, dict) and isinstance(properties, Mapping):
            for key, sub in properties.items():
                if isinstance(sub, Mapping) and "default" in sub and key not in arguments:
                    arguments[key] = thaw(sub["default"])
        return arguments


class RetriesEnvironmentErrorOnce(ZooExecutor):
    """Retries the handler once when it raises ToolEnvironmentError ("transient backend"):
    the handler of an accepted call is awaited twice (E8). The outcome is still right (E3)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        try:
            return await super().invoke(spec, thaw(arguments))
        except ToolEnvironmentError:
            return await super().invoke(spec, arguments)


class MemoisesSafeTools(ZooExecutor):
    """Caches the result of a ``ReplayPolicy.SAFE`` tool per arguments: "repeating is
    harmless", so a second identical call returns the first result without running the
    handler. E8: every accepted call awaits its handler once."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._memo: dict[str, object] = {}

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        if spec.replay_policy is not ReplayPolicy.SAFE:
            return await super().invoke(spec, arguments)
        key = json.dumps([spec.name, arguments], sort_keys=True, default=repr)
        if key not in self._memo:
            self._memo[key] = await super().invoke(spec, arguments)
        return self._memo[key]


class CoalescesConcurrentCalls(ZooExecutor):
    """Joins a call identical to one still in flight ("single flight"): two concurrent
    identical calls run the handler once (E8: each accepted call awaits its handler)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._in_flight: dict[str, asyncio.Future[object]] = {}

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        key = json.dumps([spec.name, arguments], sort_keys=True, default=repr)
        running = self._in_flight.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[object] = asyncio.ensure_future(super().invoke(spec, arguments))
        self._in_flight[key] = future
        try:
            return await future
        finally:
            self._in_flight.pop(key, None)


# --- E1 -----------------------------------------------------------------------------------------


class ParsesCodeAsToolCall(ZooExecutor):
    """A code action that is a JSON ``{"name": ..., "arguments": ...}`` naming a registered
    tool is run as that tool call (a "lenient" fallback for models that print calls). E1: an
    action without a tool call is never executed."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E1",)

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            try:
                parsed = json.loads(action.code or "")
            except ValueError:
                parsed = None
            if (
                isinstance(parsed, dict)
                and isinstance(parsed.get("name"), str)
                and self.registry.spec_for(parsed["name"]) is not None
            ):
                call = ToolCall(name=parsed["name"], arguments=parsed.get("arguments", {}))
                return await super().execute(Action(tool_call=call))
            return super().no_tool_call_outcome(action)
        return await super().execute(action)


# --- state across calls and executors -----------------------------------------------------------


class RequiredKeysCachedByToolName(ZooExecutor):
    """Memoises each tool's ``required`` list by tool name in a class attribute ("schemas do
    not change"). Another registry with a tool of the same name then gets the old list: a
    valid call is rejected for a key its schema does not require (V1), and a missing key the
    new schema requires goes unnoticed (V4)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1", "V4")
    _required_by_name: ClassVar[dict[str, object]] = {}

    @classmethod
    def target(cls) -> type[RequiredKeysCachedByToolName]:
        """What to certify: the class, its cache emptied (so each certification starts alike)."""
        cls._required_by_name.clear()
        return cls

    def check_required(self, schema: Any, arguments: Any) -> str | None:
        spec_required = schema.get("required")
        cached = self._required_by_name.setdefault(self._current, spec_required)
        return super().check_required({**schema, "required": cached}, arguments)

    def check_name(self, call: ToolCall) -> ToolSpec:
        self._current = call.name
        return super().check_name(call)


class SharedClosedKeysFactory:
    """A factory whose executors share one cache of "allowed keys per tool name" (built once
    per factory, to spare each executor re-reading the schemas).

    Two registries that reuse a tool name with different ``properties`` then share one allowed
    set: a key the new schema allows is rejected (V1), and a key it forbids but the old one
    allowed is let through (V5)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1", "V5")
    KNOWN_MISS: ClassVar[str | None] = None

    @classmethod
    def target(cls) -> SharedClosedKeysFactory:
        """What to certify: one factory object (its executors share the cache)."""
        return cls()

    def __init__(self) -> None:
        self.allowed: dict[str, frozenset[str]] = {}

    def __call__(self, registry: ToolRegistry) -> ZooExecutor:
        return _SharedClosedKeysExecutor(registry, self.allowed)


class _SharedClosedKeysExecutor(ZooExecutor):
    def __init__(self, registry: ToolRegistry, allowed: dict[str, frozenset[str]]) -> None:
        super().__init__(registry)
        self._allowed = allowed

    def check_name(self, call: ToolCall) -> ToolSpec:
        self._current = call.name
        return super().check_name(call)

    def allowed_key(self, schema: Mapping[str, object]) -> Callable[[str], bool] | None:
        properties = schema.get("properties")
        known = self._allowed.setdefault(
            self._current, frozenset(properties) if isinstance(properties, Mapping) else frozenset()
        )
        return known.__contains__


# --- E15: the executor is an ActionExecutor -----------------------------------------------------


class WithoutParameters(ZooExecutor):
    """Has no ``parameters()`` method at all (E15: an ActionExecutor reports its parameters)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def __getattribute__(self, name: str) -> Any:
        if name == "parameters":
            raise AttributeError(name)
        return super().__getattribute__(name)


class ParametersNotStrings(ZooExecutor):
    """``parameters()`` returns the tool names as a list, not a str (E15: str to str)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def parameters(self) -> Mapping[str, str]:
        return {"tools": list(self.registry.names())}  # type: ignore[dict-item]


class ParametersCountCalls(ZooExecutor):
    """``parameters()`` includes a call counter, so it differs on every call (E15: the same
    on every call)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._asked = 0

    def parameters(self) -> Mapping[str, str]:
        self._asked += 1
        return {**super().parameters(), "asked": str(self._asked)}


class SortedParametersRegistryExecutor(RegistryExecutor):
    """A RegistryExecutor subclass whose ``parameters()`` sorts the tool names (for "stable
    cache keys"); E15 wants exactly ``{"tools": "a,b,c"}`` in registry order."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(sorted(self.registry.names()))}


class CommaSpaceParametersRegistryExecutor(RegistryExecutor):
    """A RegistryExecutor subclass that joins the tool names with ``", "`` (E15)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def parameters(self) -> dict[str, str]:
        return {"tools": ", ".join(self.registry.names())}


@dataclass(frozen=True, kw_only=True)
class LookalikeOutcome:
    """Field for field an ActionOutcome, but another class (E15)."""

    status: ActionStatus
    observation: str
    observation_is_synthetic: bool
    env_reported_completion: bool = False
    observation_truncated_chars: int = 0


class ReturnsLookalikeOutcome(ZooExecutor):
    """Builds its own outcome dataclass with ActionOutcome's fields (to avoid importing
    polyloop's in a plugin): every value is right, but E15 wants ActionOutcome instances.
    Only E15 is broken: status, text and flags are what every other clause asks for."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E15",)

    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
        return LookalikeOutcome(  # type: ignore[return-value]
            status=status, observation=observation, observation_is_synthetic=synthetic
        )


INDEPENDENT: tuple[Any, ...] = (
    *(
        cls
        for cls in list(globals().values())
        if isinstance(cls, type)
        and issubclass(cls, (ZooExecutor, RegistryExecutor))
        and cls not in (ZooExecutor, RegistryExecutor)
        and not cls.__name__.startswith("_")
        and "VIOLATES" in vars(cls)
    ),
    SharedClosedKeysFactory,
)
"""Every broken entry here, in definition order (classes, then the factory class). Certify
``entry.target()`` where an entry has it, else the entry itself."""


def target_of(entry: Any) -> Any:
    """The factory to certify for an entry (see `INDEPENDENT`)."""
    make = getattr(entry, "target", None)
    return make() if callable(make) else entry


# ---- issue 9 round 3 ---------------------------------------------------------------------------


class DropsRunnableConfigKeys(ZooExecutor):
    """Removes the properties ``config`` and ``run_manager`` from the arguments before calling
    the handler, as LangChain's ``StructuredTool`` does (it binds those names to parameters of
    its own): a call whose schema declares them reaches the handler without them (E8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)
    RESERVED = frozenset({"config", "run_manager"})

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        if isinstance(arguments, dict):
            return {key: value for key, value in arguments.items() if key not in self.RESERVED}
        return arguments


class RaisesOnSelfProperty(ZooExecutor):
    """Calls the handler as a Python method with the arguments as keywords, so a property named
    ``self`` collides with the bound instance: ``TypeError: got multiple values for argument
    'self'`` escapes before the handler runs, for a call JSON Schema accepts: the handler of
    an accepted call is awaited once (E8), and a call JSON Schema accepts reaches it (V1; one
    cause, the two clauses it breaks, as for any valid call whose handler never runs)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1", "E8")

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        if isinstance(arguments, dict) and "self" in arguments:
            raise TypeError("invoke() got multiple values for argument 'self'")
        return arguments


class EchoesBooleanAndNullValues(ZooExecutor):
    """Names the JSON type of a wrong value and, for a boolean or null ("those can't be
    secrets"), the value too: ``'n' must be 'integer', got boolean (true)``. V8 forbids echoing
    an argument value of any JSON type; strings and numbers are never echoed here."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V8",)

    @staticmethod
    def json_type_name(value: object) -> str:
        name = ZooExecutor.json_type_name(value)
        return f"{name} ({json.dumps(value)})" if value is None or isinstance(value, bool) else name


ROUND_3: tuple[Any, ...] = (
    DropsRunnableConfigKeys,
    RaisesOnSelfProperty,
    EchoesBooleanAndNullValues,
)
"""The entries of round 3, kept apart so the middle of this file can change freely."""
INDEPENDENT = (*INDEPENDENT, *ROUND_3)


# ---- issue 37 (items 3 and 6): the families the third round of independent zoos found ---------


def _resolved(schema: Any, root: Any) -> Any:
    """`schema` with a local ``$ref`` followed (one level is all the zoo's schemas need)."""
    pointer = schema.get("$ref") if isinstance(schema, Mapping) else None
    if not isinstance(pointer, str) or not pointer.startswith("#/"):
        return schema
    node = root
    for part in pointer[2:].split("/"):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else schema


def _fill_nested(value: Any, schema: Any, root: Any) -> Any:
    """`value` with the defaults of absent properties filled in, at every depth below it."""
    schema = _resolved(schema, root)
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_fill_nested(item, schema["items"], root) for item in value]
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, Mapping):
        return value
    filled = {key: _fill_nested(item, properties.get(key), root) for key, item in value.items()}
    for key, sub in properties.items():
        sub = _resolved(sub, root)
        if key not in filled and isinstance(sub, Mapping) and "default" in sub:
            filled[key] = thaw(sub["default"])
    return filled


class FillsNestedDefaultsKeepsTopLevelKeys(ZooExecutor):
    """Parses the arguments into a model and hands the handler only the top-level keys the
    call sent, each dumped from the model, as LangChain's ``StructuredTool`` does with a
    pydantic ``args_schema``: the top level is exact, but a nested object (an argument's own
    properties, through ``$ref`` too) comes back with its omitted ``default``s filled in. The
    handler must get exactly the call's arguments (E8)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        spec = self.registry.spec_for(call.name)
        if spec is None or not isinstance(arguments, dict):
            return arguments
        root = spec.parameters
        properties = _resolved(root, root).get("properties")
        if not isinstance(properties, Mapping):
            return arguments
        return {
            key: _fill_nested(value, properties.get(key), root) for key, value in arguments.items()
        }


class SystemExitBecomesObservation(ZooExecutor):
    """Catches a handler's ``SystemExit`` (a tool wrapping an argparse command line exits 2 on
    a usage error) and reports ``"exited with status 2"`` as an EXECUTED observation, so one
    bad tool cannot stop the agent: E6 says every BaseException that is not an Exception
    propagates unchanged."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E6",)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        try:
            return await super().invoke(spec, arguments)
        except SystemExit as exc:
            return f"exited with status {exc.code}"


class ProbesHandlerOfRejectedCall(ZooExecutor):
    """When a call is rejected for missing required keys, reports the rejection and
    meanwhile "probes" the tool's handler with the arguments as sent in a background task
    ("maybe it has defaults for them": the result is logged to tune the schema), swallowing
    whatever that does. E8: the handler is never called for a rejected call."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E8",)

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._probes: set[asyncio.Task[None]] = set()

    async def rejected_outcome(self, call: ToolCall, exc: Any) -> ActionOutcome:
        spec = self.registry.spec_for(call.name)
        required = spec.parameters.get("required") if spec is not None else None
        arguments = call.arguments
        if (
            spec is not None
            and spec.handler is not None
            and isinstance(arguments, Mapping)
            and isinstance(required, (list, tuple))
            and any(key not in arguments for key in required)
        ):
            handler = spec.handler

            async def probe() -> None:
                with contextlib.suppress(Exception):  # the bug: whatever the probe does
                    await handler(thaw(arguments))

            task = asyncio.ensure_future(probe())
            self._probes.add(task)
            task.add_done_callback(self._probes.discard)
        return await super().rejected_outcome(call, exc)


class MemoisesValidationVerdictPerToolName(ZooExecutor):
    """Validates the first call of each tool and keeps that verdict for every later call of
    the tool ("the schema does not change, why validate twice?"): after an accepted call, an
    invalid one of the same tool is dispatched (V4, V5, V6, V3 in turn); after a rejected
    one, a valid call gets the old rejection (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1", "V3", "V4", "V5", "V6")

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._verdicts: dict[str, Exception | None] = {}

    def validate(self, call: ToolCall) -> None:
        if call.name in self._verdicts:
            verdict = self._verdicts[call.name]
            if verdict is not None:
                raise verdict
            return
        try:
            super().validate(call)
        except Exception as exc:
            if self.registry.spec_for(call.name) is not None:
                self._verdicts[call.name] = exc
            raise
        self._verdicts[call.name] = None


class DropsNullUndeclaredKeys(ZooExecutor):
    """Treats an undeclared key whose value is ``null`` as absent ("models send null for
    options they do not use") and drops it before validating, so such a key under
    ``additionalProperties: false`` is silently removed and the call accepted: V5 requires
    the rejection. (Declared keys keep their nulls: the handler of a valid call still gets
    exactly its arguments.)"""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V5",)

    def validate(self, call: ToolCall) -> None:
        super().validate(self._without_null_extras(call))

    def handler_arguments(self, call: ToolCall) -> object:
        return super().handler_arguments(self._without_null_extras(call))

    def _without_null_extras(self, call: ToolCall) -> ToolCall:
        spec = self.registry.spec_for(call.name)
        arguments = call.arguments
        if spec is None or not isinstance(arguments, Mapping):
            return call
        declared = spec.parameters.get("properties")
        known = declared if isinstance(declared, Mapping) else {}
        kept = {k: v for k, v in arguments.items() if v is not None or k in known}
        return ToolCall(name=call.name, arguments=kept)


class UnwrapsSingleMemberGroup(ZooExecutor):
    """Reports the one exception inside a one-member ``ExceptionGroup`` (what a handler using
    ``asyncio.TaskGroup`` raises when one child failed) as if the handler had raised it: the
    group's own ``"ExceptionGroup: ..."`` text is lost (E4), and a ToolEnvironmentError inside
    becomes ENV_ERROR although the handler raised a group, not a ToolEnvironmentError (E10).
    Groups of two or more are reported as they are."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4", "E10")
    MIN_PYTHON: ClassVar[tuple[int, int]] = (3, 11)
    """The kit draws one-member groups only where a real ``ExceptionGroup`` exists (3.11+, or
    3.10 with the ``exceptiongroup`` backport installed)."""

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        inner = getattr(exc, "exceptions", None)
        if isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], Exception):
            return super().exception_outcome(spec, inner[0])
        return super().exception_outcome(spec, exc)


class SerialisesWithSharedLock(ZooExecutor):
    """Runs one call at a time under an ``asyncio.Lock`` created once, at import, and shared
    by every executor (a module-level lock, here a class attribute). The lock binds to the
    first event loop in which a call has to wait for it; concurrent calls in any later loop
    make ``execute`` raise ``RuntimeError: ... is bound to a different event loop`` (E11:
    concurrent calls give the outcomes of the same calls run one at a time)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E11",)
    _lock: ClassVar[asyncio.Lock] = asyncio.Lock()

    async def execute(self, action: Action) -> ActionOutcome:
        async with self._lock:
            return await super().execute(action)


def _declared_properties(spec: ToolSpec | None) -> Mapping[str, Any]:
    declared = spec.parameters.get("properties") if spec is not None else None
    return declared if isinstance(declared, Mapping) else {}


class _HandChecksProperties(ZooExecutor):
    """Checks each top-level property with `value_ok` after the subset's checks."""

    def value_ok(self, schema: Mapping[str, Any], value: Any) -> bool:
        raise NotImplementedError

    def validate(self, call: ToolCall) -> None:
        super().validate(call)
        properties = _declared_properties(self.registry.spec_for(call.name))
        arguments = call.arguments
        assert isinstance(arguments, Mapping)
        for key, value in arguments.items():
            schema = properties.get(key)
            if isinstance(schema, Mapping) and not self.value_ok(schema, value):
                raise ToolValidationError(f"{call.name}: argument {shorten(key)!r} is invalid")


_FORMAT_CHECKS: dict[str, str] = {
    "date-time": r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
    "date": r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])",
    "email": r"[^@\s]+@[^@\s]+\.[^@\s]+",
    "uri": r"[a-zA-Z][a-zA-Z0-9+.-]*:\S+",
    "uuid": r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}",
    "ipv4": r"(\d{1,3}\.){3}\d{1,3}",
    "hostname": r"[A-Za-z0-9.-]{1,253}",
}


class AssertsFormat(_HandChecksProperties):
    """Rejects a string that does not match its property's ``format`` (date-time, date,
    email, uri, uuid, ipv4, hostname) with a hand-written regular expression. In JSON Schema
    ``format`` is an annotation, so full validation accepts such a call (V1; E14 allows
    rejecting only what full JSON Schema rejects)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def value_ok(self, schema: Mapping[str, Any], value: Any) -> bool:
        check = _FORMAT_CHECKS.get(str(schema.get("format")))
        return check is None or not isinstance(value, str) or bool(re.fullmatch(check, value))


class EnumMembersComparedFrozen(_HandChecksProperties):
    """Checks ``enum`` and ``const`` by comparing the call's value, made plain (lists,
    dicts), with the members as the spec stores them (deep-frozen: tuples, read-only
    mappings): ``[1, 2] != (1, 2)``, so a call holding an array- or object-valued member is
    rejected although JSON Schema accepts it (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def value_ok(self, schema: Mapping[str, Any], value: Any) -> bool:
        plain = thaw(value)
        if "const" in schema and plain != schema["const"]:
            return False
        members = schema.get("enum")
        return not isinstance(members, (list, tuple)) or any(plain == m for m in members)


class PatternFullmatch(_HandChecksProperties):
    """Matches a string property's ``pattern`` with ``re.fullmatch``; JSON Schema patterns
    are unanchored (a search), so ``"Ab-1"`` for ``"[a-z]"`` is valid and is rejected here
    (V1)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V1",)

    def value_ok(self, schema: Mapping[str, Any], value: Any) -> bool:
        pattern = schema.get("pattern")
        if not isinstance(pattern, str) or not isinstance(value, str):
            return True
        try:
            return re.fullmatch(pattern, value) is not None
        except re.error:
            return True


ROUND_4: tuple[Any, ...] = (
    FillsNestedDefaultsKeepsTopLevelKeys,
    SystemExitBecomesObservation,
    ProbesHandlerOfRejectedCall,
    MemoisesValidationVerdictPerToolName,
    DropsNullUndeclaredKeys,
    UnwrapsSingleMemberGroup,
    SerialisesWithSharedLock,
    AssertsFormat,
    EnumMembersComparedFrozen,
    PatternFullmatch,
)
"""The entries of issue 37: a runtime filling schema defaults (item 3), and one per family
of item 6, each caught on its clause."""
INDEPENDENT = (*INDEPENDENT, *ROUND_4)
