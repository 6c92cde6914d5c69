"""Strategies, an independent verdict oracle and scripted handlers for polyloop's own tests.

Nothing here imports polyloop's private modules: the expected behaviour is computed from the
contract (CONTRACT.md sections 1-7), so a bug in the library cannot hide in a shared helper.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
NON_STANDARD_TYPES = ("float", "dict", "any", "tuple", "Integer", "int", "str")
"""Type names seen in real tool schemas that JSON Schema does not define (V6: accept all)."""

DRAFT04 = "http://json-schema.org/draft-04/schema#"
DRAFT06 = "http://json-schema.org/draft-06/schema#"
DRAFT07 = "http://json-schema.org/draft-07/schema#"
DRAFT2019 = "https://json-schema.org/draft/2019-09/schema"
DRAFT2020 = "https://json-schema.org/draft/2020-12/schema"

# Dialects in which a float with zero fractional part is an integer and `$ref` handling does
# not matter for the ref-free schemas generated below. `None` means "no $schema" (2020-12).
INTEGER_FLOAT_DIALECTS = (None, DRAFT06, DRAFT07, DRAFT2019, DRAFT2020)

# Distinctive text and numbers that must never appear in a rejection message (V8).
SENTINEL = "SENTINEL-VALUE-7f3a9c"
SENTINEL_INT = 739184620591373


# --------------------------------------------------------------------------------------------
# Independent JSON semantics


def json_types(value: object) -> set[str]:
    """The JSON types `value` belongs to, as V6 defines them (draft-06+ integer rule)."""
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number", "integer"} if value.is_integer() else {"number"}
    if isinstance(value, str):
        return {"string"}
    if isinstance(value, (list, tuple)):
        return {"array"}
    if isinstance(value, Mapping):
        return {"object"}
    return set()


def declared_types(prop_schema: object) -> list[str] | None:
    """The type names a property schema declares, or None when it declares none."""
    if not isinstance(prop_schema, Mapping) or "type" not in prop_schema:
        return None
    declared = prop_schema["type"]
    if isinstance(declared, str):
        return [declared]
    return [t for t in declared if isinstance(t, str)]


def type_mismatch(prop_schema: object, value: object) -> bool:
    """True when V6 requires rejecting `value` for this property schema."""
    names = declared_types(prop_schema)
    if names is None or any(name not in JSON_TYPES for name in names):
        return False
    return not (json_types(value) & set(names))


def expected_problems(schema: Mapping[str, Any], arguments: object) -> dict[str, list[str]]:
    """The V3-V6 problems of `arguments` under a ref-free `schema`, by clause.

    Empty dict: the subset must accept. This is only valid for the ref-free schemas built by
    `object_schemas()`; `$ref` dialect rules are tested with explicit examples instead.
    """
    if not isinstance(arguments, Mapping):
        return {"V3": []}
    problems: dict[str, list[str]] = {}
    properties = schema.get("properties", {})
    missing = [key for key in schema.get("required", []) if key not in arguments]
    if missing:
        problems["V4"] = missing
    if schema.get("additionalProperties") is False and "patternProperties" not in schema:
        extra = [key for key in arguments if key not in properties]
        if extra:
            problems["V5"] = extra
    mismatched = [
        key
        for key, value in arguments.items()
        if key in properties and type_mismatch(properties[key], value)
    ]
    if mismatched:
        problems["V6"] = mismatched
    return problems


def thaw(value: object, leaf: Callable[[object], Any] = lambda leaf: leaf) -> Any:
    """A fresh plain copy of a possibly frozen value (mappings become dicts, lists and tuples
    lists, frozensets sets), every key, member and other leaf passed through `leaf`: for
    comparisons, and (with private copies as leaves) what the zoo hands a handler (E13)."""
    if isinstance(value, Mapping):
        return {leaf(key): thaw(item, leaf) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item, leaf) for item in value]
    if isinstance(value, frozenset):
        return {leaf(item) for item in value}
    return leaf(value)


def containers(value: object) -> list[object]:
    """Every mapping and sequence inside `value` (itself included), depth first."""
    found: list[object] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            found.append(item)
            stack.extend(item)
    return found


def path_text(root: str, keys: Sequence[str]) -> str:
    """`parameters['a']['b']` — the JSON path notation the contract uses (S4)."""
    return root + "".join(f"[{key!r}]" for key in keys)


# --------------------------------------------------------------------------------------------
# Strategies

simple_keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
"""Keys that print the same in any message style (no quotes, escapes or shortening)."""

odd_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=30
)
"""Keys and names with anything in them: quotes, newlines, control characters, emoji."""

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
integral_floats = st.integers(-(2**52), 2**52).map(float)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), finite_floats, st.text(max_size=20)
)

json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
    ),
    max_leaves=12,
)


def values_of_type(type_name: str) -> st.SearchStrategy[object]:
    """JSON values of exactly one JSON type (integers include integral floats)."""
    return {
        "null": st.none(),
        "boolean": st.booleans(),
        "integer": st.one_of(st.integers(), integral_floats),
        "number": st.one_of(st.integers(), finite_floats),
        "string": st.text(max_size=12),
        "array": st.lists(json_scalars, max_size=3),
        "object": st.dictionaries(simple_keys, json_scalars, max_size=3),
    }[type_name]


def values_not_of_types(type_names: Sequence[str]) -> st.SearchStrategy[object]:
    """JSON values that belong to none of `type_names` (may be empty if impossible)."""
    others = [
        name
        for name in JSON_TYPES
        if name not in type_names
        and not (name == "integer" and "number" in type_names)
        and not (name == "number" and "integer" in type_names)
    ]
    strategies = [values_of_type(name) for name in others]
    if "integer" in type_names and "number" not in type_names:
        strategies.append(finite_floats.filter(lambda f: not f.is_integer()))
    if not strategies:
        return st.nothing()
    return st.one_of(strategies).filter(lambda v: not (json_types(v) & set(type_names)))


# Keywords the subset must ignore (V7). Each is a well-formed schema fragment.
v7_extras = st.fixed_dictionaries(
    {},
    optional={
        "description": st.text(max_size=10),
        "enum": st.lists(json_scalars, min_size=1, max_size=3),
        "minimum": st.integers(-5, 5),
        "maxLength": st.integers(0, 3),
        "format": st.sampled_from(["email", "date-time", "uri", "ipv4"]),
        "pattern": st.sampled_from(["^a", "[0-9]+", "^$"]),
        "items": st.fixed_dictionaries({"type": st.sampled_from(JSON_TYPES)}),
        "properties": st.dictionaries(
            simple_keys, st.fixed_dictionaries({"type": st.sampled_from(JSON_TYPES)}), max_size=2
        ),
        "anyOf": st.lists(
            st.fixed_dictionaries({"type": st.sampled_from(JSON_TYPES)}), min_size=1, max_size=2
        ),
        "not": st.fixed_dictionaries({"type": st.sampled_from(JSON_TYPES)}),
    },
)

type_declarations = st.one_of(
    st.sampled_from(JSON_TYPES),
    st.lists(st.sampled_from(JSON_TYPES), min_size=1, max_size=3, unique=True),
    st.sampled_from(NON_STANDARD_TYPES),
    st.lists(st.sampled_from(JSON_TYPES + NON_STANDARD_TYPES), min_size=1, max_size=3, unique=True),
)


@st.composite
def property_schemas(draw: st.DrawFn) -> dict[str, object]:
    """A property schema: maybe a `type` (standard, list, or non-standard), plus V7 noise."""
    schema = dict(draw(v7_extras))
    if draw(st.booleans()):
        schema["type"] = draw(type_declarations)
    return schema


@st.composite
def object_schemas(draw: st.DrawFn) -> dict[str, object]:
    """A ref-free tool `parameters` schema exercising V4-V7 (and the dialects of V6)."""
    properties = draw(st.dictionaries(simple_keys, property_schemas(), max_size=5))
    schema: dict[str, object] = {}
    dialect = draw(st.sampled_from(INTEGER_FLOAT_DIALECTS))
    if dialect is not None:
        schema["$schema"] = dialect
    if draw(st.booleans()):
        schema["type"] = "object"
    schema["properties"] = properties
    candidates = sorted(properties) + draw(st.lists(simple_keys, max_size=2))
    if candidates and draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(candidates), unique=True, max_size=4))
    additional = draw(st.sampled_from([None, False, True, {}]))
    if additional is not None:
        schema["additionalProperties"] = additional
    if draw(st.integers(0, 3)) == 0:
        schema["patternProperties"] = {"^x": {"description": "pattern"}}
    return schema


@st.composite
def arguments_for(draw: st.DrawFn, schema: Mapping[str, Any]) -> dict[str, object]:
    """Arguments near `schema`: declared keys with well- or ill-typed values, maybe extras."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    arguments: dict[str, object] = {}
    for key, prop in properties.items():
        if not draw(st.booleans()):
            continue
        names = declared_types(prop)
        usable = [n for n in names or [] if n in JSON_TYPES]
        if usable and draw(st.booleans()):
            arguments[key] = draw(values_of_type(draw(st.sampled_from(usable))))
        else:
            arguments[key] = draw(json_values)
    for key in schema.get("required", []):
        if key not in arguments and draw(st.booleans()):
            arguments[key] = draw(json_values)
    if draw(st.booleans()):
        arguments.update(draw(st.dictionaries(simple_keys, json_values, max_size=2)))
    return arguments


