"""A correct tool-call executor, written from the contract, with one method per decision.

Every broken executor in ``broken.py`` subclasses :class:`ZooExecutor` and overrides one hook,
so the bug is the only difference from an implementation that certifies. The validator here is
our own copy of the subset in contract section 5 (not ``ToolRegistry.validate``), so the V-clause
bugs can be planted in it as well.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Container, Mapping, Sequence
from typing import Any, ClassVar

import _helpers

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

__all__ = [
    "NO_TOOL_CALL",
    "ZooExecutor",
    "dialect_of",
    "own_copy",
    "plain_key",
    "real_type_name",
    "shorten",
    "thaw",
    "type_matches",
]

NO_TOOL_CALL = "The action has no tool call; this executor only runs tool calls."
MAX_NAMED = 10

_MODERN_MARKERS = ("/draft/2020-12/", "/draft/2019-09/")
_JSON_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),  # before int: a bool is an int to isinstance
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (Mapping, "object"),
    ((list, tuple), "array"),
)


def shorten(text: str, limit: int = 60) -> str:
    """Keep names readable in a message whatever their length (V8)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def name_list(names: Sequence[object], limit: int = MAX_NAMED) -> str:
    shown = ", ".join(shorten(repr(n), 40) for n in names[:limit])
    if len(names) > limit:
        shown += f" and {len(names) - limit} more"
    return shown


def own_copy(value: object) -> Any:
    """A leaf the caller owns: a JSON scalar as it is, anything else deep-copied (E13)."""
    return value if type(value) in _JSON_SCALARS else copy.deepcopy(value)


_JSON_SCALARS = (str, int, float, bool, type(None))


def thaw(value: object, leaf: Callable[[object], Any] = own_copy) -> Any:
    """What the zoo hands a handler: `_helpers.thaw` with every key, member and other leaf a
    private copy of anything not a JSON scalar, so nothing is shared with the caller (E13)."""
    return _helpers.thaw(value, leaf)


def plain_key(key: object) -> object:
    """A key as validation compares it: a str subclass as its plain str, any other non-str key
    as an object equal only to itself, so a key's own ``__eq__`` never runs (E2)."""
    if type(key) is str:
        return key
    if issubclass(type(key), str):  # not isinstance: a lying __class__ does not count
        return str.__str__(key)
    return object()


def real_type_name(value: object) -> str:
    """The class's name even when a metaclass makes ``type(value).__name__`` raise (E4)."""
    name: str = vars(type)["__name__"].__get__(type(value))
    return name


def dialect_of(schema: Mapping[str, object]) -> str:
    """``"modern"`` (2019-09 and later, siblings of ``$ref`` apply), ``"draft3"`` or ``"legacy"``.

    Absent ``$schema`` means 2020-12. An unrecognised value is treated as legacy: ignoring more
    is always sound (V1).
    """
    declared = schema.get("$schema")
    if declared is None:
        return "modern"
    if isinstance(declared, str):
        if any(marker in declared for marker in _MODERN_MARKERS):
            return "modern"
        if "/draft-03/" in declared:
            return "draft3"
    return "legacy"


