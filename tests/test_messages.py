"""polyloop's own rejection wording, pinned exactly (V2-V6, V8).

The contract fixes what a message must name; these tests also fix how polyloop says it, so a
change in wording is a deliberate edit here and never an accident (mutation analysis found
message-building mutants no looser test noticed: docs/detection.md).
"""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import make_spec

from polyloop import ToolCall, ToolRegistry, ToolValidationError

SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string"},
        "n": {"type": ["integer", "null"]},
        "b": {"type": "boolean"},
    },
    "required": ["a"],
    "additionalProperties": False,
}


def message(arguments: object, parameters: Any = SCHEMA, name: str = "tool", call: str = "") -> str:
    registry = ToolRegistry([make_spec(name, parameters)])
    with pytest.raises(ToolValidationError) as caught:
        registry.validate(ToolCall(name=call or name, arguments=arguments))
    return str(caught.value)


PREFIX = "invalid arguments for tool 'tool': "


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "missing required argument(s) 'a'"),
        ({"n": None}, "missing required argument(s) 'a'"),
        ({"n": 7, "b": True}, "missing required argument(s) 'a'"),
        (
            {"a": "x", "zz": 1, "yy": 2},
            "unexpected argument(s) 'zz', 'yy' (accepted: 'a', 'b', 'n')",
        ),
        (
            {"a": 1, "n": "s", "b": None},
            "'a' must be string, got integer; 'n' must be integer or null, got string; "
            "'b' must be boolean, got null",
        ),
        ({"a": "x", "n": 2.5}, "'n' must be integer or null, got number"),
        ({"a": "x", "b": [1]}, "'b' must be boolean, got array"),
        ({"a": "x", "b": {"k": 1}}, "'b' must be boolean, got object"),
        ({"a": True}, "'a' must be string, got boolean"),
        (
            {"zz": 1, "a": 2},
            "unexpected argument(s) 'zz' (accepted: 'a', 'b', 'n'); "
            "'a' must be string, got integer",
        ),
    ],
)
def test_V4_V5_V6_exact_messages(arguments: dict[str, Any], expected: str) -> None:
    assert message(arguments) == PREFIX + expected


def test_V6_a_value_of_a_later_listed_type_is_never_called_wrong() -> None:
    # Another problem sends the call down the message-building path; the valid "null" for
    # ["integer", "null"] must not be reported as a type error there.
    assert message({"n": None, "b": False}) == PREFIX + "missing required argument(s) 'a'"


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ([1], "array"),
        (None, "null"),
        ("s", "string"),
        (1, "integer"),
        (1.5, "number"),
        (True, "boolean"),
        ((), "array"),
        (b"x", "non-JSON bytes"),
    ],
)
def test_V3_exact_message_names_the_json_type(arguments: object, kind: str) -> None:
    assert message(arguments) == f"arguments for tool 'tool' must be a JSON object, got {kind}"


def test_V4_more_than_ten_missing_keys_are_counted() -> None:
    parameters = {"type": "object", "required": [f"k{i}" for i in range(12)]}
    listed = ", ".join(f"'k{i}'" for i in range(10))
    assert message({}, parameters) == PREFIX + f"missing required argument(s) {listed} and 2 more"


def test_V4_exactly_ten_missing_keys_are_all_named_without_a_count() -> None:
    parameters = {"type": "object", "required": [f"k{i}" for i in range(10)]}
    listed = ", ".join(f"'k{i}'" for i in range(10))
    assert message({}, parameters) == PREFIX + f"missing required argument(s) {listed}"


def test_V4_required_duplicates_are_named_once() -> None:
    parameters = {"type": "object", "required": ["a", "a", "b"]}
    assert message({}, parameters) == PREFIX + "missing required argument(s) 'a', 'b'"


def test_V5_closed_schema_without_properties_accepts_none() -> None:
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}
    assert message({"x": 1}, parameters) == PREFIX + "unexpected argument(s) 'x' (accepted: none)"


def test_V6_more_than_ten_type_errors_are_cut_to_ten() -> None:
    parameters = {
        "type": "object",
        "properties": {f"p{i:02d}": {"type": "string"} for i in range(12)},
    }
    text = message({f"p{i:02d}": i for i in range(12)}, parameters)
    assert text.count("must be string, got integer") == 10
    assert "'p09'" in text and "'p10'" not in text


def test_V2_exact_message_lists_visible_tools() -> None:
    assert message({}, call="nope") == "unknown tool 'nope'; the available tools are: 'tool'"
    registry = ToolRegistry()
    with pytest.raises(
        ToolValidationError, match=r"^unknown tool 'x'; the available tools are: none$"
    ):
        registry.validate(ToolCall(name="x", arguments={}))


def test_V2_more_than_twenty_tools_are_counted() -> None:
    registry = ToolRegistry([make_spec(f"t{i:02d}") for i in range(23)])
    with pytest.raises(ToolValidationError) as caught:
        registry.validate(ToolCall(name="x", arguments={}))
    listed = ", ".join(f"'t{i:02d}'" for i in range(20))
    assert str(caught.value) == f"unknown tool 'x'; the available tools are: {listed} and 3 more"


def test_V8_long_tool_name_is_shortened_with_a_count() -> None:
    name = "t" * 100
    shown = "'" + "t" * 64 + "…(+37 chars)"
    parameters = {"properties": {"a": {}}, "additionalProperties": False}
    assert message({"x": 1}, parameters, name=name) == (
        f"invalid arguments for tool {shown}: unexpected argument(s) 'x' (accepted: 'a')"
    )


def test_V8_long_key_is_shortened_to_forty_characters() -> None:
    key = "k" * 60
    parameters = {"properties": {}, "additionalProperties": False}
    shown = "'" + "k" * 24 + "…(+37 chars)"
    assert (
        message({key: 1}, parameters) == PREFIX + f"unexpected argument(s) {shown} (accepted: none)"
    )


def test_V8_whole_message_is_cut_below_two_thousand_characters() -> None:
    props = {f"p{i}" + "p" * 50: {"type": "string"} for i in range(10)}
    parameters = {
        "type": "object",
        "properties": props,
        "required": [f"r{i}" + "r" * 50 for i in range(10)],
        "additionalProperties": False,
    }
    arguments = {**{key: 1 for key in props}, **{f"x{i}" + "x" * 50: 1 for i in range(10)}}
    text = message(arguments, parameters)
    assert 1885 < len(text) <= 1900  # cut at 1,900 with the count of what was cut
    assert text.startswith(PREFIX + "missing required argument(s) 'r0")
    assert text.endswith(" chars)")
