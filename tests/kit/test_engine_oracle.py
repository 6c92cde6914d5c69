"""The oracle: what validation must reject, must accept, or may do either way."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.executor import behaviours as bh
from conformance.executor.oracle import accepts, expect, mentions, must_reject, ref_siblings_inert
from polyloop import Action, ActionStatus, ToolCall

D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
D2020 = "https://json-schema.org/draft/2020-12/schema"

PATH_REF = {
    "type": "object",
    "required": ["path"],
    "additionalProperties": False,
    "properties": {"path": {"$ref": "#/definitions/Path", "type": "string"}},
    "definitions": {"Path": {"type": ["string", "array"]}},
}
ROOT_REF = {
    "$ref": "#/definitions/Args",
    "type": "object",
    "required": ["legacy"],
    "additionalProperties": False,
    "properties": {"legacy": {"type": "integer"}},
    "definitions": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}},
}


def clauses(schema: dict[str, Any], arguments: Any, name: str = "t") -> list[str]:
    return [reason.clause for reason in must_reject({"t": schema}, name, arguments)]


def test_V2_V3_unknown_names_and_non_mappings_must_be_rejected() -> None:
    assert clauses({}, {}, name="T") == ["V2"]
    assert clauses({"type": "object"}, [["a", 1]]) == ["V3"]
    assert clauses({}, '{"a": 1}') == ["V3"]  # even when the schema would accept a string


def test_V4_V5_V6_reasons_and_the_names_they_carry() -> None:
    schema = {
        "type": "object",
        "required": ["a", "b"],
        "additionalProperties": False,
        "properties": {"a": {"type": "integer"}, "b": {"type": ["string", "null"]}},
    }
    reasons = must_reject({"t": schema}, "t", {"a": True, "x": 1})
    assert [(r.clause, r.names) for r in reasons] == [
        ("V4", ("b",)),
        ("V5", ("x",)),
        ("V6", ("a",)),
    ]


@pytest.mark.parametrize(
    "value, rejected",
    [
        (True, True),
        (1.5, True),
        ("1", True),
        (None, True),
        ([1], True),
        (1, False),
        (1.0, False),
        (10**30, False),
    ],
)
def test_V6_json_semantics_for_integer(value: Any, rejected: bool) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert bool(clauses(schema, {"n": value})) is rejected


def test_V6_an_integral_float_is_never_a_certain_rejection_even_under_draft_04() -> None:
    schema = {"$schema": D4, "type": "object", "properties": {"n": {"type": "integer"}}}
    assert not accepts(schema, {"n": 3.0})  # jsonschema: draft-04 has no integral floats
    assert clauses(schema, {"n": 3.0}) == []  # ... so the call is E14 territory
    assert (
        expect(
            {"t": schema},
            Action(tool_call=ToolCall(name="t", arguments={"n": 3.0})),
            bh.ReturnText(text="ok"),
        ).verdict
        == "either"
    )


def test_V6_unknown_type_names_accept_everything_and_so_does_jsonschema_here() -> None:
    schema = {
        "type": "dict",
        "properties": {"x": {"type": "float"}, "y": {"type": ["str"]}},
        "required": ["x"],
    }
    assert clauses(schema, {"x": "not a float", "y": 3}) == []
    assert accepts(schema, {"x": "not a float", "y": 3})
    assert clauses(schema, {}) == ["V4"]


def test_V5_is_skipped_when_pattern_properties_are_present() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "additionalProperties": False,
        "patternProperties": {"^x-": {"type": "string"}},
    }
    assert clauses(schema, {"other": 1}) == []
    assert not accepts(schema, {"other": 1})


@pytest.mark.parametrize(
    "dialect, inert",
    [(D4, True), (D7, True), (None, False), (D2020, False), ("https://example.com/s", True)],
)
def test_ref_siblings_are_inert_up_to_draft_07(dialect: str | None, inert: bool) -> None:
    schema = dict(PATH_REF) if dialect is None else {**PATH_REF, "$schema": dialect}
    assert ref_siblings_inert(schema) is inert
    call = {"path": ["a.txt", "b.txt"]}
    assert bool(clauses(schema, call)) is not inert
    if dialect in (D4, D7):
        assert accepts(schema, call)  # V1: this call must be dispatched


def test_a_draft_07_root_ref_makes_required_and_additional_properties_inert() -> None:
    schema = {**ROOT_REF, "$schema": D7}
    assert clauses(schema, {"q": "x"}) == []
    assert accepts(schema, {"q": "x"})
    modern = {**ROOT_REF, "$schema": D2020}
    assert clauses(modern, {"q": "x"}) == ["V4", "V5"]


def _action(arguments: Any, name: str = "t") -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


@pytest.mark.parametrize(
    "behaviour, clause, status, text",
    [
        (bh.ReturnText(text="hi"), "E5", ActionStatus.EXECUTED, "hi"),
        (bh.RaiseEnvironmentError(message="down"), "E3", ActionStatus.ENV_ERROR, "down"),
        (bh.RaiseError(kind="KeyError", message="k"), "E4", ActionStatus.EXECUTED, "KeyError: 'k'"),
        (
            bh.RaiseError(kind="ValueError", message="v"),
            "E10",
            ActionStatus.EXECUTED,
            "ValueError: v",
        ),
        (
            bh.RaiseError(kind="lookalike ToolEnvironmentError", message="x"),
            "E10",
            ActionStatus.EXECUTED,
            "ToolEnvironmentError: x",
        ),
        (
            bh.RaiseUnprintable(environment=True),
            "E12",
            ActionStatus.ENV_ERROR,
            "UnprintableEnvironmentError: <exception str() failed>",
        ),
    ],
)
def test_dispatched_outcomes_follow_the_table(
    behaviour: Any, clause: str, status: ActionStatus, text: str
) -> None:
    expectation = expect({"t": {"type": "object"}}, _action({}), behaviour)
    assert expectation.verdict == "must accept"
    [alternative] = expectation.alternatives
    assert (alternative.clause, alternative.statuses, alternative.observation) == (
        clause,
        frozenset({status}),
        text,
    )
    assert alternative.synthetic is False and alternative.handler_calls == 1


def test_raising_behaviours_expect_execute_to_raise() -> None:
    [non_str] = expect({"t": {}}, _action({}), bh.ReturnNonStr(kind="None")).alternatives
    assert non_str.raises is TypeError and non_str.must_name == ("t",)
    [base] = expect(
        {"t": {}}, _action({}), bh.RaiseBaseException(kind="KeyboardInterrupt")
    ).alternatives
    assert base.raises is KeyboardInterrupt and base.same_exception
    [cancel] = expect({"t": {}}, _action({}), bh.Suspend()).alternatives
    assert cancel.clause == "E6"


def test_E14_calls_allow_both_a_rejection_and_the_handlers_outcome() -> None:
    schema = {
        "type": "object",
        "properties": {"order": {"type": "string", "enum": ["asc", "desc"]}},
    }
    expectation = expect({"t": schema}, _action({"order": "sideways"}), bh.ReturnText(text="r"))
    assert expectation.verdict == "either"
    assert [a.clause for a in expectation.alternatives] == ["E2", "E5"]
    no_call = expect({"t": schema}, Action(code="print(1)"), None, white_box=False)
    assert no_call.verdict == "no tool call" and no_call.alternatives[0].handler_calls is None


def test_mentions_accepts_escaped_and_shortened_names() -> None:
    key = "\U000114da\U00018cd6 weird\nkey"
    assert mentions(f"unexpected argument(s) {key!r}", key)
    long = "k" * 500
    assert mentions(f"missing {long[:65]}…(+435 chars)", long)
    assert not mentions("missing something else", "query")
