"""Issue 9, round 3: defect 9 (property names runtimes treat specially reach E8), V8 for
every JSON type, and defect 7 (the target's output captured per counterexample).

Each test certifies a tiny broken executor at profile ci, seed 0 (narrowed with ``only=``)
and asserts the kit catches it on its clause, or inspects the kit's trap tables directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest
from zoo.base import ZooExecutor, thaw

from conformance import certify
from conformance._core.text import json_text
from conformance.properties import dispatch, validation
from conformance.strategies import SPECIAL_PROPERTY_NAMES
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
