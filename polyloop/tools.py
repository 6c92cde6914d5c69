"""Tool specs, the immutable registry, argument validation and the registry-derived executor.

Registration, the schema the model sees, validation and dispatch all come from one
`ToolRegistry` instance, so they cannot drift apart: a tool the model can see is a tool the
executor can run, and `restrict_to` carries each handler along with its spec (design 0008).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import numbers
import sys
import types
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from polyloop._json import freeze_json, safe_repr, shorten, thaw, thaw_arguments, type_label
from polyloop.policy import Decision, ToolPolicy, Verdict
from polyloop.ports import Action, ToolCall
from polyloop.types import ActionOutcome, ActionStatus, ReplayPolicy, _trusted_outcome

if TYPE_CHECKING:
    from polyloop.batch import RegistryBatchExecutor

__all__ = [
    "RegistryExecutor",
    "ToolEnvironmentError",
    "ToolHandler",
    "ToolRegistry",
    "ToolSpec",
    "ToolValidationError",
]

ToolHandler = Callable[[dict[str, Any]], Awaitable[str]]
"""An async callable taking the call's arguments (a fresh plain dict) and returning the text."""

ConcurrencyClassifier = Callable[[Mapping[str, Any]], bool]
"""A plain callable answering, from a call's read-only arguments, whether it may overlap others."""


class ToolValidationError(ValueError):
    """A tool call was refused before its handler ran (unknown tool or invalid arguments).

    The dispatch path catches only this class, never `ValueError`: catching `ValueError` would
    turn a handler's own `ValueError` into "invalid arguments" and let the model retry a broken
    tool forever.
    """


class ToolEnvironmentError(Exception):
    """Raised by a handler when the environment is broken (backend unreachable, disk gone).

    It is the only way a tool reports `ENV_ERROR`; every other exception is an ordinary
    observation the model can react to. Without it a dead backend would quietly burn the
    step budget.
    """


_PARTIAL_CALL = vars(functools.partial)["__call__"]
_PARTIAL_FUNC = vars(functools.partial)["func"].__get__
_TYPE_MRO = vars(type)["__mro__"].__get__
_TYPE_DICT = vars(type)["__dict__"].__get__


def _type_call(kind: type) -> object:
    """The `__call__` that calling an instance of `kind` runs: found on the type, never on the
    instance, and read from the class dictionaries so no `__getattribute__` is consulted."""
    for klass in _TYPE_MRO(kind):
        namespace = _TYPE_DICT(klass)
        if "__call__" in namespace:
            return namespace["__call__"]
    return None


def _is_async_callable(handler: object) -> bool:
    """Whether calling `handler` returns a coroutine, judged the way Python's call finds the code.

    `handler(...)` runs `type(handler).__call__`, so an instance attribute named `__call__`, a
    `__getattribute__` or a `__class__` that lies, and a `functools.partial` subclass that
    overrides `__call__` are all judged by what really runs (S5).
    """
    for _ in range(100):  # a chain of partials and callable objects, bounded
        if type(handler) is types.FunctionType:  # not subclassable: its code is what runs
            return inspect.iscoroutinefunction(handler)
        if type(handler) is types.MethodType:
            handler = handler.__func__
            continue
        call = _type_call(type(handler))
        if call is _PARTIAL_CALL:
            handler = _PARTIAL_FUNC(handler)
        elif type(call) in (staticmethod, classmethod, types.FunctionType):
            # A function found on the type is called with the instance (a static or class
            # method without it): whichever, its own code decides.
            return inspect.iscoroutinefunction(getattr(call, "__func__", call))
        elif call is None or isinstance(call, _SLOT_TYPES):
            return False  # a C-level __call__ (a class, a builtin) never returns a coroutine
        else:
            handler = call  # a callable object stored as `__call__` is called as it is
    return False


