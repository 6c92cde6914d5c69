"""Contract section 4: `polyloop.tools.ToolRegistry` (R1-R8) and bad input to its API."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest
from _helpers import echo_handler, json_values, make_spec, simple_keys, thaw
from hypothesis import given
from hypothesis import strategies as st

from polyloop import RegistryExecutor, ReplayPolicy, ToolCall, ToolRegistry, ToolSpec

tool_names = st.lists(simple_keys, min_size=1, max_size=8, unique=True)


def varied_spec(name: str, index: int) -> ToolSpec:
    """Specs that differ in every field, so a field lost on the way would show."""
    return ToolSpec(
        name=name,
        description=f"tool number {index}",
        parameters={"type": "object", "properties": {f"p{index}": {"type": "integer"}}},
        replay_policy=ReplayPolicy.SAFE if index % 2 else ReplayPolicy.NEVER,
        completes_run=index % 3 == 0,
        handler=echo_handler,
    )


# ---- R1 ----------------------------------------------------------------------------------


@given(tool_names)
def test_R1_names_and_schema_follow_registration_order(names: list[str]) -> None:
    specs = [varied_spec(name, i) for i, name in enumerate(names)]
    registry = ToolRegistry(specs)
    assert tuple(registry.names()) == tuple(names)
    assert [entry["name"] for entry in registry.schema_for_model()] == names
    assert tuple(registry.specs) == tuple(specs)


def test_R1_empty_registry() -> None:
    registry = ToolRegistry()
    assert tuple(registry.names()) == ()
    assert registry.schema_for_model() == []
    assert ToolRegistry() == ToolRegistry([])


def test_R1_accepts_any_iterable_of_specs() -> None:
    specs = [varied_spec(name, i) for i, name in enumerate(["b", "a", "c"])]
    assert tuple(ToolRegistry(specs=specs).names()) == ("b", "a", "c")
    assert tuple(ToolRegistry(spec for spec in specs).names()) == ("b", "a", "c")
    assert tuple(ToolRegistry(tuple(specs)).names()) == ("b", "a", "c")


# ---- R2 ----------------------------------------------------------------------------------


@given(
    st.one_of(st.integers(), st.text(max_size=3), st.none(), st.dictionaries(st.text(), st.text()))
)
def test_R2_non_tool_spec_item_raises_type_error(item: object) -> None:
    with pytest.raises(TypeError) as info:
        ToolRegistry([make_spec("ok"), item])  # type: ignore[list-item]
    assert "ToolSpec" in str(info.value)


@given(tool_names, st.data())
def test_R2_duplicate_name_raises_value_error_naming_it(
    names: list[str], data: st.DataObject
) -> None:
    duplicate = data.draw(st.sampled_from(names))
    specs = [make_spec(name) for name in names] + [make_spec(duplicate)]
    with pytest.raises(ValueError) as info:
        ToolRegistry(specs)
    assert duplicate in str(info.value)


# ---- R3 ----------------------------------------------------------------------------------


@given(tool_names)
def test_R3_equality_by_content_and_order(names: list[str]) -> None:
    first = ToolRegistry([varied_spec(name, i) for i, name in enumerate(names)])
    second = ToolRegistry([varied_spec(name, i) for i, name in enumerate(names)])
    assert first is not second
    assert first == second
    assert (first != second) is False
    if len(names) > 1:
        reordered = ToolRegistry(
            [varied_spec(name, i) for i, name in reversed(list(enumerate(names)))]
        )
        assert first != reordered
    changed = ToolRegistry(
        [varied_spec(name, i + (1 if i == 0 else 0)) for i, name in enumerate(names)]
    )
    assert first != changed


def test_R3_different_handlers_make_registries_unequal() -> None:
    async def other(arguments: dict[str, object]) -> str:
        return "other"

    assert ToolRegistry([make_spec("a")]) != ToolRegistry([make_spec("a", handler=other)])


def test_R3_registry_is_not_equal_to_other_types() -> None:
    registry = ToolRegistry([make_spec("a")])
    assert registry != [make_spec("a")]
    assert registry != (make_spec("a"),)
    assert registry != "a"
    assert registry != None  # noqa: E711


def test_R3_registries_are_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(ToolRegistry([make_spec("a")]))
    with pytest.raises(TypeError):
        {ToolRegistry()}


# ---- R4 ----------------------------------------------------------------------------------


@given(tool_names, st.data())
def test_R4_restrict_to_keeps_registration_order_for_any_iterable(
    names: list[str], data: st.DataObject
) -> None:
    registry = ToolRegistry([varied_spec(name, i) for i, name in enumerate(names)])
    before = copy.deepcopy(registry.schema_for_model())
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True), label="chosen")
    shuffled = data.draw(st.permutations(chosen), label="shuffled")
    kind = data.draw(st.sampled_from(["list", "set", "frozenset", "generator", "tuple", "dict"]))
    argument = {
        "list": lambda: list(shuffled),
        "set": lambda: set(shuffled),
        "frozenset": lambda: frozenset(shuffled),
        "generator": lambda: (name for name in shuffled),
        "tuple": lambda: tuple(shuffled),
        "dict": lambda: dict.fromkeys(shuffled),
    }[kind]()
    restricted = registry.restrict_to(argument)
    assert isinstance(restricted, ToolRegistry)
    expected = [name for name in names if name in chosen]
    assert tuple(restricted.names()) == tuple(expected)
    assert registry.schema_for_model() == before, "restrict_to changed the original"
    assert tuple(registry.names()) == tuple(names)
    for name in expected:
        assert restricted.spec_for(name) == registry.spec_for(name)


def test_R4_restrict_to_duplicates_in_names_are_harmless() -> None:
    registry = ToolRegistry([make_spec(name) for name in ["a", "b", "c"]])
    assert tuple(registry.restrict_to(["c", "a", "c"]).names()) == ("a", "c")


def test_R4_handlers_and_every_field_travel_with_specs() -> None:
    async def special(arguments: dict[str, object]) -> str:
        return "special"

    spec_a = ToolSpec(
        name="a",
        description="A",
        parameters={"type": "object"},
        replay_policy=ReplayPolicy.SAFE,
        completes_run=True,
        handler=special,
    )
    registry = ToolRegistry([spec_a, make_spec("b")])
    restricted = registry.restrict_to({"a"})
    kept = restricted.spec_for("a")
    assert kept == spec_a
    assert kept is not None
    assert kept.handler is special
    assert kept.replay_policy is ReplayPolicy.SAFE
    assert kept.completes_run is True
    assert restricted.executor().registry == restricted


@given(
    tool_names, st.lists(simple_keys.map(lambda k: "zz_" + k), min_size=1, max_size=3, unique=True)
)
def test_R4_unknown_names_raise_listing_unknown_and_available(
    names: list[str], unknown: list[str]
) -> None:
    registry = ToolRegistry([make_spec(name) for name in names])
    unknown = [name for name in unknown if name not in names]
    with pytest.raises(ValueError) as info:
        registry.restrict_to([names[0], *unknown])
    message = str(info.value)
    for name in unknown:
        assert name in message, f"unknown name {name!r} not in the message"
    for name in names:
        assert name in message, f"available name {name!r} not in the message"


@pytest.mark.parametrize("bad", [5, None, 3.5, object()], ids=["int", "None", "float", "object"])
def test_R4_restrict_to_non_iterable_raises_type_or_value_error(bad: object) -> None:
    registry = ToolRegistry([make_spec("a")])
    with pytest.raises((TypeError, ValueError)) as info:
        registry.restrict_to(bad)  # type: ignore[arg-type]
    assert str(info.value)


def test_R4_restrict_to_unknown_name_example() -> None:
    registry = ToolRegistry([make_spec("search"), make_spec("fetch")])
    with pytest.raises(ValueError) as info:
        registry.restrict_to(["nope"])
    message = str(info.value)
    assert "nope" in message
    assert "search" in message
    assert "fetch" in message
    assert tuple(registry.names()) == ("search", "fetch")


def test_R4_restrict_to_non_str_names_raise_type_or_value_error() -> None:
    registry = ToolRegistry([make_spec("a")])
    with pytest.raises((TypeError, ValueError)):
        registry.restrict_to([1])  # type: ignore[list-item]


# ---- R5 ----------------------------------------------------------------------------------

parameter_schemas = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


@given(st.lists(parameter_schemas, min_size=1, max_size=4))
def test_R5_schema_for_model_has_exactly_name_description_parameters(
    schemas: list[dict[str, object]],
) -> None:
    originals = copy.deepcopy(schemas)
    specs = [
        ToolSpec(
            name=f"tool{i}",
            description=f"description {i}",
            parameters=schema,
            replay_policy=ReplayPolicy.SAFE,
            completes_run=True,
            handler=echo_handler,
        )
        for i, schema in enumerate(schemas)
    ]
    result = ToolRegistry(specs).schema_for_model()
    assert type(result) is list
    assert len(result) == len(specs)
    for i, entry in enumerate(result):
        assert type(entry) is dict
        assert set(entry) == {"name", "description", "parameters"}
        assert entry["name"] == f"tool{i}"
        assert entry["description"] == f"description {i}"
        assert entry["parameters"] == originals[i]
    assert json.loads(json.dumps(result)) == result


def _assert_plain(value: object) -> None:
    if isinstance(value, (dict, list)):
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            _assert_plain(item)
        return
    assert value is None or type(value) in (str, int, float, bool), type(value)


def test_R5_schema_for_model_returns_fresh_plain_values() -> None:
    parameters = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"enum": ["a", ("b", "c")]}}},
        "required": ("tags",),
    }
    registry = ToolRegistry([make_spec("t", parameters)])
    first = registry.schema_for_model()
    _assert_plain(first)
    expected = copy.deepcopy(first)
    first[0]["name"] = "changed"
    first[0]["parameters"]["properties"]["tags"]["items"]["enum"].append("z")
    first[0]["parameters"]["required"].clear()
    first.append({"name": "x"})
    assert registry.schema_for_model() == expected
    assert registry.schema_for_model() is not registry.schema_for_model()
    assert thaw(registry.spec_for("t").parameters) == thaw(parameters)  # type: ignore[union-attr]


def test_R5_no_other_spec_field_reaches_the_model() -> None:
    async def distinctive_handler_name(arguments: dict[str, object]) -> str:
        return ""

    spec = ToolSpec(
        name="t",
        description="d",
        parameters={},
        replay_policy=ReplayPolicy.SAFE,
        completes_run=True,
        handler=distinctive_handler_name,
    )
    text = json.dumps(ToolRegistry([spec]).schema_for_model())
    assert json.loads(text) == [{"name": "t", "description": "d", "parameters": {}}]
    for leak in ("distinctive_handler_name", "SAFE", "safe", "completes_run", "replay"):
        assert leak not in text


# ---- R6 ----------------------------------------------------------------------------------

R6_CHILD = textwrap.dedent(
    """
    import json, sys
    from polyloop import ToolRegistry, ToolSpec

    async def handler(arguments):
        return "ok"

    names = ["zeta", "alpha", "mike", "bravo", "yankee", "echo", "kilo", "delta", "x1", "q"]
    specs = [
        ToolSpec(
            name=name,
            description="tool " + name,
            parameters={
                "type": "object",
                "properties": {k + name: {"type": "string"} for k in ("z", "a", "m", "b")},
                "required": ["z" + name, "a" + name],
            },
            handler=handler,
        )
        for name in names
    ]
    registry = ToolRegistry(specs)
    chosen = {"kilo", "alpha", "zeta", "q", "echo", "bravo"}
    restricted = registry.restrict_to(chosen)
    restricted_twice = restricted.restrict_to(set(restricted.names()) - {"q"})
    print(json.dumps(registry.schema_for_model()))
    print(json.dumps(list(registry.names())))
    print(json.dumps(restricted.schema_for_model()))
    print(json.dumps(list(restricted.names())))
    print(json.dumps(restricted_twice.schema_for_model()))
    print(json.dumps(list(restricted_twice.names())))
    print(json.dumps(restricted.executor().parameters()))
    sys.stderr.write(json.dumps(list(chosen)))
    """
)


def test_R6_deterministic_across_hash_seeds() -> None:
    outputs: dict[str, bytes] = {}
    set_orders: set[str] = set()
    for seed in ("0", "1", "2", "42", "12345", "4000000000"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", R6_CHILD], env=env, capture_output=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        outputs[seed] = done.stdout
        set_orders.add(done.stderr.decode())
    assert len(set_orders) > 1, "the seeds never changed set order, so this test proves nothing"
    distinct = set(outputs.values())
    assert len(distinct) == 1, f"output differs between PYTHONHASHSEED values: {outputs}"
    lines = next(iter(distinct)).decode().splitlines()
    assert json.loads(lines[3]) == ["zeta", "alpha", "bravo", "echo", "kilo", "q"]
    assert json.loads(lines[5]) == ["zeta", "alpha", "bravo", "echo", "kilo"]


# ---- R7 ----------------------------------------------------------------------------------


@given(tool_names, simple_keys)
def test_R7_spec_for_returns_spec_or_none(names: list[str], other: str) -> None:
    specs = [varied_spec(name, i) for i, name in enumerate(names)]
    registry = ToolRegistry(specs)
    for spec in specs:
        assert registry.spec_for(spec.name) is spec or registry.spec_for(spec.name) == spec
    if other not in names:
        assert registry.spec_for(other) is None


class _OwnSpec(ToolSpec):
    """A project's own ToolSpec subclass: a registry accepts any ToolSpec."""


