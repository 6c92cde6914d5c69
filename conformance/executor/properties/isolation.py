"""E13, the isolation of a handler's arguments: its own plain copy, whatever it mutates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance._core.data import picture_text
from conformance._core.text import clip, json_text
from conformance.executor.behaviours import fingerprint, is_plain_json, plain_copy
from conformance.executor.oracle import CallVerdict, expect
from conformance.executor.properties.scenarios import Scenario, Violation
from conformance.executor.properties.shared import rejected_outcome, stop_if_hung
from conformance.executor.runner import Trial
from polyloop import ActionOutcome

__all__ = ["check_E13"]


def _clip(value: Any, limit: int = 300) -> str:
    return clip(json_text(value, sort_keys=False), limit)


def _shown(picture: Any, limit: int = 300) -> str:
    """A picture as the report shows it: types and what leaves hold, so two differing
    pictures never print alike (a shared bytearray reads the same in both JSON renderings)."""
    return clip(picture_text(picture), limit)


def check_E13(trial: Trial, scenario: Scenario) -> None:
    """The handler gets its own plain dict; its mutations reach neither the recorded call nor
    a later call. Arguments may hold non-JSON leaves (a set of objects, a str subclass with
    attributes, an object key): those are compared by `fingerprint`, which sees inside them,
    and the executor owes the handler its own copy of them too."""
    call = scenario.steps[0].action.tool_call
    assert call is not None
    original = plain_copy(call.arguments)
    picture = fingerprint(call.arguments)
    json_only = is_plain_json(original)
    observed = trial.run(scenario.tools, scenario.steps)
    expectation = expect(scenario.schemas, scenario.steps[0].action, scenario.steps[0].behaviour)
    for index, item in enumerate(observed):
        stop_if_hung(item, expectation, index)
    calls = [c for item in observed for c in (item.calls or ())]
    # Refusing arguments that are not JSON data is fair (a runtime that carries calls as JSON
    # cannot hand them over, and raising is not E13's to judge); answering for the handler
    # with an outcome of its own, without calling it, is not.
    answered = [
        item
        for item in observed
        if isinstance(item.outcome, ActionOutcome) and not rejected_outcome(item)
    ]
    if (
        trial.white_box
        and not calls
        and answered
        and not json_only
        and expectation.verdict is CallVerdict.MUST_ACCEPT
    ):
        raise Violation(
            "the handler was never called, yet the call was not refused either: it never got "
            "its own copy of the arguments (hand non-JSON leaves over, or reject the call)",
            expected="the handler called with a plain dict equal to the arguments",
            actual=_clip(answered[0].outcome),
        )
    if calls and calls[0].picture != picture:
        if json_only:
            return  # the very first call got other arguments: E8 reports that
        # E8's scenarios hold JSON only, so a non-JSON leaf handed over changed is E13's.
        raise Violation(
            "call 1: the handler got arguments that differ from the call's (a non-JSON leaf "
            "was not handed over as recorded)",
            expected=_shown(picture),
            actual=_shown(calls[0].picture),
        )
    for index, handler_call in enumerate(calls):
        if not isinstance(handler_call.received, Mapping):
            return  # not even a mapping: E8 reports that
        if not (handler_call.plain if json_only else type(handler_call.received) is dict):
            raise Violation(
                f"call {index + 1}: the handler got a "
                f"{type(handler_call.received).__name__} that is not a plain dict "
                "of dicts, lists and JSON values",
                step=index,
                expected="a plain dict equal to the arguments",
                actual=_clip(handler_call.received),
            )
        if handler_call.picture != picture:
            raise Violation(
                f"call {index + 1}: the handler got arguments changed by an earlier "
                "call's mutation",
                step=index,
                expected=_shown(picture),
                actual=_shown(handler_call.picture),
            )
    if len(calls) == 2 and calls[0].received is calls[1].received:
        raise Violation(
            "both calls handed the handler the same dict object",
            step=1,
            expected="a fresh dict per call",
            actual="the same dict object twice",
        )
    if (after := fingerprint(call.arguments)) != picture:
        shared = "" if json_only else " (through a non-JSON leaf it shares with the handler)"
        raise Violation(
            f"the handler's mutation reached the recorded ToolCall{shared}",
            expected=_shown(picture),
            actual=_shown(after),
        )
