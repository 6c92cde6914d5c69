"""polyloop's JSON freeze/thaw and message helpers, pinned exactly at their limits (S4, E13, V8).

The contract names the limits (S4: 64 levels of `parameters`; V8: messages stay bounded);
polyloop also pins its own numbers (256 levels of arguments, the 80/60/40-character cuts and
the `…(+N chars)` count). Each limit is tested at the boundary from both sides, because a
mutation run showed that an off-by-one in any of them passed every looser test
(docs/detection.md, "Library-test survivors").
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest
from _helpers import make_spec
from hypothesis import given
from hypothesis import strategies as st

from polyloop import Action, ToolCall, ToolRegistry, ToolSpec
from polyloop._json import safe_repr, shorten, thaw, type_label

# ---- shorten / safe_repr / type_label ---------------------------------------------------------


def test_V8_shorten_keeps_text_of_exactly_the_limit() -> None:
    assert shorten("x" * 80) == "x" * 80
    assert shorten("abc", 3) == "abc"
    assert shorten("", 0) == ""


def test_V8_shorten_cuts_one_character_over_the_limit_with_the_count() -> None:
    # The default limit is 80: 65 characters kept, the other 16 counted.
    assert shorten("x" * 81) == "x" * 65 + "…(+16 chars)"
    assert shorten("y" * 79) == "y" * 79


def test_V8_shorten_with_a_tiny_limit_keeps_one_character() -> None:
    # limit - 15 is below one: still one character of the text shows, and the count is exact.
    assert shorten("abcdef", 3) == "a…(+5 chars)"
    assert shorten("abcdefghijklmnopq", 16) == "a…(+16 chars)"
    assert shorten("abcdefghijklmnopqr", 17) == "ab…(+16 chars)"


@given(st.text(max_size=120), st.integers(min_value=0, max_value=100))
def test_V8_shorten_keeps_a_prefix_and_counts_exactly_what_it_cut(text: str, limit: int) -> None:
    result = shorten(text, limit)
    if len(text) <= limit:
        assert result == text
        return
    keep = max(limit - 15, 1)
    assert result == f"{text[:keep]}…(+{len(text) - keep} chars)"


def test_V8_safe_repr_default_limit_is_eighty() -> None:
    assert safe_repr("a" * 78) == "'" + "a" * 78 + "'"  # 80 characters: kept
    assert safe_repr("a" * 79) == "'" + "a" * 64 + "…(+16 chars)"


def test_V8_safe_repr_placeholder_when_repr_raises() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert safe_repr(Broken()) == "<Broken object; repr() failed>"


def _class_named(name: str) -> type:
    return type(name, (), {})


def test_V8_type_label_keeps_a_sixty_character_class_name() -> None:
    name = "C" * 60
    assert type_label(_class_named(name)()) == name


def test_V8_type_label_shortens_a_sixty_one_character_class_name() -> None:
    assert type_label(_class_named("C" * 61)()) == "C" * 45 + "…(+16 chars)"


# ---- freeze_json: S4 paths, depth and integers ------------------------------------------------


def _spec_error(parameters: Any) -> str:
    with pytest.raises((TypeError, ValueError)) as caught:
        ToolSpec(name="t", description="", parameters=parameters)
    return str(caught.value)


def test_S4_path_key_shows_a_key_of_sixty_characters_whole() -> None:
    key = "k" * 58  # its repr is 60 characters
    assert _spec_error({key: float("nan")}) == (
        f"parameters['{key}'] is nan; JSON has no NaN or infinity"
    )


def test_S4_path_key_shortens_a_key_of_sixty_one_characters() -> None:
    key = "k" * 59  # its repr is 61 characters: 45 kept, 16 counted
    shown = "'" + "k" * 44 + "…(+16 chars)"
    assert _spec_error({key: float("inf")}) == (
        f"parameters[{shown}] is inf; JSON has no NaN or infinity"
    )


def _nested_dicts(levels: int) -> dict[str, Any]:
    """`levels` dicts, each the only value of the one above (the root counts as one)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _nested_lists(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_S4_parameters_nested_exactly_sixty_four_dicts_deep_are_accepted() -> None:
    spec = ToolSpec(name="t", description="", parameters=_nested_dicts(64))
    inner: Any = spec.parameters
    for _ in range(63):
        inner = inner["a"]
    assert inner == {}


def test_S4_parameters_nested_sixty_five_dicts_deep_are_refused_naming_the_path() -> None:
    path = "parameters" + "['a']" * 64
    assert _spec_error(_nested_dicts(65)) == f"{path} is nested deeper than 64 levels"


def test_S4_parameters_nested_sixty_four_lists_deep_are_accepted() -> None:
    spec = ToolSpec(name="t", description="", parameters={"enum": _nested_lists(63)})
    inner: Any = spec.parameters["enum"]
    for _ in range(62):
        assert type(inner) is tuple
        inner = inner[0]
    assert inner == ()


def test_S4_parameters_nested_sixty_five_lists_deep_are_refused_naming_the_path() -> None:
    path = "parameters['enum']" + "[0]" * 63
    assert _spec_error({"enum": _nested_lists(64)}) == f"{path} is nested deeper than 64 levels"


@pytest.fixture
def int_str_limit() -> Iterator[None]:
    """Python's default integer-to-string limit (4300 digits), whatever the environment set."""
    if not hasattr(sys, "set_int_max_str_digits"):  # pragma: no cover - before 3.10.7
        pytest.skip("this Python has no limit on integer-to-string conversion")
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


@pytest.mark.usefixtures("int_str_limit")
def test_S4_an_integer_json_cannot_write_is_refused_with_its_digit_count() -> None:
    assert _spec_error({"default": 10**5000}) == (
        "parameters['default'] is an integer of about 5000 digits, more than json can write "
        "(Python's limit for integer-to-string conversion, sys.get_int_max_str_digits()); "
        "write it as a string or a float"
    )


@pytest.mark.usefixtures("int_str_limit")
def test_S4_the_largest_writable_integers_are_accepted() -> None:
    for value in (10**4299, -(10**4299), 2**2000, 2**2001, 2**1999):
        spec = ToolSpec(name="t", description="", parameters={"default": value})
        assert spec.parameters["default"] == value


# ---- freeze_arguments: the argument depth limit (256) -----------------------------------------


def _call_error(arguments: Any) -> str:
    with pytest.raises(ValueError) as caught:
        ToolCall(name="t", arguments=arguments)
    return str(caught.value)


def test_E13_arguments_nested_exactly_256_dicts_deep_are_recorded() -> None:
    call = ToolCall(name="t", arguments=_nested_dicts(256))
    inner: Any = call.arguments
    for _ in range(255):
        assert type(inner) is MappingProxyType
        inner = inner["a"]
    assert inner == {}


def test_E13_arguments_nested_257_dicts_deep_are_refused_naming_the_path() -> None:
    path = "arguments" + "['a']" * 256
    assert _call_error(_nested_dicts(257)) == f"{path} is nested deeper than 256 levels"


def test_E13_arguments_nested_exactly_256_lists_deep_are_recorded() -> None:
    call = ToolCall(name="t", arguments={"x": _nested_lists(255)})
    inner: Any = call.arguments["x"]
    for _ in range(254):
        assert type(inner) is tuple
        inner = inner[0]
    assert inner == ()


def test_E13_arguments_nested_257_lists_deep_are_refused_naming_the_path() -> None:
    path = "arguments['x']" + "[0]" * 255
    assert _call_error({"x": _nested_lists(256)}) == f"{path} is nested deeper than 256 levels"


def test_E13_a_top_level_list_of_256_levels_is_recorded_and_257_refused() -> None:
    ToolCall(name="t", arguments=_nested_lists(256))
    assert _call_error(_nested_lists(257)) == (
        "arguments" + "[0]" * 256 + " is nested deeper than 256 levels"
    )


@given(st.integers(min_value=1, max_value=40), st.data())
def test_E13_depth_counts_one_level_per_container_whatever_the_mix(
    levels: int, data: st.DataObject
) -> None:
    # Alternating dicts and lists: the path names each step, and the recorded call mirrors it.
    kinds = data.draw(st.lists(st.booleans(), min_size=levels, max_size=levels))
    value: Any = 0
    for is_dict in reversed(kinds):
        value = {"k": value} if is_dict else [value]
    call = ToolCall(name="t", arguments={"root": value})
    inner: Any = call.arguments["root"]
    for is_dict in kinds:
        inner = inner["k"] if is_dict else inner[0]
    assert inner == 0


# ---- thaw: what a handler gets (E13) ----------------------------------------------------------


class Box:
    """A non-JSON leaf that can be mutated, so sharing it would be visible."""

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.items == self.items

    __hash__ = None  # type: ignore[assignment]


def test_E13_a_set_leaf_is_recorded_frozen_and_thawed_to_a_fresh_set_of_copies() -> None:
    inner = (1, 2)
    call = ToolCall(name="t", arguments={"s": {inner, "a"}})
    recorded = call.arguments["s"]
    assert type(recorded) is frozenset
    first, second = thaw(recorded), thaw(recorded)
    assert type(first) is set and first == {(1, 2), "a"}
    assert first is not second
    first.add("more")
    assert thaw(recorded) == {(1, 2), "a"}


def test_E13_other_leaves_thaw_to_deep_copies_of_their_own_type() -> None:
    box = Box([1, 2])
    call = ToolCall(name="t", arguments={"box": box, "raw": bytearray(b"ab"), "t": (1, [2])})
    recorded = call.arguments
    assert recorded["box"] == box and recorded["box"] is not box
    handed = thaw(recorded)
    assert type(handed) is dict
    assert type(handed["box"]) is Box and handed["box"] == box
    assert handed["box"] is not recorded["box"]
    assert handed["box"].items is not recorded["box"].items
    handed["box"].items.append(3)
    assert recorded["box"].items == [1, 2]
    assert handed["raw"] == b"ab" and type(handed["raw"]) is bytes
    assert handed["t"] == [1, [2]] and type(handed["t"][1]) is list


def test_E13_non_str_keys_survive_recording_and_thawing_with_their_types() -> None:
    call = ToolCall(name="t", arguments={7: "v", "plain": 1, 2.5: None})
    handed = thaw(call.arguments)
    assert handed == {7: "v", "plain": 1, 2.5: None}
    assert [type(k) for k in handed] == [int, str, float]


def _nested_tuples(levels: int) -> tuple[Any, ...]:
    value: tuple[Any, ...] = (1,)
    for _ in range(levels - 1):
        value = (value,)
    return value


def test_E13_a_tuple_key_of_256_levels_is_shared_as_its_own_copy() -> None:
    # A tuple of immutable leaves is its own best copy: deepcopy returns it, and polyloop
    # keeps it rather than refusing a key it cannot duplicate. 256 levels is the bound.
    key = _nested_tuples(256)
    call = ToolCall(name="t", arguments={key: "v"})
    assert next(iter(call.arguments)) is key
    assert thaw(call.arguments) == {key: "v"}


def test_E13_a_tuple_key_of_257_levels_is_refused_as_an_uncopyable_leaf() -> None:
    with pytest.raises(TypeError) as caught:
        ToolCall(name="t", arguments={_nested_tuples(257): "v"})
    message = str(caught.value)
    assert message.startswith("arguments[(((")
    assert "(a key) is a tuple that copy.deepcopy cannot copy (it returns the same object)" in (
        message
    )


@pytest.mark.asyncio
async def test_E13_the_handler_gets_a_set_for_a_set_and_mutating_it_reaches_nothing() -> None:
    seen: list[Any] = []

    async def handler(arguments: dict[str, Any]) -> str:
        seen.append(arguments["s"])
        arguments["s"].add(99)
        arguments["box"].items.append(99)
        return "ok"

    spec = make_spec("t", {"type": "object"}, handler=handler)
    executor = ToolRegistry([spec]).executor()
    call = ToolCall(name="t", arguments={"s": {1, 2}, "box": Box([1])})
    for _ in range(2):
        outcome = await executor.execute(Action(tool_call=call))
        assert outcome.observation == "ok"
    assert [type(s) for s in seen] == [set, set]
    assert seen[0] is not seen[1]
    assert seen[1] == {1, 2, 99}  # its own fresh copy, with only its own addition
    assert call.arguments["s"] == frozenset({1, 2})
    assert call.arguments["box"].items == [1]


class KeyBox:
    """A mutable object used as a key (hashed by identity)."""

    def __init__(self, items: list[int]) -> None:
        self.items = items


@pytest.mark.asyncio
async def test_E13_a_flat_call_whose_only_key_is_an_object_hands_over_a_copy_of_the_key() -> None:
    """The flat-call fast path of `thaw_arguments` must still copy a key that is no `str`."""
    handed: list[Any] = []

    async def handler(arguments: dict[Any, Any]) -> str:
        (key,) = arguments
        handed.append(key)
        key.items.append(99)
        return "ok"

    spec = make_spec("t", {"type": "object"}, handler=handler)
    executor = ToolRegistry([spec]).executor()
    call = ToolCall(name="t", arguments={KeyBox([1]): "the only key"})
    for _ in range(2):
        assert (await executor.execute(Action(tool_call=call))).observation == "ok"
    (recorded,) = call.arguments
    assert recorded.items == [1]
    assert handed[0] is not handed[1] and handed[1].items == [1, 99]