@given(tool_names, st.data())
def test_R7_spec_for_answers_the_same_before_and_after_a_tool_is_first_called(
    names: list[str], data: st.DataObject
) -> None:
    """A tool's checks are compiled on its first lookup (validation or a call); spec_for,
    restrict_to and the checks themselves do not depend on whether that has happened."""
    specs = [
        (_OwnSpec if i % 2 else ToolSpec)(
            name=name,
            description="",
            parameters={"type": "object", "required": ["x"]},
            handler=echo_handler,
        )
        for i, name in enumerate(names)
    ]
    registry = ToolRegistry(specs)
    called = data.draw(st.sets(st.sampled_from(names)), label="called first")
    for name in called:
        with pytest.raises(ValueError, match="x"):
            registry.validate(ToolCall(name=name, arguments={}))
    kept = registry.restrict_to(names[::2])
    for spec in specs:
        assert registry.spec_for(spec.name) is spec
        registry.validate(ToolCall(name=spec.name, arguments={"x": 1}))  # accepted: no raise
    for spec in specs[::2]:
        assert kept.spec_for(spec.name) is spec
        with pytest.raises(ValueError, match="x"):
            kept.validate(ToolCall(name=spec.name, arguments={}))


def test_R7_spec_for_unusual_input_is_none() -> None:
    registry = ToolRegistry([make_spec("a")])
    assert registry.spec_for("") is None
    assert registry.spec_for("A") is None