_SLOT_TYPES = (types.WrapperDescriptorType, types.MethodWrapperType, types.MethodDescriptorType)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """Everything the library knows about one tool.

    New fields are only ever appended (0008 decision 1): an insertion would silently change
    the meaning of positional calls elsewhere. The default replay policy is `NEVER`, so a
    forgotten declaration costs one extra stop at recovery, never a silently repeated side
    effect; the default `concurrency_safe=False` likewise makes a forgotten declaration cost
    only speed (the call runs alone), never a read racing a write (S6).
    """

    name: str
    description: str
    parameters: Mapping[str, object]
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER
    completes_run: bool = False
    handler: ToolHandler | None = None
    concurrency_safe: bool | ConcurrencyClassifier = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"ToolSpec.name must be a str, got {type_label(self.name)}")
        if not self.name.strip():
            raise ValueError(
                f"ToolSpec.name must not be blank (got {self.name!r}); "
                "a blank name is invisible in a prompt"
            )
        label = safe_repr(self.name)
        if not isinstance(self.description, str):
            raise TypeError(
                f"ToolSpec.description of tool {label} must be a str, "
                f"got {type_label(self.description)}"
            )
        if not isinstance(self.parameters, Mapping):
            raise TypeError(
                f"ToolSpec.parameters of tool {label} must be a JSON Schema mapping, "
                f"got {type_label(self.parameters)}"
            )
        object.__setattr__(self, "parameters", freeze_json(self.parameters, "parameters"))
        if not isinstance(self.replay_policy, ReplayPolicy):
            raise TypeError(
                f"ToolSpec.replay_policy of tool {label} must be a ReplayPolicy, "
                f"got {type_label(self.replay_policy)}"
            )
        if not isinstance(self.completes_run, bool):
            raise TypeError(
                f"ToolSpec.completes_run of tool {label} must be a bool, "
                f"got {type_label(self.completes_run)}"
            )
        if self.handler is not None:
            if not callable(self.handler):
                raise TypeError(
                    f"ToolSpec.handler of tool {label} must be callable, "
                    f"got {type_label(self.handler)}"
                )
            if not _is_async_callable(self.handler):
                raise TypeError(
                    f"ToolSpec.handler of tool {label} must be an async callable; "
                    f"{safe_repr(self.handler)} is not — declare it with `async def`"
                )
        safe = self.concurrency_safe
        if type(safe) is not bool:
            if not callable(safe) or isinstance(safe, bool):
                raise TypeError(
                    f"ToolSpec.concurrency_safe of tool {label} must be True, False or a plain "
                    f"callable taking the call's arguments, got {type_label(safe)}"
                )
            if _is_async_callable(safe):
                raise TypeError(
                    f"ToolSpec.concurrency_safe of tool {label} must be a plain (not async) "
                    f"callable; {safe_repr(safe)} is async — the scheduler needs its answer "
                    "before it starts the call, so declare it with `def`"
                )


# --- validation --------------------------------------------------------------------------------

_ABSENT = object()
_MODERN_DIALECTS = ("/draft/2020-12/", "/draft/2019-09/")
_DRAFT3 = "/draft-03/"


def _is_integer(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    # A float with no fractional part is an integer from draft-06 on; accepting it under
    # draft-04 too is merely lenient, never a false rejection.
    # `float.is_integer`, not the value's own: a subclass may override it (and raise).
    return isinstance(value, float) and float.is_integer(value)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


_TYPE_CHECKS: dict[str, Callable[[object], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "array": lambda value: isinstance(value, (list, tuple)),
    "object": lambda value: isinstance(value, Mapping),
}


def _json_type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, numbers.Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return f"non-JSON {shorten(type_label(value), 40)}"


_FAST_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
    "array": frozenset({list, tuple}),
    "object": frozenset({dict, MappingProxyType}),
}
"""Exact types that certainly pass each JSON type: one set lookup before the full check."""

_TypeRule = tuple[str, frozenset[type], Callable[[object], bool], str]


def _type_rule(key: str, schema: object, legacy: bool) -> _TypeRule | None:
    """The V6 rule for one property schema, or None when its type cannot certainly be judged."""
    if not isinstance(schema, Mapping) or "type" not in schema:
        return None
    if legacy and "$ref" in schema:
        return None  # up to draft-07 a $ref makes its sibling keywords inert
    declared = schema["type"]
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, (list, tuple)) or not names:
        return None
    if not all(isinstance(name, str) and name in _TYPE_CHECKS for name in names):
        return None  # an unknown type name (or a draft-03 schema) accepts everything
    fast = frozenset().union(*(_FAST_TYPES[name] for name in names))
    if len(names) == 1:
        return key, fast, _TYPE_CHECKS[names[0]], names[0]
    checks = tuple(_TYPE_CHECKS[name] for name in names)
    return key, fast, (lambda value: any(check(value) for check in checks)), " or ".join(names)


def _quoted_list(items: Iterable[object], limit: int = 10) -> str:
    items = list(items)
    shown = ", ".join(safe_repr(item, 40) for item in items[:limit])
    if len(items) > limit:
        shown += f" and {len(items) - limit} more"
    return shown


class _OddKey:
    """A mapping key that is not a string: equal only to itself, shown by a repr that cannot
    raise. It can never name a property, so it is at most an unexpected argument."""

    __slots__ = ("key",)

    def __init__(self, key: object) -> None:
        self.key = key

    def __repr__(self) -> str:
        return safe_repr(self.key, 40)


def _plain_key(key: object) -> object:
    if type(key) is str:
        return key
    if issubclass(type(key), str):  # not isinstance: a lying `__class__` cannot pass
        return str.__str__(key)
    return _OddKey(key)


