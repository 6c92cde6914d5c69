"""Contract section 2: `polyloop.ports` — ToolCall, Action, ActionExecutor."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Mapping, MutableMapping

import pytest
from _helpers import FixedExecutor, containers, json_values, thaw
from hypothesis import given
from hypothesis import strategies as st

from polyloop import ActionOutcome
from polyloop.ports import Action, ActionExecutor, ToolCall


def mutate_everywhere(value: object) -> None:
    """Change every mutable container inside `value` in place."""
    for item in containers(value):
        if isinstance(item, dict):
            for key in list(item):
                item[key] = "mutated"
            item["__added__"] = 1
        elif isinstance(item, list):
            item.append("appended")
            if item:
                item[0] = "mutated"


def assert_read_only(value: object) -> None:
    """No container inside `value` can be changed: mappings refuse assignment, lists are tuples."""
    for item in containers(value):
        if isinstance(item, Mapping):
            assert not isinstance(item, MutableMapping), f"{type(item).__name__} is mutable"
            with pytest.raises(TypeError):
                item["__new__"] = 1  # type: ignore[index]
            for key in list(item):
                with pytest.raises(TypeError):
                    item[key] = 1  # type: ignore[index]
                with pytest.raises(TypeError):
                    del item[key]  # type: ignore[attr-defined]
        else:
            assert isinstance(item, tuple), f"a {type(item).__name__} was stored, not a tuple"


def test_ports_tool_call_is_frozen_keyword_only() -> None:
    assert [f.name for f in dataclasses.fields(ToolCall)] == ["name", "arguments"]
    call = ToolCall(name="search", arguments={"q": "x"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolCall("search", {"q": "x"})  # type: ignore[misc]


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=5))
def test_ports_tool_call_arguments_are_deep_frozen_copies(arguments: dict[str, object]) -> None:
    snapshot = copy.deepcopy(arguments)
    call = ToolCall(name="t", arguments=arguments)
    assert thaw(call.arguments) == snapshot
    mutate_everywhere(arguments)
    assert thaw(call.arguments) == snapshot, "changing the caller's dict changed the call"
    assert_read_only(call.arguments)


def test_ports_tool_call_nested_containers_cannot_be_mutated() -> None:
    call = ToolCall(name="t", arguments={"a": {"b": [1, {"c": [2]}]}, "d": (3, [4])})
    assert isinstance(call.arguments["a"]["b"], tuple)
    assert isinstance(call.arguments["d"][1], tuple)
    with pytest.raises(TypeError):
        call.arguments["a"]["b"][1]["c"] = []
    with pytest.raises(TypeError):
        call.arguments["a"]["new"] = 1
    with pytest.raises(AttributeError):
        call.arguments["d"][1].append(5)
    assert thaw(call.arguments) == {"a": {"b": [1, {"c": [2]}]}, "d": [3, [4]]}


@given(st.one_of(st.text(), st.integers(), st.none(), st.booleans(), st.floats(allow_nan=False)))
def test_ports_tool_call_keeps_non_mapping_arguments(arguments: object) -> None:
    call = ToolCall(name="t", arguments=arguments)
    assert call.arguments == arguments


@given(st.lists(json_values, max_size=4))
def test_ports_tool_call_list_arguments_are_stored_as_tuples(arguments: list[object]) -> None:
    snapshot = copy.deepcopy(arguments)
    call = ToolCall(name="t", arguments=arguments)
    assert isinstance(call.arguments, tuple)
    mutate_everywhere(arguments)
    assert thaw(call.arguments) == snapshot
    assert_read_only(call.arguments)


def test_ports_action_accepts_exactly_one_of_tool_call_or_code() -> None:
    call = ToolCall(name="t", arguments={})
    assert Action(tool_call=call).tool_call == call
    assert Action(tool_call=call).code is None
    assert Action(code="print(1)").code == "print(1)"
    assert Action(code="print(1)").tool_call is None
    assert [f.name for f in dataclasses.fields(Action)] == ["tool_call", "code"]


def test_ports_action_with_neither_raises_value_error() -> None:
    with pytest.raises(ValueError):
        Action()


def test_ports_action_with_both_raises_value_error() -> None:
    with pytest.raises(ValueError):
        Action(tool_call=ToolCall(name="t", arguments={}), code="print(1)")


def test_ports_action_is_frozen_keyword_only() -> None:
    action = Action(code="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        action.code = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Action(None, "x")  # type: ignore[misc]


class _OnlyExecute:
    async def execute(self, action: Action) -> ActionOutcome:
        raise NotImplementedError


def test_ports_action_executor_is_a_runtime_checkable_protocol() -> None:
    assert isinstance(FixedExecutor(), ActionExecutor)
    assert not isinstance(_OnlyExecute(), ActionExecutor)
    assert not isinstance(object(), ActionExecutor)
    assert inspect.iscoroutinefunction(ActionExecutor.execute)
    assert not inspect.iscoroutinefunction(ActionExecutor.parameters)


# ---- edge cases found in the core (issue 19) -------------------------------------------------


class _HiddenClass:
    """An object whose `__class__` raises: `isinstance` on it raises too."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        raise RuntimeError("no class for you")


@pytest.mark.parametrize(
    "arguments,path",
    [
        ({"a": _HiddenClass()}, "arguments['a']"),
        ({"a": [1, {"b": _HiddenClass()}]}, "arguments['a'][1]['b']"),
        ([_HiddenClass()], "arguments[0]"),
    ],
)
def test_ports_an_argument_whose_class_raises_is_a_type_error_naming_its_path(
    arguments: object, path: str
) -> None:
    with pytest.raises(TypeError) as info:
        ToolCall(name="t", arguments=arguments)
    assert str(info.value).startswith(f"{path} is a _HiddenClass whose __class__ raised")


@pytest.mark.parametrize(
    "key",
    [("a", 1), ("a", ("b", 2.5, None)), (), frozenset({"x", "y"}), ("a", frozenset({1}))],
    ids=["pair", "nested", "empty", "frozenset", "tuple-with-frozenset"],
)
def test_ports_an_immutable_tuple_key_is_kept_not_refused(key: object) -> None:
    call = ToolCall(name="t", arguments={key: "v", "k": 1})
    assert call.arguments == {key: "v", "k": 1}
    assert thaw(call.arguments) == {key: "v", "k": 1}


def test_ports_a_mutable_object_deepcopy_cannot_copy_is_still_refused() -> None:
    import threading

    with pytest.raises(TypeError, match=r"arguments\['lock'\].*no private copy"):
        ToolCall(name="t", arguments={"lock": threading.Lock()})
