"""`polyloop.plain_arguments`: a call's arguments as fresh plain JSON data (issue 24 item 2).

An executor that validates with `jsonschema` or writes the call with `json` needs `dict`s and
`list`s, not the read-only mappings and tuples a `ToolCall` stores (section 2). The helper must
give what a handler gets under E13: equal data, a new tree every time, isolated from the call.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import jsonschema
import pytest
from _helpers import containers, json_values
from hypothesis import given
from hypothesis import strategies as st

import polyloop
from polyloop import ToolCall, plain_arguments

argument_mappings = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def only_plain_containers(value: object) -> bool:
    return all(type(item) in (dict, list) for item in containers(value))


def ids_of_containers(value: object) -> set[int]:
    return {id(item) for item in containers(value)}


@given(argument_mappings)
def test_E13_plain_arguments_round_trips_json_data(arguments: dict[str, Any]) -> None:
    snapshot = copy.deepcopy(arguments)
    plain = plain_arguments(ToolCall(name="t", arguments=arguments))
    assert plain == snapshot
    assert only_plain_containers(plain)
    # Plain data: json writes it, and gives back exactly the same text as for the original.
    assert json.dumps(plain, sort_keys=True) == json.dumps(snapshot, sort_keys=True)


@given(json_values)
def test_E13_plain_arguments_thaws_any_shape_of_arguments(arguments: object) -> None:
    # Arguments need not be a mapping (V3 judges that); lists and scalars come back plain too.
    plain = plain_arguments(ToolCall(name="t", arguments=arguments))
    assert plain == arguments
    assert only_plain_containers(plain)


@given(argument_mappings)
def test_E13_plain_arguments_is_a_fresh_tree_every_call(arguments: dict[str, Any]) -> None:
    call = ToolCall(name="t", arguments=arguments)
    first, second = plain_arguments(call), plain_arguments(call)
    assert first == second
    shared = ids_of_containers(first) & ids_of_containers(second)
    assert not shared, "two calls returned the same container object"
    assert not ids_of_containers(first) & ids_of_containers(call.arguments)
    assert not ids_of_containers(first) & ids_of_containers(arguments)


@given(argument_mappings, st.data())
def test_E13_mutating_plain_arguments_reaches_neither_the_call_nor_a_later_copy(
    arguments: dict[str, Any], data: st.DataObject
) -> None:
    call = ToolCall(name="t", arguments=arguments)
    snapshot = copy.deepcopy(arguments)
    plain = plain_arguments(call)
    for item in containers(plain):
        if isinstance(item, dict):
            for key in list(item):
                item[key] = "mutated"
            item["__added__"] = data.draw(json_values)
        elif isinstance(item, list):
            item.append("appended")
    assert plain_arguments(call) == snapshot
    assert arguments == snapshot


def test_E13_plain_arguments_makes_jsonschema_accept_arrays() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array"}}}
    call = ToolCall(name="t", arguments={"tags": ["a", "b"]})
    # The stored tuple is not a JSON array to jsonschema: the reason this helper exists.
    assert isinstance(call.arguments["tags"], tuple)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(call.arguments, schema)
    jsonschema.validate(plain_arguments(call), schema)


def test_E13_plain_arguments_gives_a_fresh_copy_of_a_private_leaf() -> None:
    class Box:
        def __init__(self) -> None:
            self.items = [1]

    box = Box()
    call = ToolCall(name="t", arguments={"box": box, "tags": {"a"}})
    first, second = plain_arguments(call), plain_arguments(call)
    assert first["box"] is not box and first["box"] is not second["box"]
    first["box"].items.append(2)
    first["tags"].add("b")
    assert second["box"].items == [1] and plain_arguments(call)["box"].items == [1]
    assert second["tags"] == {"a"} and plain_arguments(call)["tags"] == {"a"}
    assert box.items == [1]


def test_API_plain_arguments_is_exported_and_refuses_a_non_call() -> None:
    assert "plain_arguments" in polyloop.__all__
    assert polyloop.plain_arguments is plain_arguments
    with pytest.raises(TypeError, match=r"plain_arguments\(\) takes a ToolCall, got dict"):
        plain_arguments({"q": 1})  # type: ignore[arg-type]


def test_E13_plain_arguments_of_a_read_only_mapping_input_is_a_dict() -> None:
    call = ToolCall(name="t", arguments=MappingProxyType({"a": MappingProxyType({"b": (1,)})}))
    plain = plain_arguments(call)
    assert plain == {"a": {"b": [1]}} and type(plain) is dict and type(plain["a"]) is dict
    assert not isinstance(plain["a"]["b"], tuple) and isinstance(plain, Mapping)