class _CompiledTool:
    """One spec's checks, derived once, on the tool's first lookup, and run on every call.

    Interpreting the schema on every call costs several times the handler's own dispatch;
    compiling it into a few tables keeps validation close to a dictionary lookup. The registry
    compiles a tool when it is first looked up (`_compiled_entry`), not at construction, so
    building a registry costs the same per tool at 10,000 tools as at 100 (bench/dispatch.py)
    and a run pays only for the tools it calls.
    """

    __slots__ = (
        "allowed",
        "checks",
        "closed",
        "fast",
        "handler",
        "name",
        "required",
        "spec",
        "typed",
    )

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.handler = spec.handler
        params = spec.parameters
        dialect = params.get("$schema")
        modern = dialect is None or (
            isinstance(dialect, str) and any(marker in dialect for marker in _MODERN_DIALECTS)
        )
        # Unrecognised dialects are treated like draft-07: that only ever checks less.
        legacy = not modern
        self.required: tuple[str, ...] = ()
        self.allowed: frozenset[str] | None = None
        self.typed: tuple[_TypeRule, ...] = ()
        self.fast: dict[str, frozenset[type] | None] = {}
        self.checks: dict[str, Callable[[object], bool]] = {}
        self.closed = False
        if legacy and "$ref" in params:
            return  # the root's required/properties/additionalProperties are all inert
        draft3 = isinstance(dialect, str) and _DRAFT3 in dialect
        required = params.get("required")
        if (
            not draft3
            and isinstance(required, tuple)
            and all(isinstance(key, str) for key in required)
        ):
            self.required = tuple(dict.fromkeys(required))
        properties = params.get("properties", {})
        if not isinstance(properties, Mapping):
            return
        if params.get("additionalProperties") is False and "patternProperties" not in params:
            self.allowed = frozenset(properties)
            self.closed = True
            self.fast = dict.fromkeys(properties)  # declared, any type: None
        rules = (_type_rule(key, schema, legacy) for key, schema in properties.items())
        self.typed = tuple(rule for rule in rules if rule is not None)
        for key, fast, check, _ in self.typed:
            self.fast[key] = fast
            self.checks[key] = check

    @property
    def label(self) -> str:
        """The tool's name as messages show it (only error paths read it)."""
        return safe_repr(self.name)

    def problem(self, arguments: object) -> str | None:
        """The rejection message for `arguments`, or None when they pass the subset.

        The fast path answers the common case (a valid call recorded as a read-only dict)
        in one pass over its items, each judged by one lookup of its key; anything else
        takes the full, message-building path, which is the authority.
        """
        kind = type(arguments)
        if kind is MappingProxyType or kind is dict:
            try:
                for key in self.required:
                    if key not in arguments:  # type: ignore[operator]
                        break
                else:
                    fast = self.fast
                    closed = self.closed
                    for key, value in arguments.items():  # type: ignore[attr-defined]
                        if type(key) is not str:
                            break  # a key of another type: only the full path reads it
                        rule = fast.get(key, _ABSENT)
                        if rule is _ABSENT:
                            if closed:
                                break  # undeclared under additionalProperties: false
                        elif (
                            rule is not None
                            and type(value) not in rule  # type: ignore[operator]
                            and not self.checks[key](value)
                        ):
                            break
                    else:
                        return None
            except Exception:  # a hostile key or value: the full path decides
                pass
        try:
            return self._describe(arguments)
        except Exception as exc:
            # Only objects that are not JSON data get here (a value whose class check raises);
            # the call is refused rather than crashing the loop (validate raises only
            # ToolValidationError; execute always returns an outcome).
            return (
                f"invalid arguments for tool {self.label}: they could not be checked "
                f"({type_label(exc)} raised while inspecting them); send JSON data"
            )

    def _describe(self, arguments: object) -> str | None:
        if not isinstance(arguments, Mapping):
            return (
                f"arguments for tool {self.label} must be a JSON object, "
                f"got {_json_type_name(arguments)}"
            )
        # Judge a plain copy keyed by exact `str`: a key of a `str` subclass is compared as the
        # text it holds, and a key that is no string at all can never name a property, so no
        # key's own `__eq__`/`__hash__` runs during the checks.
        arguments = {_plain_key(key): value for key, value in arguments.items()}
        problems = []
        missing = [key for key in self.required if key not in arguments]
        if missing:
            problems.append(f"missing required argument(s) {_quoted_list(missing)}")
        if self.allowed is not None:
            extra = [key for key in arguments if key not in self.allowed]
            if extra:
                accepted = _quoted_list(sorted(self.allowed)) or "none"
                problems.append(
                    f"unexpected argument(s) {_quoted_list(extra)} (accepted: {accepted})"
                )
        wrong = [
            f"{safe_repr(key, 40)} must be {expected}, got {_json_type_name(arguments[key])}"
            for key, _, check, expected in self.typed
            if key in arguments and not check(arguments[key])
        ]
        if wrong:
            problems.append("; ".join(wrong[:10]))
        if not problems:
            return None
        return shorten(f"invalid arguments for tool {self.label}: " + "; ".join(problems), 1900)