# ---- R8 ----------------------------------------------------------------------------------


@given(
    st.lists(
        st.tuples(simple_keys, st.booleans()), min_size=1, max_size=6, unique_by=lambda t: t[0]
    )
)
def test_R8_executor_names_all_specs_without_handler(entries: list[tuple[str, bool]]) -> None:
    specs = [
        make_spec(name, handler=echo_handler if has_handler else None)
        for name, has_handler in entries
    ]
    registry = ToolRegistry(specs)
    missing = [name for name, has_handler in entries if not has_handler]
    if missing:
        with pytest.raises(ValueError) as info:
            registry.executor()
        for name in missing:
            assert name in str(info.value), f"{name!r} lacks a handler but is not named"
    else:
        executor = registry.executor()
        assert isinstance(executor, RegistryExecutor)
        assert executor.registry == registry


def test_R8_specs_checked_when_executor_is_called_not_at_construction() -> None:
    registry = ToolRegistry([make_spec("a", handler=None), make_spec("b", handler=None)])
    assert tuple(registry.names()) == ("a", "b")
    with pytest.raises(ValueError) as info:
        registry.executor()
    assert "a" in str(info.value)
    assert "b" in str(info.value)


def test_R8_empty_registry_gives_an_executor() -> None:
    executor = ToolRegistry().executor()
    assert isinstance(executor, RegistryExecutor)
    assert executor.registry == ToolRegistry()