def type_matches(value: object, type_name: str) -> bool:
    """JSON semantics (V6); an unknown type name accepts everything."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "null":
        return value is None
    if type_name == "array":
        return isinstance(value, (list, tuple))
    if type_name == "object":
        return isinstance(value, Mapping)
    return True


def _safe_str(exc: BaseException) -> str | None:
    try:
        text = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a SystemExit from __str__ is the object's fault (E12)
        return None
    return text


class ZooExecutor:
    """Correct reference behaviour for contract sections 5 and 6, split into hooks."""

    VIOLATES: ClassVar[tuple[str, ...]] = ()
    """The exact clause IDs ``certify`` must report failing for this executor."""

    KNOWN_MISS: ClassVar[str | None] = None
    """Why the kit does not catch this bug yet (its zoo test is then a strict xfail)."""

    LEVEL: ClassVar[str] = "strict"
    """The level that catches the bug. ``hardened``: only an object that lies about itself
    (CONTRACT.md section 5, "What certification judges") shows it, so the entry must *pass*
    ``strict`` and fail only at ``hardened``."""

    NAMES_SHOWN: ClassVar[int] = MAX_NAMED
    """How many missing, unexpected or mistyped keys a rejection lists before "and N more"."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    # -- dispatch (section 6) -------------------------------------------------------------

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return self.no_tool_call_outcome(action)
        try:
            self.validate(call)
        except ToolValidationError as exc:
            return await self.rejected_outcome(call, exc)
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        arguments = self.handler_arguments(call)
        try:
            result = await self.invoke(spec, arguments)
        except Exception as exc:
            return self.exception_outcome(spec, exc)
        return self.result_outcome(spec, result)

    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
        return _helpers.outcome(status, observation, synthetic=synthetic)

    def no_tool_call_outcome(self, action: Action) -> ActionOutcome:
        return self.outcome(ActionStatus.NOT_EXECUTED, NO_TOOL_CALL, True)

    async def rejected_outcome(self, call: ToolCall, exc: ToolValidationError) -> ActionOutcome:
        return self.outcome(ActionStatus.NOT_EXECUTED, str(exc), True)

    def handler_arguments(self, call: ToolCall) -> object:
        return thaw(call.arguments)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        assert spec.handler is not None
        return await spec.handler(arguments)  # type: ignore[arg-type]

    def exception_outcome(self, spec: ToolSpec, exc: Exception) -> ActionOutcome:
        if isinstance(exc, ToolEnvironmentError):
            return self.outcome(ActionStatus.ENV_ERROR, self.env_error_text(exc), False)
        return self.outcome(ActionStatus.EXECUTED, self.exception_text(exc), False)

    def env_error_text(self, exc: Exception) -> str:
        text = _safe_str(exc)
        return text if text is not None else f"{real_type_name(exc)}: <exception str() failed>"

    def exception_text(self, exc: Exception) -> str:
        text = self.exception_str(exc)
        if text is None:
            text = "<exception str() failed>"
        return f"{self.exception_name(exc)}: {text}"

    def exception_str(self, exc: Exception) -> str | None:
        """``str(exc)``, or None when that raises anything (E12)."""
        return _safe_str(exc)

    def exception_name(self, exc: Exception) -> str:
        """The class name E4 prints, read so that no metaclass can make it raise."""
        return real_type_name(exc)

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        if not issubclass(type(result), str):  # not isinstance: __class__ may lie (E9)
            raise TypeError(
                f"the handler of tool {spec.name!r} returned {real_type_name(result)}, not str; "
                "a tool handler must return the observation text"
            )
        return self.outcome(ActionStatus.EXECUTED, str.__str__(result), False)

    # -- validation (section 5) -----------------------------------------------------------

    def validate(self, call: ToolCall) -> None:
        """Raise ToolValidationError naming every problem found, or return None."""
        spec = self.check_name(call)
        arguments = call.arguments
        self.check_mapping(call, arguments)
        assert isinstance(arguments, Mapping)
        schema = spec.parameters
        dialect = dialect_of(schema)
        if dialect != "modern" and "$ref" in schema:
            return  # up to draft-07 a root $ref makes required/additionalProperties inert
        problems = [
            self.check_required(schema, arguments) if dialect != "draft3" else None,
            self.check_additional(schema, arguments),
            self.check_types(schema, arguments, dialect),
        ]
        found = [problem for problem in problems if problem is not None]
        if found:
            raise ToolValidationError(self.rejection_text(call, found))

    def rejection_text(self, call: ToolCall, problems: list[str]) -> str:
        text = f"invalid arguments for tool {shorten(repr(call.name))}: " + "; ".join(problems)
        return shorten(text, 1900)

    def check_name(self, call: ToolCall) -> ToolSpec:
        spec = self.registry.spec_for(call.name)
        if spec is None:
            raise ToolValidationError(self.unknown_tool_message(call))
        return spec

    def unknown_tool_message(self, call: ToolCall) -> str:
        names = list(self.registry.names())
        shown = name_list(list(names), 20) if names else "none"
        return f"unknown tool {shorten(repr(call.name))}; available tools: {shown}"

    def check_mapping(self, call: ToolCall, arguments: object) -> None:
        if not isinstance(arguments, Mapping):
            raise ToolValidationError(
                f"arguments for tool {shorten(repr(call.name))} must be a JSON object, "
                f"got {self.json_type_name(arguments)}"
            )

    def check_required(
        self, schema: Mapping[str, object], arguments: Mapping[str, object]
    ) -> str | None:
        required = schema.get("required")
        if not isinstance(required, (list, tuple)):
            return None
        present = self.present_keys(arguments)
        missing = [key for key in required if isinstance(key, str) and key not in present]
        if not missing:
            return None
        missing = list(dict.fromkeys(missing))
        return f"missing required argument(s) {name_list(missing, self.NAMES_SHOWN)}"

    def present_keys(self, arguments: Mapping[Any, object]) -> Container[object]:
        """The keys as `check_required` looks them up: plain, so no key's ``__eq__`` runs (E2)."""
        return {plain_key(key) for key in arguments}

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return schema.get("additionalProperties") is False and "patternProperties" not in schema

    def check_additional(
        self, schema: Mapping[str, object], arguments: Mapping[str, object]
    ) -> str | None:
        allowed = self.allowed_key(schema) if self.additional_applies(schema) else None
        if allowed is None:
            return None
        extra = [key for key in arguments if not allowed(plain_key(key))]  # type: ignore[arg-type]
        return f"unexpected argument(s) {name_list(extra, self.NAMES_SHOWN)}" if extra else None

    def allowed_key(self, schema: Mapping[str, object]) -> Callable[[str], bool] | None:
        """Which keys a closed schema lets through (the declared properties); ``None`` when
        the executor cannot tell and so rejects nothing (V1)."""
        properties = schema.get("properties")
        return frozenset(properties if isinstance(properties, Mapping) else ()).__contains__

    def check_types(
        self, schema: Mapping[str, object], arguments: Mapping[str, object], dialect: str
    ) -> str | None:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return None
        wrong = []
        for key, value in arguments.items():
            prop = properties.get(plain_key(key))
            if not isinstance(prop, Mapping) or "type" not in prop:
                continue
            if dialect != "modern" and "$ref" in prop:
                continue  # up to draft-07 a $ref makes its sibling "type" inert
            declared = prop["type"]
            if not self.value_has_type(value, declared):
                wrong.append(
                    f"{shorten(repr(key), 40)} must be {self.type_label(declared)}, "
                    f"got {self.json_type_name(value)}"
                )
        if not wrong:
            return None
        shown = self.NAMES_SHOWN
        more = f" and {len(wrong) - shown} more" if len(wrong) > shown else ""
        return "; ".join(wrong[:shown]) + more

    def value_has_type(self, value: object, declared: object) -> bool:
        if isinstance(declared, str):
            return self.type_matches(value, declared)
        if isinstance(declared, (list, tuple)):
            if not declared or not all(isinstance(t, str) for t in declared):
                return True  # draft-03 schema unions: never reject what we do not model
            return any(self.type_matches(value, t) for t in declared)
        return True

    def type_matches(self, value: object, type_name: str) -> bool:
        return type_matches(value, type_name)

    @staticmethod
    def type_label(declared: object) -> str:
        if isinstance(declared, str):
            return shorten(repr(declared))
        if isinstance(declared, (list, tuple)):
            return "one of " + ", ".join(shorten(repr(t)) for t in list(declared)[:MAX_NAMED])
        return "?"

    @staticmethod
    def json_type_name(value: object) -> str:
        """The JSON type a message names for `value`, or its Python class when it has none
        (read so that a metaclass cannot break it: E4)."""
        return next(
            (name for kinds, name in _JSON_TYPE_NAMES if isinstance(value, kinds)),
            real_type_name(value),
        )