# --- the registry ------------------------------------------------------------------------------


class ToolRegistry:
    """An immutable, ordered set of tool specs: the single source for every tool decision."""

    __slots__ = ("_compiled", "_names", "_specs")
    __hash__ = None  # type: ignore[assignment]  # equal by content, so it cannot be hashed

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        if isinstance(specs, (str, bytes, Mapping)) or not isinstance(specs, Iterable):
            raise TypeError(
                f"ToolRegistry(specs) takes an iterable of ToolSpec, got {type_label(specs)}"
            )
        collected = tuple(specs)
        compiled: dict[str, ToolSpec | _CompiledTool] = {}  # a spec until first looked up
        for position, spec in enumerate(collected):
            if not isinstance(spec, ToolSpec):
                raise TypeError(
                    f"ToolRegistry item {position} is a {type_label(spec)}, not a ToolSpec"
                )
            if spec.name in compiled:
                raise ValueError(f"duplicate tool name {safe_repr(spec.name)}")
            compiled[spec.name] = spec
        self._specs = collected
        self._names = tuple(compiled)
        self._compiled = compiled

    @classmethod
    def _trusted(
        cls, specs: tuple[ToolSpec, ...], compiled: dict[str, ToolSpec | _CompiledTool]
    ) -> Any:
        registry = cls.__new__(cls)
        registry._specs = specs
        registry._names = tuple(compiled)
        registry._compiled = compiled
        return registry

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The specs in registration order."""
        return self._specs

    def names(self) -> tuple[str, ...]:
        """Tool names in registration order."""
        return self._names

    def spec_for(self, name: str) -> ToolSpec | None:
        """The spec named `name`, or None: asking about an unknown name is normal (R7)."""
        entry = self._compiled.get(name) if isinstance(name, str) else None
        if type(entry) is _CompiledTool:
            return entry.spec
        return entry  # type: ignore[return-value]  # a spec not yet compiled, or None

    def restrict_to(self, names: Iterable[str]) -> ToolRegistry:
        """A new registry with only the named tools, in registration order.

        Unknown names raise instead of being dropped: a silently missing tool looks to the
        model like a tool that vanished mid-run.
        """
        if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
            raise TypeError(
                "restrict_to(names) takes an iterable of tool names (e.g. a list or set), "
                f"got {type_label(names)}"
            )
        wanted = set()
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"restrict_to: tool names must be str, got {type_label(name)}")
            wanted.add(name)
        unknown = sorted(wanted.difference(self._compiled))
        if unknown:
            raise ValueError(
                f"restrict_to: unknown tool name(s) {_quoted_list(unknown, 20)}; "
                f"available: {_quoted_list(self._names, 50) or 'none'}"
            )
        kept = tuple(spec for spec in self._specs if spec.name in wanted)
        compiled = {spec.name: self._compiled[spec.name] for spec in kept}
        result: ToolRegistry = self._trusted(kept, compiled)
        return result

    def schema_for_model(self) -> list[dict[str, Any]]:
        """Per tool, in order, exactly name, description and parameters — as fresh plain data.

        Nothing else about a tool (handler, replay policy, completion flag, any later field)
        reaches the model.
        """
        return [
            {
                "name": spec.name,
                "description": spec.description,
                "parameters": thaw(spec.parameters),
            }
            for spec in self._specs
        ]

    def validate(self, call: ToolCall) -> None:
        """Raise `ToolValidationError` if `call` is certainly wrong; return None otherwise.

        Only a deliberate subset of JSON Schema is checked (tool exists, arguments are an
        object, required keys, `additionalProperties: false`, top-level types): a false
        rejection would trap the model, while anything missed here fails in the handler and
        comes back as an observation the model can correct.
        """
        if not isinstance(call, ToolCall):
            raise TypeError(f"validate(call) takes a ToolCall, got {type_label(call)}")
        message = self._problem(call)
        if message is not None:
            raise ToolValidationError(message)

    def _problem(self, call: ToolCall) -> str | None:
        name = call.name
        entry = self._compiled.get(name if type(name) is str else str.__str__(name))
        if type(entry) is not _CompiledTool:
            if entry is None:
                return self._unknown_tool(name)
            entry = _compiled_entry(self._compiled, entry)  # type: ignore[arg-type]
        return entry.problem(call.arguments)

    def _unknown_tool(self, name: str) -> str:
        visible = _quoted_list(self._names, 20) if self._names else "none"
        if type(name) is not str:
            name = str.__str__(name)  # a `str` subclass is named by its text, not its repr
        return f"unknown tool {safe_repr(name)}; the available tools are: {visible}"

    def executor(self, *, policy: ToolPolicy | None = None) -> RegistryExecutor:
        """An executor dispatching to these specs' handlers (every spec must have one).

        `policy` puts decide, ask, wrap and post-process stages before and around each handler
        (section 11); None or `ToolPolicy()` changes nothing.
        """
        return RegistryExecutor(self, policy=policy)

    def batch_executor(
        self, *, max_concurrency: int = 10, policy: ToolPolicy | None = None
    ) -> RegistryBatchExecutor:
        """A batch executor running one model turn's calls on these handlers (R9, section 10).

        `max_concurrency` caps how many handlers of one batch run at once; `policy` as for
        `executor` (section 11: deciding stages one call at a time, in model order).
        """
        from polyloop.batch import RegistryBatchExecutor

        return RegistryBatchExecutor(self, max_concurrency=max_concurrency, policy=policy)

    def __len__(self) -> int:
        return len(self._specs)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._compiled

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolRegistry):
            return NotImplemented
        return self._specs == other._specs

    def __repr__(self) -> str:
        return f"ToolRegistry(names={list(self._names)!r})"


# --- dispatch ----------------------------------------------------------------------------------


_outcome = _trusted_outcome
# Enum members read once: an enum attribute costs a dictionary walk on each read in 3.11.
_EXECUTED = ActionStatus.EXECUTED
_NOT_EXECUTED = ActionStatus.NOT_EXECUTED
_ENV_ERROR = ActionStatus.ENV_ERROR


_NO_TOOL_CALL = _outcome(
    _NOT_EXECUTED,
    "The action has no tool call; a tool-call executor cannot run code.",
    True,
)


def _exception_text(exc: BaseException) -> str | None:
    """`str(exc)`, or None when even that raises or returns a non-`str` (E12: such an
    exception is still reported, never a crash). A `SystemExit` or other `BaseException`
    raised by `__str__` is the object's fault, not a request to stop, so it is caught too;
    only a real Ctrl-C (`KeyboardInterrupt`) goes through."""
    try:
        text = str(exc)
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        return None
    return text if type(text) is str else str.__str__(text)


def _exception_name(exc: BaseException) -> str:
    """`type(exc).__name__` as E4 prints it, or the class's real name when a metaclass makes
    reading it raise or return something that is not a `str`."""
    try:
        name = type(exc).__name__
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        name = None
    return name if type(name) is str else type_label(exc)


_STR_FAILED = "<exception str() failed>"


class RegistryExecutor:
    """Runs tool calls against the handlers of one registry, exactly as design 0008 says.

    A concrete class (not a Protocol implementation by inheritance) so a run request can
    recognise it and insist that its registry is the run's registry.
    """

    __slots__ = ("_compiled", "_policy", "_registry")

    def __init__(self, registry: ToolRegistry, *, policy: ToolPolicy | None = None) -> None:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(
                f"RegistryExecutor(registry) takes a ToolRegistry, got {type_label(registry)}"
            )
        missing = [spec.name for spec in registry.specs if spec.handler is None]
        if missing:
            raise ValueError(
                "cannot build an executor: these tools have no handler: "
                + ", ".join(safe_repr(name) for name in missing)
                + " (give each ToolSpec an async handler=)"
            )
        self._policy = _policy_if_active(policy)
        self._registry = registry
        self._compiled = registry._compiled

    @property
    def registry(self) -> ToolRegistry:
        """The registry this executor dispatches to."""
        return self._registry

    def parameters(self) -> dict[str, str]:
        """Reproducibility parameters: the tool names in order."""
        return {"tools": ",".join(self._registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        """Turn `action` into an outcome (table E1–E6 of the contract).

        Only `ToolEnvironmentError` becomes ENV_ERROR and only `Exception` is caught:
        cancellation and interpreter exits must reach the caller untouched.
        """
        admitted = self._admit(action)
        if type(admitted) is not _CompiledTool:
            return admitted  # type: ignore[return-value]
        policy = self._policy
        if policy is None:
            # `_run`, written out: one coroutine fewer on the path every plain call takes.
            try:
                result = await admitted.handler(  # type: ignore[misc]
                    thaw_arguments(action.tool_call.arguments)  # type: ignore[union-attr]
                )
            except Exception as exc:
                return _map_exception(exc)
            if type(result) is str:
                return _outcome(_EXECUTED, result, False)
            return _map_result(admitted, result)
        call: ToolCall = action.tool_call  # type: ignore[assignment]
        task: asyncio.Task[Any] | None = (
            _current_task() if _TASKS is None else _TASKS.get(_running_loop())
        )
        if task is None or not _HAS_CANCELLING:
            return await _execute_policed(admitted, call, policy)
        # P9: a cancellation of this task is seen even when a listener swallows it.
        cancelling: Callable[[], int] = task.cancelling  # type: ignore[attr-defined,unused-ignore]
        before = cancelling()
        cancelled: Cancelled = cancelling if before == 0 else lambda: cancelling() > before
        # `_policed`, written out: one coroutine fewer for every policed call.
        if policy.deciders or policy.default is not _ALLOW:
            denial = await _decide(policy, call, cancelled)
            if denial is not None:
                return denial
        return await _chain(admitted, call, policy, cancelled, None)

    def _admit(self, action: Action) -> ActionOutcome | _CompiledTool:
        """The rejection outcome of `action` (E1, E2), or the compiled tool that accepts it.

        Split from running so the batch executor decides every call exactly as `execute` does
        (B4) while scheduling the handlers itself.
        """
        if not isinstance(action, Action):
            raise TypeError(f"execute(action) takes an Action, got {type_label(action)}")
        call = action.tool_call
        if call is None:
            return _NO_TOOL_CALL
        name = call.name
        entry = self._compiled.get(name if type(name) is str else str.__str__(name))
        if type(entry) is not _CompiledTool:
            if entry is None:
                return _outcome(_NOT_EXECUTED, self._registry._unknown_tool(name), True)
            entry = _compiled_entry(self._compiled, entry)  # type: ignore[arg-type]
        problem = entry.problem(call.arguments)
        if problem is not None:
            return _outcome(_NOT_EXECUTED, problem, True)
        return entry


def _compiled_entry(compiled: dict[str, ToolSpec | _CompiledTool], spec: ToolSpec) -> _CompiledTool:
    """Compile `spec`'s checks and keep them in its registry's table, in place of the spec.

    Two threads may both compile a tool; each gets the same tables, and either one is kept.
    """
    entry = _CompiledTool(spec)
    compiled[spec.name] = entry
    return entry


async def _run(entry: _CompiledTool, arguments: Mapping[str, Any]) -> ActionOutcome:
    """Await an accepted call's handler on its own plain copy of the arguments (E3–E5, E9, E13).

    Only `Exception` is caught: cancellation and interpreter exits reach the caller untouched.
    """
    handler = entry.handler
    assert handler is not None
    try:
        result = await handler(thaw_arguments(arguments))
    except Exception as exc:
        return _map_exception(exc)
    if type(result) is str:
        return _outcome(_EXECUTED, result, False)
    return _map_result(entry, result)


# --- policy (contract section 11) ----------------------------------------------------------------

_HAS_CANCELLING = sys.version_info >= (3, 11)  # Task.cancelling()

Cancelled = Callable[[], object]
"""Truthy once the caller's cancellation has been seen (P9). Usually the task's own
`cancelling` (a count that was 0 when the call began): a C call, read after every listener."""
_current_task = asyncio.current_task
# Up to 3.11 `asyncio.current_task` is a Python function reading this dict, which costs a third
# of a lone call's batch overhead (bench/batch.py); 3.12+ implement it in C, so they keep it.
_TASKS: dict[Any, Any] | None = (
    asyncio.tasks._current_tasks  # type: ignore[attr-defined,unused-ignore]
    if sys.version_info < (3, 12)
    else None
)
_running_loop = asyncio.get_running_loop

DENIED = "denied by the tool policy"
_DEFAULT_DENIED = f"{DENIED}: no decider allowed the call and the default is DENY"
_APPROVER_REFUSED = f"{DENIED}: the approver refused the call"
_NO_APPROVER = f"{DENIED}: the call needs approval and no approver is configured"
_APPROVER_UNCLEAR = f"{DENIED}: the approver's answer was not True (only True approves)"
WITHHELD = "the observation was withheld"
_POST_INTERRUPTED = f"{WITHHELD}: post-processing was interrupted"


def _denied(text: str) -> ActionOutcome:
    return _outcome(_NOT_EXECUTED, shorten(text, 1900), True)


def _policy_if_active(policy: object) -> ToolPolicy | None:
    """`policy` when it changes anything, else None (P: `ToolPolicy()` is no policy)."""
    if policy is None:
        return None
    if type(policy) is not ToolPolicy:
        raise TypeError(f"policy= takes a ToolPolicy or None, got {type_label(policy)}")
    if not policy.deciders and not policy.wrappers and not policy.post and policy.default is _ALLOW:
        return None
    return policy


async def _decide(policy: ToolPolicy, call: ToolCall, cancelled: Cancelled) -> ActionOutcome | None:
    """The denial of `call`, or None when it is allowed (P3–P6).

    Every decider is awaited once, one after another in their order, so the reasons and the
    result never depend on timing (P3, P12). A cancellation seen after any listener ends the
    call whatever that listener answered (P9).
    """
    denials: list[str] | None = None
    asks: list[str] | None = None
    allowed = False
    position = -1
    for decider in policy.deciders:
        position += 1
        try:
            answer = await decider(call)
        except Exception as exc:
            if cancelled():
                raise asyncio.CancelledError() from None
            if denials is None:
                denials = []
            denials.append(f"decider {position} raised {_exception_name(exc)}")
            continue
        if cancelled():
            raise asyncio.CancelledError()
        if answer is None:
            continue
        if type(answer) is Verdict:
            decision = answer.decision
            if decision is _ALLOW:
                allowed = True
                continue
            if decision is _ASK:
                if asks is None:
                    asks = []
                asks.append(answer.reason)
                continue
            reason = answer.reason
            text = f"decider {position}: {reason}" if reason else f"decider {position}"
        else:
            text = f"decider {position} answered {type_label(answer)}, not a Verdict or None"
        if denials is None:
            denials = []
        denials.append(text)
    if denials is not None:
        return _denied(f"{DENIED}: " + "; ".join(denials))
    if asks is None:
        if allowed:
            return None
        default = policy.default
        if default is _ALLOW:
            return None
        if default is _DENY:
            return _denied(_DEFAULT_DENIED)
    approver = policy.approver
    if approver is None:
        return _denied(_NO_APPROVER)
    try:
        granted = await approver(call, () if asks is None else tuple(asks))
    except Exception as exc:
        if cancelled():
            raise asyncio.CancelledError() from None
        return _denied(f"{DENIED}: the approver raised {_exception_name(exc)}")
    if cancelled():
        raise asyncio.CancelledError()
    if granted is True:
        return None
    if granted is False:
        return _denied(_APPROVER_REFUSED)
    return _denied(_APPROVER_UNCLEAR)


_ALLOW = Decision.ALLOW
_ASK = Decision.ASK
_DENY = Decision.DENY


class _Track:
    """How the last handler entry of one call's chain ended (P9 in a batch) and how far its
    post-processing got (P10)."""

    __slots__ = ("ended", "result")

    def __init__(self) -> None:
        self.ended = False  # the last handler entry returned or raised
        self.result: object = None  # what it returned, or a _HandlerRaised


class _HandlerRaised:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _map_result(entry: _CompiledTool, result: object) -> ActionOutcome:
    """A chain's (or a handler's) return value as section 6 maps it (E5, E9)."""
    if type(result) is not str:
        # issubclass, not isinstance: an object whose `__class__` claims `str` is not one.
        if not issubclass(type(result), str):
            raise TypeError(
                f"the handler of tool {entry.label} returned {type_label(result)}, "
                "not str: a handler must return the observation text"
            )
        result = str.__str__(result)
    return _outcome(_EXECUTED, result, False)


def _map_exception(exc: Exception) -> ActionOutcome:
    """A chain's (or a handler's) `Exception` as section 6 maps it (E3, E4, E12)."""
    text = _exception_text(exc)
    if isinstance(exc, ToolEnvironmentError):
        if text is None:
            text = f"{_exception_name(exc)}: {_STR_FAILED}"
        return _outcome(_ENV_ERROR, text, False)
    return _outcome(
        _EXECUTED,
        f"{_exception_name(exc)}: {_STR_FAILED if text is None else text}",
        False,
    )


class _Chain:
    """One allowed call's wrapper chain: `proceed()` of position k runs wrapper k, and past the
    last wrapper enters the handler on a fresh plain copy of the arguments (P8)."""

    __slots__ = ("call", "cancelled", "depth", "handler", "track", "wrappers")

    def __init__(
        self,
        handler: ToolHandler,
        call: ToolCall,
        wrappers: tuple[Any, ...],
        cancelled: Cancelled,
        track: _Track | None,
    ) -> None:
        self.handler = handler
        self.call = call
        self.wrappers = wrappers
        self.depth = len(wrappers)
        self.cancelled = cancelled
        self.track = track

    def at(self, position: int) -> Callable[[], Awaitable[Any]]:
        if position == self.depth:
            return self.enter
        return functools.partial(self.wrap, position)

    async def wrap(self, position: int) -> object:
        if self.cancelled():
            raise asyncio.CancelledError()
        return await self.wrappers[position](self.call, self.at(position + 1))

    async def enter(self) -> object:
        if self.cancelled():
            raise asyncio.CancelledError()  # no handler is entered after the cancellation (P9)
        track = self.track
        if track is None:
            return await self.handler(thaw_arguments(self.call.arguments))
        track.ended = False
        try:
            result = await self.handler(thaw_arguments(self.call.arguments))
        except BaseException as error:
            track.ended, track.result = True, _HandlerRaised(error)
            raise
        track.ended, track.result = True, result
        return result


async def _chain(
    entry: _CompiledTool,
    call: ToolCall,
    policy: ToolPolicy,
    cancelled: Cancelled,
    track: _Track | None,
) -> ActionOutcome:
    """Run an allowed call's wrappers, handler and post-processors (P8–P10).

    Raises `CancelledError` once `cancelled()` is seen, whatever a wrapper or post-processor
    made of the cancellation (P9): a swallowed cancellation never becomes an outcome.
    """
    handler = entry.handler
    assert handler is not None
    wrappers = policy.wrappers
    try:
        if wrappers:
            result = await _Chain(handler, call, wrappers, cancelled, track).wrap(0)
        elif track is None:
            result = await handler(thaw_arguments(call.arguments))
        else:
            result = await _Chain(handler, call, wrappers, cancelled, track).enter()
    except Exception as exc:
        if cancelled():
            raise asyncio.CancelledError() from None
        outcome = _map_exception(exc)
    else:
        if cancelled():
            raise asyncio.CancelledError()
        if type(result) is str:
            outcome = _outcome(_EXECUTED, result, False)
        else:
            outcome = _map_result(entry, result)
    posts = policy.post
    if not posts or outcome.status is not _EXECUTED:
        return outcome
    # Post-processing reshapes, never forges, never leaks (P10).
    observation = outcome.observation
    position = -1
    for post in posts:
        position += 1
        try:
            reshaped = await post(call, observation)
        except Exception as exc:
            if cancelled():
                raise asyncio.CancelledError() from None
            return _outcome(
                _EXECUTED,
                f"{WITHHELD}: post-processor {position} raised {_exception_name(exc)}",
                True,
            )
        if cancelled():
            raise asyncio.CancelledError()
        if type(reshaped) is not str:
            if not issubclass(type(reshaped), str):
                return _outcome(
                    _EXECUTED,
                    f"{WITHHELD}: post-processor {position} returned {type_label(reshaped)}, "
                    "not str",
                    True,
                )
            reshaped = str.__str__(reshaped)
        observation = reshaped
    return _outcome(_EXECUTED, observation, outcome.observation_is_synthetic)


async def _policed(
    entry: _CompiledTool, call: ToolCall, policy: ToolPolicy, cancelled: Cancelled
) -> ActionOutcome:
    if policy.deciders or policy.default is not _ALLOW:
        denial = await _decide(policy, call, cancelled)
        if denial is not None:
            return denial
    return await _chain(entry, call, policy, cancelled, None)


def _never() -> bool:
    return False


async def _execute_policed(
    entry: _CompiledTool, call: ToolCall, policy: ToolPolicy
) -> ActionOutcome:
    """`execute` with a policy: the stages, cancellation reaching through all of them (P9)."""
    task = asyncio.current_task()
    if task is None:  # driven by hand, outside a task: nothing can cancel it
        return await _policed(entry, call, policy, _never)
    if _HAS_CANCELLING:
        cancelling = task.cancelling  # type: ignore[attr-defined,unused-ignore]
        before = cancelling()
        return await _policed(entry, call, policy, lambda: cancelling() > before)
    # 3.10 has no Task.cancelling(): run the stages in a child task, so a cancellation of this
    # one is seen here even when a listener swallows it, and pass it on.
    seen: list[bool] = []
    child = asyncio.get_running_loop().create_task(
        _in_child(_policed(entry, call, policy, lambda: bool(seen)))
    )
    try:
        await asyncio.wait((child,))
    except asyncio.CancelledError:
        seen.append(True)
        child.cancel()
        while not child.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait((child,))
        if not child.cancelled():
            child.exception()  # retrieved: the cancellation wins (P9)
        raise
    result = child.result()
    if isinstance(result, _Escaped):
        raise result.error  # the stage's own object (E6, P4)
    return result


class _Escaped:
    """A `KeyboardInterrupt` or `SystemExit` a policed call's child task raised (3.10)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def _in_child(stages: Awaitable[ActionOutcome]) -> ActionOutcome | _Escaped:
    """Await `stages` in 3.10's child task, handing a `KeyboardInterrupt` or `SystemExit` back
    to the awaiting call as a value: a task that raises one re-raises it out of the event loop,
    past every caller, instead of to whoever awaits the task."""
    try:
        return await stages
    except (KeyboardInterrupt, SystemExit) as error:
        return _Escaped(error)