# ---- bad input to the registry's public API -----------------------------------------------


@pytest.mark.parametrize(
    "specs",
    ["notalist", [1], 5, [None], [{"name": "a"}], object()],
    ids=["str", "list-of-int", "int", "list-of-None", "list-of-dict", "object"],
)
def test_API_bad_specs_argument_raises_type_or_value_error(specs: object) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        ToolRegistry(specs)  # type: ignore[arg-type]
    assert str(info.value)


@pytest.mark.parametrize(
    "call",
    ["notacall", None, {"name": "a", "arguments": {}}, 5],
    ids=["str", "None", "dict", "int"],
)
def test_API_validate_non_tool_call_raises_type_or_value_error(call: object) -> None:
    registry = ToolRegistry([make_spec("a")])
    with pytest.raises((TypeError, ValueError)) as info:
        registry.validate(call)  # type: ignore[arg-type]
    assert str(info.value)


def test_R7_spec_for_and_validate_do_not_mutate_registry() -> None:
    registry = ToolRegistry([make_spec("a", {"type": "object", "required": ["x"]})])
    before = registry.schema_for_model()
    registry.spec_for("zzz")
    with pytest.raises(ValueError):
        registry.validate(ToolCall(name="a", arguments={}))
    assert registry.schema_for_model() == before
