"""Issue 18 (and issue 22 item 1): certification judges realistic input only, and judges what
the executor returns without trusting the executor's objects; reports show what differs."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hostile.agreeable_observation import Agreeable, AgreeableObservation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance._core.data import fingerprint, picture_text
from conformance._core.report import short_numbers
from conformance.engine import certify
from conformance.executor import behaviours as bh
from conformance.executor.properties import PROPERTIES, ScenarioSource
from conformance.executor.properties.dispatch import traps
from conformance.executor.properties.edges import hostile_traps
from conformance.executor.properties.scenarios import Violation
from conformance.executor.properties.validation import traps as validation_traps
from polyloop import Action, ActionOutcome, ActionStatus, RegistryExecutor

_JSON_SCALARS = (str, int, float, bool, type(None))


def _is_json_call_data(value: Any) -> bool:
    """What ``json.loads`` gives, after ToolCall's freezing: exact-str keys, JSON scalars,
    mappings and lists/tuples."""
    if hasattr(value, "items"):
        return all(type(k) is str and _is_json_call_data(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_is_json_call_data(item) for item in value)
    return type(value) in _JSON_SCALARS


def _honest_behaviour(behaviour: Any) -> bool:
    final = behaviour.final
    if isinstance(final, bh.RaiseError):
        return final.kind not in bh.HOSTILE_ERROR_KINDS
    if isinstance(final, bh.ReturnNonStr):
        return final.kind not in bh.HOSTILE_NON_STR_KINDS
    if isinstance(final, bh.RaiseUnprintable):
        return final.raises not in bh.HOSTILE_STR_RAISES_KINDS
    return True


def _realistic(scenario: Any) -> bool:
    for step in scenario.steps:
        call = step.action.tool_call
        if call is not None and not (type(call.name) is str and _is_json_call_data(call.arguments)):
            return False
        if step.behaviour is not None and not _honest_behaviour(step.behaviour):
            return False
    return True


def test_strict_hand_picked_scenarios_are_realistic_and_hardened_ones_are_not() -> None:
    picked = {**validation_traps(), **traps()}
    unrealistic = [c for c, scenarios in picked.items() for s in scenarios if not _realistic(s)]
    assert unrealistic == []
    hostile = hostile_traps()
    assert set(hostile) == {"E2", "E4", "E9", "E12", "E13"}
    assert all(not _realistic(s) for scenarios in hostile.values() for s in scenarios)


_SOURCE = ScenarioSource.generated(0, 8)


@pytest.mark.parametrize("clause", sorted(PROPERTIES))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_strict_generated_scenarios_are_realistic(clause: str, data: st.DataObject) -> None:
    """Item 1: every generated call is what JSON decoding gives, and every handler behaviour
    honest, so no core/strict verdict rests on an object that lies about itself."""
    scenario = data.draw(PROPERTIES[clause].scenarios(_SOURCE))
    assert _realistic(scenario), scenario


def test_the_witness_passes_strict_and_fails_hardened_on_the_traps() -> None:
    from specificity.correct.witness import Honest

    strict = certify(Honest, level="strict", profile="quick", seed=0, only=["E4", "E9", "E12"])
    assert strict.passed, strict.to_text()
    hardened = certify(Honest, level="hardened", profile="quick", seed=0, only=["E4", "E9"])
    assert {r.id: r.status for r in hardened.results} == {"E4": "fail", "E9": "fail"}


def test_E5_a_str_subclass_that_agrees_with_everything_is_judged_by_its_text() -> None:
    """Issue 22 item 1: the oracle compares exact str copies, not the executor's ``!=``."""
    assert Agreeable("x") == "y" and not Agreeable("x") != "y"  # noqa: SIM202
    report = certify(AgreeableObservation, profile="quick", seed=0, only=["E5", "E15"])
    assert report.result("E5").status == "fail", report.to_text()


def test_E13_a_difference_json_hides_is_shown() -> None:
    """Item 5: bytes and a bytearray, or a mutated str subclass, never read alike."""
    assert picture_text(fingerprint({"raw": b"ab"})) != picture_text(fingerprint({"raw": b"ab!"}))
    shown = Violation("m", expected="{'a': 1}", actual="{'a': 1}")
    assert shown.actual != shown.expected and "differ" in shown.actual


def test_V1_a_400_digit_integer_is_shortened() -> None:
    text = short_numbers(f"rejected {{'n': {10**399}}}")
    assert "400 digits" in text and len(text) < 80


def test_E12_compares_the_whole_line_and_says_when_there_was_no_outcome() -> None:
    class BareText(RegistryExecutor):
        """Says only "<exception str() failed>" for an ordinary exception: no class name."""

        async def execute(self, action: Action) -> ActionOutcome:
            outcome = await super().execute(action)
            if outcome.status is ActionStatus.EXECUTED and "str() failed" in outcome.observation:
                return ActionOutcome(
                    status=outcome.status,
                    observation="<exception str() failed>",
                    observation_is_synthetic=False,
                    env_reported_completion=False,
                    observation_truncated_chars=0,
                )
            return outcome

    report = certify(BareText, profile="quick", seed=0, only=["E12"])
    result = report.result("E12")
    assert result.status == "fail", report.to_text()
    assert "the observation is '<exception str() failed>'" in (result.message or "")


_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="leaky")
_RELEASE = threading.Event()


class LeaksAThreadPerCancel(RegistryExecutor):
    """Hops through a shared two-thread pool before each call and, when cancelled, leaves a
    thread blocked in it: after two cancellations no call starts (issue 18's stuck cascade)."""

    async def execute(self, action: Action) -> ActionOutcome:
        await asyncio.get_running_loop().run_in_executor(_POOL, lambda: None)
        try:
            return await super().execute(action)
        except asyncio.CancelledError:
            _POOL.submit(_RELEASE.wait)
            raise


def test_E6_an_executor_that_stops_answering_is_not_charged_with_later_clauses() -> None:
    try:
        report = certify(
            LeaksAThreadPerCancel, profile="ci", seed=0, only=["E6", "E7", "E8"], deadline=1.0
        )
    finally:
        _RELEASE.set()
    statuses = {r.id: r.status for r in report.results}
    assert statuses == {"E6": "fail", "E7": "skipped", "E8": "skipped"}, report.to_text()
    assert "stopped answering during E6" in (report.result("E6").message or "")
    assert "not judged" in (report.result("E7").message or "")
