"""Contract section 3: `polyloop.tools.ToolSpec` (S1-S5)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
from collections.abc import Mapping, MutableMapping

import pytest
from _helpers import (
    ASYNC_HANDLERS,
    SYNC_HANDLERS,
    containers,
    echo_handler,
    json_values,
    path_text,
    simple_keys,
    thaw,
)
from hypothesis import given
from hypothesis import strategies as st

from polyloop import ReplayPolicy, ToolRegistry, ToolSpec

WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()]
FIELDS = (
    "name",
    "description",
    "parameters",
    "replay_policy",
    "completes_run",
    "handler",
    "concurrency_safe",
)


def spec(**overrides: object) -> ToolSpec:
    kwargs: dict[str, object] = {
        "name": "search",
        "description": "Search the docs.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "handler": echo_handler,
    }
    kwargs.update(overrides)
    return ToolSpec(**kwargs)  # type: ignore[arg-type]


json_schemas = st.dictionaries(st.text(max_size=6), json_values, max_size=5)


# ---- S1 ----------------------------------------------------------------------------------


def test_S1_fields_in_contract_order_concurrency_safe_appended_last() -> None:
    assert tuple(f.name for f in dataclasses.fields(ToolSpec)) == FIELDS


def test_S1_defaults_are_never_not_completing_no_handler() -> None:
    minimal = ToolSpec(name="t", description="d", parameters={})
    assert minimal.replay_policy is ReplayPolicy.NEVER
    assert minimal.completes_run is False
    assert minimal.handler is None
    assert minimal.concurrency_safe is False


def test_S1_positional_construction_raises_type_error() -> None:
    with pytest.raises(TypeError):
        ToolSpec("t", "d", {})  # type: ignore[misc]


def test_S1_frozen_and_slotted() -> None:
    tool = spec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]
    assert "__slots__" in vars(ToolSpec)
    assert not hasattr(tool, "__dict__")


def test_S1_all_fields_kept() -> None:
    tool = spec(replay_policy=ReplayPolicy.SAFE, completes_run=True)
    assert (tool.name, tool.description) == ("search", "Search the docs.")
    assert tool.replay_policy is ReplayPolicy.SAFE
    assert tool.completes_run is True
    assert tool.handler is echo_handler


# ---- S2 ----------------------------------------------------------------------------------


@given(json_schemas)
def test_S2_parameters_are_copied_and_deep_frozen(parameters: dict[str, object]) -> None:
    snapshot = copy.deepcopy(parameters)
    tool = spec(parameters=parameters)
    assert isinstance(tool.parameters, Mapping)
    assert thaw(tool.parameters) == snapshot
    for item in containers(parameters):
        if isinstance(item, dict):
            item["__added__"] = True
            for key in list(item):
                if key != "__added__":
                    item[key] = "mutated"
        elif isinstance(item, list):
            item.append("appended")
    assert thaw(tool.parameters) == snapshot, "a change to the caller's dict reached the spec"
    for item in containers(tool.parameters):
        if isinstance(item, Mapping):
            assert not isinstance(item, MutableMapping)
            with pytest.raises(TypeError):
                item["__new__"] = 1  # type: ignore[index]
            for key in list(item):
                with pytest.raises(TypeError):
                    item[key] = None  # type: ignore[index]
        else:
            assert isinstance(item, tuple), f"a {type(item).__name__} inside parameters"


def test_S2_nested_item_assignment_raises_type_error() -> None:
    tool = spec(parameters={"properties": {"tags": {"enum": ["a", "b"]}}})
    with pytest.raises(TypeError):
        tool.parameters["properties"]["tags"]["enum"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        tool.parameters["properties"]["tags"]["enum"][0] = "z"  # type: ignore[index]
    with pytest.raises(TypeError):
        tool.parameters["type"] = "object"  # type: ignore[index]


# ---- S3 ----------------------------------------------------------------------------------


@given(st.one_of(st.none(), st.integers(), st.binary(max_size=4), st.lists(st.text(), max_size=2)))
def test_S3_name_not_str_raises_type_error(name: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(name=name)
    assert "name" in str(info.value)


@given(st.text(st.sampled_from(WHITESPACE), max_size=6))
def test_S3_blank_name_raises_value_error(name: str) -> None:
    with pytest.raises(ValueError) as info:
        spec(name=name)
    assert "name" in str(info.value)


@given(st.one_of(st.none(), st.integers(), st.binary(max_size=4)))
def test_S3_description_not_str_raises_type_error(description: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(description=description)
    assert "description" in str(info.value)


@given(
    st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
)
def test_S3_parameters_not_mapping_raises_type_error(parameters: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(parameters=parameters)
    assert "parameters" in str(info.value)


@given(st.one_of(st.integers(), st.text(max_size=5), st.just(object())))
def test_S3_handler_not_callable_raises_type_error(handler: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(handler=handler)
    assert "handler" in str(info.value)


# ---- S4 ----------------------------------------------------------------------------------

NOT_JSON = st.one_of(
    st.sets(st.integers(), max_size=2),
    st.frozensets(st.integers(), max_size=2),
    st.binary(max_size=4),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.builds(object),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
)


@given(
    keys=st.lists(simple_keys, min_size=1, max_size=5),
    bad=NOT_JSON,
)
def test_S4_non_json_value_raises_naming_its_path(keys: list[str], bad: object) -> None:
    parameters: dict[str, object] = {"type": "object"}
    node = parameters
    for key in keys[:-1]:
        child: dict[str, object] = {"description": "x"}
        node[key] = child
        node = child
    node[keys[-1]] = bad
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters=parameters)
    assert path_text("parameters", keys) in str(info.value)


def test_S4_example_path_from_the_contract() -> None:
    parameters = {"type": "object", "properties": {"tags": {"type": "string", "enum": {"a"}}}}
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters=parameters)
    assert "parameters['properties']['tags']['enum']" in str(info.value)


@given(st.sampled_from([math.nan, math.inf, -math.inf]))
def test_S4_non_finite_float_in_a_list_raises(bad: float) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters={"enum": [1, 2, bad]})
    assert "parameters['enum']" in str(info.value)


@given(st.one_of(st.integers(), st.none(), st.booleans(), st.tuples(st.integers())))
def test_S4_non_str_key_raises(key: object) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters={"properties": {key: {"type": "string"}}})
    assert "parameters['properties']" in str(info.value)


def test_S4_reference_cycle_raises_naming_the_path() -> None:
    parameters: dict[str, object] = {"type": "object"}
    parameters["properties"] = {"self": parameters}
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters=parameters)
    assert not isinstance(info.value, RecursionError)
    assert "parameters['properties']['self']" in str(info.value)


def test_S4_list_cycle_raises() -> None:
    items: list[object] = []
    items.append(items)
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters={"enum": items})
    assert "parameters['enum']" in str(info.value)


@pytest.mark.parametrize("depth", [100, 5000])
def test_S4_deep_nesting_raises_without_recursion_error(depth: int) -> None:
    parameters: dict[str, object] = {}
    node = parameters
    for _ in range(depth):
        child: dict[str, object] = {}
        node["properties"] = child
        node = child
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters=parameters)
    assert not isinstance(info.value, RecursionError)
    assert "parameters['properties']" in str(info.value)


def test_S4_deep_list_nesting_raises_without_recursion_error() -> None:
    value: list[object] = []
    for _ in range(3000):
        value = [value]
    with pytest.raises((TypeError, ValueError)) as info:
        spec(parameters={"enum": value})
    assert not isinstance(info.value, RecursionError)
    assert "parameters" in str(info.value)


def test_S4_moderate_nesting_and_every_json_type_accepted() -> None:
    parameters: dict[str, object] = {"leaf": [None, True, 0, -(2**70), 1.5, "s", (1, 2)]}
    for _ in range(30):
        parameters = {"properties": parameters}
    tool = spec(parameters=parameters)
    node = thaw(tool.parameters)
    for _ in range(30):
        node = node["properties"]  # type: ignore[index]
    assert node == {"leaf": [None, True, 0, -(2**70), 1.5, "s", [1, 2]]}


# ---- S5 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("handler", list(SYNC_HANDLERS.values()), ids=list(SYNC_HANDLERS))
def test_S5_sync_handler_raises_type_error_naming_tool_and_async_def(handler: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(name="fetch_page", handler=handler)
    message = str(info.value)
    assert "fetch_page" in message
    assert "async def" in message


@pytest.mark.parametrize("handler", list(ASYNC_HANDLERS.values()), ids=list(ASYNC_HANDLERS))
def test_S5_async_handlers_accepted(handler: object) -> None:
    assert spec(handler=handler).handler is handler


# ---- S6 ----------------------------------------------------------------------------------


def _classifier(arguments: Mapping[str, object]) -> bool:
    return arguments.get("mode") == "read"


class _SyncClassifier:
    def __call__(self, arguments: Mapping[str, object]) -> bool:
        return True


class _AsyncClassifier:
    async def __call__(self, arguments: Mapping[str, object]) -> bool:
        return True


async def _async_classifier(arguments: Mapping[str, object]) -> bool:
    return True


CLASSIFIERS: dict[str, object] = {
    "true": True,
    "false": False,
    "function": _classifier,
    "lambda": lambda arguments: True,
    "partial": functools.partial(_classifier),
    "sync-call-object": _SyncClassifier(),
}
NOT_CLASSIFIERS: dict[str, object] = {
    "none": None,
    "one": 1,
    "zero": 0,
    "string": "yes",
    "list": [True],
    "async-def": _async_classifier,
    "async-call-object": _AsyncClassifier(),
    "partial-of-async": functools.partial(_async_classifier),
}


@pytest.mark.parametrize("value", list(CLASSIFIERS.values()), ids=list(CLASSIFIERS))
def test_S6_bool_or_plain_callable_accepted_and_kept(value: object) -> None:
    assert spec(concurrency_safe=value).concurrency_safe is value


@pytest.mark.parametrize("value", list(NOT_CLASSIFIERS.values()), ids=list(NOT_CLASSIFIERS))
def test_S6_anything_else_raises_type_error_naming_the_tool(value: object) -> None:
    with pytest.raises(TypeError) as info:
        spec(name="run_shell", concurrency_safe=value)
    message = str(info.value)
    assert "run_shell" in message
    assert "concurrency_safe" in message


def test_S6_async_classifier_message_says_use_def() -> None:
    with pytest.raises(TypeError, match="not async"):
        spec(concurrency_safe=_async_classifier)


def test_S6_field_never_reaches_the_model_schema() -> None:
    """R5: the appended field changes nothing the model sees, byte for byte."""
    plain = ToolRegistry([spec()])
    marked = ToolRegistry([spec(concurrency_safe=_classifier)])
    assert json.dumps(plain.schema_for_model()) == json.dumps(marked.schema_for_model())
    assert plain != marked  # the specs differ; only the projection is the same


# ---- S4 edge case (issue 19) ------------------------------------------------------------------


class _LyingInt(int):
    """An int subclass whose `bit_length` claims it is tiny."""

    def bit_length(self) -> int:
        return 1


def test_S4_an_int_lying_about_its_size_is_still_refused_naming_the_path() -> None:
    huge = _LyingInt(10**5000)
    with pytest.raises(ValueError) as info:
        spec(parameters={"type": "object", "properties": {"n": {"maximum": huge}}})
    message = str(info.value)
    assert message.startswith("parameters['properties']['n']['maximum'] is an integer of about")
    assert "5000 digits" in message
