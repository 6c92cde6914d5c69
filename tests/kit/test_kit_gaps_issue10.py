"""The kit's pieces that close the issue-10 mutation gaps, each checked on its own: the oracle and
the report helpers never run an argument's or exception's hostile code (E2, E4, E12), the E13
fingerprint sees inside non-JSON leaves, and V6's swapped values stay valid and leave honest
messages alone."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from zoo.base import ZooExecutor

from conformance import certify
from conformance._core.text import STR_FAILED, describe_exception, exception_text, type_name
from conformance.executor.behaviours import (
    CLAIMS_STR,
    HOSTILE_ERROR_KINDS,
    HOSTILE_STR_RAISES_KINDS,
    STR_RAISES_KINDS,
    MutateArguments,
    NamelessError,
    RaiseError,
    RaiseUnprintable,
    ReturnText,
    UnprintableError,
    fingerprint,
)
from conformance.executor.oracle import expect, json_types_of, must_reject, plain_keys
from conformance.executor.properties.validation import _twins
from polyloop import Action, ActionStatus, ToolCall, ToolRegistry, ToolSpec, ToolValidationError

REQUIRES_Q = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


class HostileKey:
    def __hash__(self) -> int:
        return hash("q")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("the kit ran a key's __eq__")


class HostileStr(str):
    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise AssertionError("the kit ran a str key's __eq__")


class Box:
    __hash__ = object.__hash__

    def __init__(self) -> None:
        self.items: list[int] = []


# ---- E2: the oracle on hostile keys --------------------------------------------------------


def test_E2_oracle_judges_a_key_hashed_like_a_required_one_without_running_its_eq() -> None:
    (reason,) = must_reject({"t": REQUIRES_Q}, "t", {HostileKey(): "x"})
    assert reason.clause == "V4" and reason.names == ("q",)


def test_E2_oracle_reads_a_str_subclass_key_as_the_str_it_holds() -> None:
    (reason,) = must_reject({"t": REQUIRES_Q}, "t", {HostileStr("q"): 1})
    assert reason.clause == "V6" and reason.names == ("q",)
    assert must_reject({"t": REQUIRES_Q}, "t", {HostileStr("q"): "x"}) == ()


def test_E2_a_non_str_key_outside_a_closed_schema_is_a_V5_reason_naming_no_str() -> None:
    closed = {"type": "object", "properties": {}, "additionalProperties": False}
    (reason,) = must_reject({"t": closed}, "t", {HostileKey(): "x"})
    assert reason.clause == "V5" and reason.names == ()


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4))
def test_E2_plain_keys_keeps_str_keyed_arguments_as_they_are(arguments: dict[str, Any]) -> None:
    assert plain_keys(arguments) == arguments


# ---- E4 / E12: names and texts of hostile exceptions ---------------------------------------


def test_E4_the_oracle_expects_the_real_name_of_a_class_whose_metaclass_hides_it() -> None:
    kind = next(kind for kind, build in HOSTILE_ERROR_KINDS.items() if build is NamelessError)
    with pytest.raises(RuntimeError):
        _ = type(NamelessError()).__name__
    expectation = expect(
        {"t": {}},
        Action(tool_call=ToolCall(name="t", arguments={})),
        RaiseError(kind=kind, message="m"),
    )
    assert expectation.alternatives[0].observation == "NamelessError: m"
    assert describe_exception(NamelessError("m")) == "NamelessError: m"
    assert type_name(NamelessError()) == "NamelessError"


_ALL_STR_RAISES = {**STR_RAISES_KINDS, **HOSTILE_STR_RAISES_KINDS}


@pytest.mark.parametrize("raises", sorted(_ALL_STR_RAISES))
def test_E12_kit_text_of_an_exception_whose_str_raises_anything(raises: str) -> None:
    exc = UnprintableError("x", raises)
    with pytest.raises(BaseException) as caught:
        str(exc)
    assert type(caught.value) is type(_ALL_STR_RAISES[raises]())
    assert exception_text(exc) == STR_FAILED
    expectation = expect(
        {"t": {}},
        Action(tool_call=ToolCall(name="t", arguments={})),
        RaiseUnprintable(raises=raises),
    )
    assert expectation.alternatives[0].observation == f"UnprintableError: {STR_FAILED}"


def test_E12_a_real_ctrl_c_from_str_still_goes_through() -> None:
    class CtrlC(Exception):
        def __str__(self) -> str:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        exception_text(CtrlC())


def test_E9_the_lying_result_passes_isinstance_but_is_no_str() -> None:
    assert isinstance(CLAIMS_STR, str)
    assert not issubclass(type(CLAIMS_STR), str)


# ---- E13: fingerprints and the vandal ------------------------------------------------------


@given(json_values)
def test_E13_fingerprint_of_json_is_that_of_its_copy_and_frozen_form(value: Any) -> None:
    assert fingerprint(copy.deepcopy(value)) == fingerprint(value)
    frozen = ToolCall(name="t", arguments={"v": value}).arguments
    assert fingerprint(frozen) == fingerprint({"v": value})


def test_E13_fingerprint_keeps_json_types_apart() -> None:
    assert fingerprint([3]) == fingerprint((3.0,))
    assert fingerprint([True]) != fingerprint([1])
    assert fingerprint({"a": None}) != fingerprint({"a": "None"})


@pytest.mark.parametrize(
    "arguments",
    [
        {"tags": {Box()}},
        {Box(): "an object key"},
        {"raw": bytearray(b"ab")},
        {"deep": [{"box": Box()}]},
    ],
    ids=["set member", "object key", "bytearray", "nested object"],
)
def test_E13_the_vandal_changes_what_the_fingerprint_sees(arguments: dict[Any, Any]) -> None:
    before = fingerprint(arguments)
    vandal = MutateArguments(then=ReturnText(text="ok"))
    asyncio.run(vandal.run(arguments, None))  # type: ignore[arg-type]
    assert fingerprint(arguments) != before


def test_E13_a_mutated_str_subclass_attribute_shows() -> None:
    class Noted(str):
        notes: list[int]

    noted = Noted("x")
    noted.notes = []
    before = fingerprint({"label": noted})
    noted.notes.append(1)
    assert fingerprint({"label": noted}) != before


# ---- V6: swapped values --------------------------------------------------------------------

NULLABLE = {
    "type": "object",
    "properties": {"n": {"type": ["integer", "null"]}, "r": {"type": ["number", "string"]}},
    "required": ["q"],
}


@given(st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3))
def test_V6_a_swapped_value_is_valid_and_of_other_json_types(value: Any) -> None:
    for key, twin in _twins(NULLABLE, {"n": value, "r": value}):
        declared = frozenset(NULLABLE["properties"][key]["type"])  # type: ignore[index]
        assert json_types_of(twin) & declared
        assert json_types_of(twin) != json_types_of(value)
        assert json_types_of(value) & declared, "only valid values are swapped"


@pytest.mark.parametrize(
    "schema",
    [
        {**NULLABLE, "anyOf": [{"required": ["n"]}]},
        {**NULLABLE, "patternProperties": {"^n": {"type": "null"}}},
        {"properties": {"n": {"type": ["integer", "null"], "minimum": 3}}},
        {"properties": {"n": {"type": "integer"}}},
    ],
    ids=["root combinator", "patternProperties", "more than a type", "one type"],
)
def test_V6_swaps_nothing_where_the_value_could_fairly_change_the_message(
    schema: dict[str, Any],
) -> None:
    assert _twins(schema, {"n": None}) == []


class NamesEveryKeyItGot(ZooExecutor):
    """Honest: every rejection also lists the keys it received, whatever their values."""

    def validate(self, call: ToolCall) -> None:
        try:
            super().validate(call)
        except ToolValidationError as exc:
            keys = ", ".join(repr(key) for key in getattr(call.arguments, "keys", list)())
            raise ToolValidationError(f"{exc} (received keys: {keys})") from None


def test_V6_an_executor_naming_every_received_key_is_not_accused() -> None:
    report = certify(NamesEveryKeyItGot, only=["V6"], level="strict", profile="ci", seed=0)
    assert report.passed, report.to_text()
    assert report.result("V6").status == "pass"


def test_V6_zoo_base_rejection_of_a_missing_key_does_not_name_valid_neighbours() -> None:
    async def ok(arguments: dict[str, Any]) -> str:
        return "ok"

    spec = ToolSpec(name="t", description="", parameters=NULLABLE, handler=ok)
    outcome = asyncio.run(
        ZooExecutor(ToolRegistry([spec])).execute(
            Action(tool_call=ToolCall(name="t", arguments={"n": None, "r": "s"}))
        )
    )
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert "'n'" not in outcome.observation and "'r'" not in outcome.observation
