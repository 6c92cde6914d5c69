"""Issue 9, round 3: defect 9 (property names runtimes treat specially reach E8), V8 for
every JSON type, and defect 7 (the target's output captured per counterexample).

Each test certifies a tiny broken executor at profile ci, seed 0 (narrowed with ``only=``)
and asserts the kit catches it on its clause, or inspects the kit's trap tables directly.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from zoo.base import ZooExecutor, thaw
from zoo.independent import EchoesBooleanAndNullValues

from conformance import certify
from conformance._core.report import report_schema
from conformance._core.text import json_text
from conformance.executor.properties import dispatch, validation
from conformance.executor.strategies import (
    SPECIAL_PROPERTY_NAMES,
    echoes_literals,
    flipped_literals,
    has_literals,
)
from polyloop import ToolCall

# --- defect 9: special property names -----------------------------------------------------------


def _argument_keys(scenarios: list[Any]) -> Iterator[str]:
    for scenario in scenarios:
        for step in scenario.steps:
            call = step.action.tool_call
            if call is not None and isinstance(call.arguments, Mapping):
                yield from call.arguments


@pytest.mark.parametrize("clause", ["V1", "E8"])
def test_defect9_traps_name_every_special_property_name(clause: str) -> None:
    traps = {**validation.traps(), **dispatch.traps()}[clause]
    assert set(SPECIAL_PROPERTY_NAMES) <= set(_argument_keys(traps))


def _dropping(name: str) -> type[ZooExecutor]:
    class DropsOneName(ZooExecutor):
        """Drops one property name from the arguments before the handler sees them."""

        DROPPED: ClassVar[str] = name

        def handler_arguments(self, call: ToolCall) -> object:
            arguments = thaw(call.arguments)
            if isinstance(arguments, dict):
                arguments.pop(self.DROPPED, None)
            return arguments

    return DropsOneName


@pytest.mark.parametrize("name", SPECIAL_PROPERTY_NAMES)
def test_defect9_E8_catches_an_executor_that_drops_a_special_property_name(name: str) -> None:
    report = certify(_dropping(name), level="strict", profile="ci", seed=0, only=["E8"])
    result = report.result("E8")
    assert result.status == "fail", report.to_text()
    assert result.counterexample is not None
    # the counterexample is the trap naming `name` alone: expected has it, actual has not
    assert result.counterexample.expected == json_text({name: f"value of {name}"}, sort_keys=False)
    assert result.counterexample.actual == "the handler received {}"


# --- defect 7: the target's logging and warnings, per counterexample ----------------------------

_LOGGER = "tests.kit.defect7"


class LogsEveryCallDropsConfig(ZooExecutor):
    """Logs every call it gets; drops ``config`` (E8), logging and warning a distinctive line
    only when it does."""

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        logging.getLogger(_LOGGER).warning("call %s", json.dumps(arguments, sort_keys=True))
        if isinstance(arguments, dict) and "config" in arguments:
            del arguments["config"]
            logging.getLogger(_LOGGER).error("DEFECT7-LOG dropped config")
            warnings.warn("DEFECT7-WARNING dropped config", UserWarning, stacklevel=1)
        return arguments


def test_defect7_the_counterexample_shows_only_the_output_of_its_own_example() -> None:
    with pytest.warns(UserWarning, match="DEFECT7-WARNING"):  # still shown, as before
        report = certify(
            LogsEveryCallDropsConfig, level="strict", profile="ci", seed=0, only=["E8"]
        )
    example = report.result("E8").counterexample
    assert example is not None, report.to_text()
    assert example.action == {
        "tool_call": {"name": "special", "arguments": {"config": "value of config"}}
    }
    call_line = f"WARNING {_LOGGER}: call " + json.dumps({"config": "value of config"})
    assert example.output[:2] == (call_line, f"ERROR {_LOGGER}: DEFECT7-LOG dropped config")
    assert len(example.output) == 3
    assert example.output[2].startswith("UserWarning: DEFECT7-WARNING dropped config (")
    # every earlier (passing) example logged its call too: counted, not shown
    assert example.output_dropped >= 10
    text = report.to_text()
    assert f"  output     {call_line}" in text
    assert "DEFECT7-WARNING" in text
    assert (
        f"({example.output_dropped} lines logged or warned elsewhere in this clause, not shown)"
        in text
    )
    assert text.count(f"{_LOGGER}: call ") == 1
    data = report.to_json()
    assert data["results"][0]["counterexample"]["output"] == list(example.output)
    jsonschema.validate(data, report_schema())


class QuietDropsConfig(LogsEveryCallDropsConfig):
    """The same bug, without a word."""

    def handler_arguments(self, call: ToolCall) -> object:
        arguments = thaw(call.arguments)
        if isinstance(arguments, dict):
            arguments.pop("config", None)
        return arguments


def test_defect7_a_quiet_target_gets_no_output_section() -> None:
    report = certify(QuietDropsConfig, level="strict", profile="ci", seed=0, only=["E8"])
    example = report.result("E8").counterexample
    assert example is not None and example.output == () and example.output_dropped == 0
    assert "  output " not in report.to_text()
    assert "output" not in report.to_json()["results"][0]["counterexample"]


# --- V8 of every JSON type: booleans and nulls ----------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["true", "null", "x", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


def _type_names(value: Any) -> str:
    """A careful validator's message: JSON type names, schema words, never a value."""
    if isinstance(value, dict):
        inner = ", ".join(f"{k!r}: {_type_names(v)}" for k, v in value.items())
        return f"object {{{inner}}} (additionalProperties: false, null allowed)"
    if isinstance(value, list):
        return "array of " + ", ".join(_type_names(v) for v in value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return type(value).__name__


@given(arguments=st.dictionaries(st.text(max_size=4), _JSON, min_size=1))
def test_V8_a_message_naming_only_types_is_never_taken_for_an_echo(arguments: Any) -> None:
    partner = flipped_literals(arguments)
    text, partner_text = (f"invalid: {_type_names(a)}" for a in (arguments, partner))
    assert not echoes_literals(text, partner_text)


@given(arguments=st.dictionaries(st.text(max_size=4), _JSON, min_size=1))
def test_V8_a_message_echoing_the_arguments_is_caught_when_they_hold_a_literal(
    arguments: Any,
) -> None:
    partner = flipped_literals(arguments)
    for show in (json.dumps, repr):
        text, partner_text = (f"invalid: {show(a)}" for a in (arguments, partner))
        assert echoes_literals(text, partner_text) == has_literals(arguments)


def test_V8_flipped_literals_flips_booleans_makes_null_false_and_keeps_the_rest() -> None:
    value = {"a": [True, None, {"b": False}], "null": "true", "n": 0}
    assert flipped_literals(value) == {"a": [False, False, {"b": True}], "null": "true", "n": 0}


def test_V8_catches_an_executor_that_echoes_only_booleans_and_nulls() -> None:
    report = certify(EchoesBooleanAndNullValues, level="strict", profile="ci", seed=0, only=["V8"])
    result = report.result("V8")
    assert result.status == "fail" and result.message is not None
    assert result.message.startswith("the rejection message echoes a boolean or null")
    assert result.counterexample is not None
    assert "got boolean (true)" in result.counterexample.actual
    assert "got boolean (false)" in result.message