non_mappings = st.one_of(
    json_scalars, st.lists(json_scalars, max_size=3), st.tuples(st.integers()), st.just(b"raw")
)


# --------------------------------------------------------------------------------------------
# Building specs, registries and actions


def plain_schema(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": dict(properties)}


class RecordingHandler:
    """An async handler that records every call and then does what it was scripted to do.

    `behaviour(arguments)` returns the result (or raises). The handler records only once its
    coroutine runs, so a handler that is called but never awaited records nothing.
    """

    def __init__(self, behaviour: Callable[[dict[str, Any]], object] | None = None) -> None:
        self.behaviour = behaviour or (lambda arguments: "ok")
        self.calls: list[tuple[tuple[object, ...], dict[str, object]]] = []

    async def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls.append((args, kwargs))
        await asyncio.sleep(0)
        return self.behaviour(*args)  # type: ignore[arg-type]

    @property
    def received(self) -> list[object]:
        return [args[0] if args else None for args, _ in self.calls]


def returning(text: object) -> RecordingHandler:
    return RecordingHandler(lambda arguments: text)


def raising(exc: BaseException) -> RecordingHandler:
    def behaviour(arguments: object) -> object:
        raise exc

    return RecordingHandler(behaviour)


async def echo_handler(arguments: dict[str, Any]) -> str:
    return "echo"


def sync_handler(arguments: dict[str, object]) -> str:
    return "sync"


class SyncCallable:
    def __call__(self, arguments: dict[str, object]) -> str:
        return "sync"


class AsyncCallable:
    async def __call__(self, arguments: dict[str, object]) -> str:
        return "async"


class Tools:
    async def method(self, arguments: dict[str, object]) -> str:
        return "method"


async def prefixed(prefix: str, arguments: dict[str, object]) -> str:
    return prefix


SYNC_HANDLERS: dict[str, object] = {
    "function": sync_handler,
    "sync-callable-object": SyncCallable(),
    "partial-of-sync": functools.partial(sync_handler),
    "lambda": lambda arguments: "x",
}
"""Handlers that return instead of awaiting, by how they are written (S5 refuses each, H1
reports each)."""

ASYNC_HANDLERS: dict[str, object] = {
    "async-def": echo_handler,
    "async-call-object": AsyncCallable(),
    "partial": functools.partial(prefixed, "p"),
    "partial-of-object": functools.partial(AsyncCallable()),
    "nested-partial": functools.partial(functools.partial(prefixed), "p"),
    "method": Tools().method,
}
"""Every way of writing an async handler that S5 accepts (and H1 passes)."""


def make_spec(
    name: str = "tool",
    parameters: Mapping[str, object] | None = None,
    handler: object = echo_handler,
    **fields: object,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"The {name} tool.",
        parameters=plain_schema() if parameters is None else parameters,
        handler=handler,  # type: ignore[arg-type]
        **fields,  # type: ignore[arg-type]
    )


def make_registry(*names: str, handler: object = echo_handler) -> ToolRegistry:
    return ToolRegistry([make_spec(name, handler=handler) for name in names])


def call_action(name: str, arguments: object) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


def single_tool_executor(
    handler: object, parameters: Mapping[str, object] | None = None, name: str = "tool"
) -> RegistryExecutor:
    return ToolRegistry([make_spec(name, parameters, handler)]).executor()


def run(action: Action, executor: RegistryExecutor) -> ActionOutcome:
    """Execute one action on a fresh event loop (for synchronous Hypothesis tests)."""
    return asyncio.run(executor.execute(action))


def rejection_message(registry: ToolRegistry, call: ToolCall) -> str | None:
    """`str` of the ToolValidationError `validate` raises, or None when it accepts."""
    try:
        result = registry.validate(call)
    except ToolValidationError as exc:
        return str(exc)
    assert result is None, f"validate returned {result!r}; the contract says None or raise"
    return None


def outcome(
    status: ActionStatus = ActionStatus.EXECUTED, observation: str = "", *, synthetic: bool = False
) -> ActionOutcome:
    """An outcome as E7 wants it (no completion claimed, nothing truncated), built in one place."""
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class FixedExecutor:
    """A project's own executor: structurally an ActionExecutor (no polyloop base class) that
    answers every action with the same outcome and reports the given parameters."""

    answer: ActionOutcome = dataclasses.field(default_factory=outcome)
    params: Mapping[str, str] = dataclasses.field(default_factory=dict)

    async def execute(self, action: Action) -> ActionOutcome:
        return self.answer

    def parameters(self) -> Mapping[str, str]:
        return self.params


def assert_outcome_invariants(outcome: object) -> None:
    """E7 and the outcome's basic shape, for every outcome the executor produces."""
    assert isinstance(outcome, ActionOutcome), f"execute returned {type(outcome).__name__}"
    assert isinstance(outcome.status, ActionStatus)
    assert isinstance(outcome.observation, str)
    assert outcome.env_reported_completion is False
    assert outcome.observation_truncated_chars == 0


def is_finite_json(value: object, depth: int = 0) -> bool:
    """Whether `value` is JSON data as S4 defines it (str keys, finite floats, depth <= 64)."""
    if depth > 64:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and is_finite_json(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(is_finite_json(v, depth + 1) for v in value)
    return False


# Run a command line as `python -c AS_FROM_A_TERMINAL <module> args...`: `python -m <module>`,
# with Ctrl-C's default handler restored first. A runner that started the test suite in the
# background (a non-interactive shell's `cmd &`) hands every child an ignored SIGINT, and Python
# then never raises KeyboardInterrupt; the Ctrl-C tests would time out instead of testing.
AS_FROM_A_TERMINAL = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv = sys.argv[1:]; runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)"
)
