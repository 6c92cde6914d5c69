"""The validation edges of issue 9: regex and format latitude (E14), sentinel numbers (V8), and
the edge values the argument generator must produce (V1)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from conformance.executor import strategies as gen
from conformance.executor.oracle import CallVerdict, depends_on_dialect_choice, expect
from conformance.executor.properties import validation
from conformance.executor.strategies import ToolDef
from polyloop import Action, ToolCall

_DAY = {
    "type": "object",
    "properties": {
        "day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
        "mail": {"type": "string", "format": "email"},
    },
}


def _verdict(schema: dict[str, Any], arguments: Any) -> CallVerdict:
    action = Action(tool_call=ToolCall(name="t", arguments=arguments))
    return expect({"t": schema}, action, None, white_box=False).verdict


@pytest.mark.parametrize(
    "value",
    ["0000-00-00\n", "0000-00-0\u0660", "\u0661\u0662\u0663\u0664-00-00"],
)
def test_E14_a_value_valid_only_under_python_re_may_go_either_way(value: str) -> None:
    assert _verdict(_DAY, {"day": value}) is CallVerdict.EITHER


def test_V1_a_value_valid_under_both_regex_readings_must_be_accepted() -> None:
    assert _verdict(_DAY, {"day": "2024-01-31"}) is CallVerdict.MUST_ACCEPT
    assert not depends_on_dialect_choice(_DAY, {"day": "2024-01-31"})


@pytest.mark.parametrize("dialect", ["draft-04", "draft-06", "draft-07", "2019-09"])
def test_E14_up_to_2019_09_a_value_only_a_format_assertion_rejects_may_go_either_way(
    dialect: str,
) -> None:
    schema = {**_DAY, "$schema": gen.DIALECTS[dialect]}
    assert _verdict(schema, {"mail": "not an address"}) is CallVerdict.EITHER
    assert _verdict(schema, {"mail": "user+tag@example.co.uk"}) is CallVerdict.MUST_ACCEPT


@pytest.mark.parametrize("declared", [None, "2020-12"])
def test_V1_in_2020_12_format_is_an_annotation_so_a_non_conforming_string_is_valid(
    declared: str | None,
) -> None:
    """2020-12 (the dialect of a schema without ``$schema``) collects ``format`` as an
    annotation unless a validator is configured to assert it: a validator that asserts it
    rejects a call full JSON Schema accepts (issue 37, item 6)."""
    schema = _DAY if declared is None else {**_DAY, "$schema": gen.DIALECTS[declared]}
    for value in ("not an address", "user+tag@example.co.uk"):
        assert _verdict(schema, {"mail": value}) is CallVerdict.MUST_ACCEPT


def test_E14_escaped_and_class_dollars_are_literal_in_both_readings() -> None:
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": "a[$]\\$"}}}
    assert _verdict(schema, {"p": "xa$$"}) is CallVerdict.MUST_ACCEPT


@pytest.mark.parametrize("text", ["got 7301000417", "value 7301000923.5", "7,301,000,001"])
def test_V8_a_sentinel_number_in_a_message_is_an_echo(text: str) -> None:
    assert gen.has_sentinel(text)


@pytest.mark.parametrize("text", ["limit must be <= 100", "expected integer, got 3 keys", "0"])
def test_V8_ordinary_numbers_are_not_echoes(text: str) -> None:
    assert not gen.has_sentinel(text)


def _numbers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    return []


_TOOLS = (
    ToolDef(
        name="count",
        description="",
        parameters={
            "type": "object",
            "required": ["n"],
            "properties": {"n": {"type": "integer"}, "tag": {"type": "string"}},
        },
    ),
)


@settings(max_examples=40, database=None, suppress_health_check=list(HealthCheck))
@given(gen.invalid_calls(_TOOLS))
def test_V8_every_number_of_an_invalid_call_is_a_sentinel(call: ToolCall) -> None:
    for number in _numbers(call.arguments if isinstance(call.arguments, (dict, list)) else []):
        assert gen.has_sentinel(repr(number)), number


_BOUNDED = {
    "type": "object",
    "required": ["lo", "ex", "s"],
    "properties": {
        "lo": {"type": "integer", "minimum": 1, "maximum": 10},
        "ex": {"type": "number", "exclusiveMinimum": 2, "exclusiveMaximum": 5},
        "s": {"type": "string", "maxLength": 4},
    },
}


@pytest.mark.one_python
@pytest.mark.parametrize(
    "wanted",
    [
        lambda v: v["lo"] == 1,
        lambda v: v["lo"] == 10,
        lambda v: v["ex"] == 2.5,
        lambda v: len(v["s"]) == 4 and not v["s"].isascii(),
    ],
    ids=["at-minimum", "at-maximum", "just-above-exclusive-minimum", "maxLength-non-ascii"],
)
def test_V1_valid_arguments_reach_the_edges_of_a_range(wanted: Any) -> None:
    found = find(
        gen.valid_arguments(_BOUNDED), wanted, settings=settings(max_examples=60, database=None)
    )
    assert wanted(found)


@pytest.mark.one_python
@pytest.mark.parametrize(
    "edge", [1e16, -0.0, 2**64 + 1, 10**400], ids=["1e16", "-0.0", "2**64+1", "10**400"]
)
def test_V1_valid_arguments_send_edge_numbers(edge: Any) -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    found = find(
        gen.valid_arguments(schema),
        lambda v: v["n"] == edge and type(v["n"]) is type(edge),
        settings=settings(max_examples=300, database=None),
    )
    assert found["n"] == edge


def test_V1_V2_V6_V8_traps_have_the_verdicts_their_clause_needs() -> None:
    needed = {
        "V1": CallVerdict.MUST_ACCEPT,
        "V2": CallVerdict.MUST_REJECT,
        "V6": CallVerdict.MUST_REJECT,
        "V8": CallVerdict.MUST_REJECT,
    }
    traps = validation.traps()
    for clause, verdict in needed.items():
        for scenario in traps[clause]:
            step = scenario.steps[0]
            got = expect(scenario.schemas, step.action, step.behaviour).verdict
            assert got is verdict, (clause, step.action)


@given(st.sampled_from(sorted(validation.traps())))
@settings(max_examples=10, database=None)
def test_traps_are_plain_scenarios(clause: str) -> None:
    assert all(len(s.steps) == 1 for s in validation.traps()[clause])
