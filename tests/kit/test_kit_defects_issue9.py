"""Kit defects 1, 2, 3, 8, 11, 12, 13 and 14 of issue 9, each reproduced with a tiny executor.

Every test asserts what the kit *should* do, so it is a strict xfail while the defect is
there and turns red (XPASS) the day it is fixed: then its mark is dropped (done for 1, 2, 11,
the look-alike half of 13, and 14; 8 was fixed with its test; the defect-3 test is a
regression guard: it passed before the fix too). Only the public API
(``conformance.certify`` and the `Report` fields) is used. Each run is narrowed with
``only=`` to keep the module fast.

Not here, because no tiny executor reproduced them with the current kit (what was tried is
in ``tests/zoo/independent_analysis.md``): defect 3 (false "flaky" after a deadline stop;
fixed in `_search._hypothesis_test` by reason, guarded below), defect 10 (verdicts depending
on the target module's source text) and the E13 "flaky" wording of defect 13 (the flaky
message now names state kept between calls or executors as a cause).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from zoo.base import ZooExecutor, thaw

from conformance import certify
from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolRegistry,
    ToolSpec,
)


def _xfail(defect: int, why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"issue 9 defect {defect}: {why}")


# --- defect 1: E11 false positive from a fresh object() per call --------------------------------


class ReprOfNonStrResult(ZooExecutor):
    """Breaks E9 only: a non-str result becomes its ``repr`` (as MCP and LangChain do), and
    every result is kept in an audit trail. Each call's outcome depends only on what its
    handler returned, so E11 (concurrent == sequential) holds; but the kit's
    ``ReturnNonStr("object")`` returns a fresh ``object()`` per call, and while the audit
    trail keeps the old ones alive, each new one has another address in its repr."""

    audit: ClassVar[list[object]] = []

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        self.audit.append(result)
        return super().result_outcome(spec, result if isinstance(result, str) else repr(result))


def test_defect1_E11_passes_an_executor_whose_only_bug_is_E9() -> None:
    # Which seeds draw ReturnNonStr("object") depends on the Hypothesis version (seed 0 on
    # 6.170, seeds 1 and 2 on 6.168, the newest for Python 3.10): every one must pass.
    for seed in (0, 1, 2):
        ReprOfNonStrResult.audit.clear()
        try:
            report = certify(ReprOfNonStrResult, profile="ci", seed=seed, only=["E11"])
        finally:
            ReprOfNonStrResult.audit.clear()
        assert report.result("E11").status == "pass", report.to_text()


def test_defect1_control_the_executor_does_break_E9() -> None:
    ReprOfNonStrResult.audit.clear()
    try:
        report = certify(ReprOfNonStrResult, profile="ci", seed=0, only=["E9"])
    finally:
        ReprOfNonStrResult.audit.clear()
    assert report.failed_ids() == ("E9",), report.to_text()


# --- defect 2: E11 counterexample with equal-argument steps -------------------------------------


class RefusesDuplicateInFlight(ZooExecutor):
    """Refuses a call identical to one still running ("the model repeated itself"): breaks
    E11, and only for steps with equal calls, where the kit's per-call scripts collide."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._running: set[str] = set()

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return await super().execute(action)
        key = json.dumps([call.name, thaw(call.arguments)], sort_keys=True, default=repr)
        if key in self._running:
            return self.outcome(ActionStatus.NOT_EXECUTED, "an identical call is running", True)
        self._running.add(key)
        try:
            return await super().execute(action)
        finally:
            self._running.discard(key)


def _steps_with_equal_calls(action: object) -> list[tuple[int, int]]:
    steps = action if isinstance(action, list) else [action]
    calls = [s.get("tool_call") if isinstance(s, Mapping) else None for s in steps]
    return [
        (i, j)
        for i in range(len(calls))
        for j in range(i + 1, len(calls))
        if calls[i] is not None and calls[i] == calls[j]
    ]


def test_defect2_E11_counterexample_describes_the_behaviours_that_ran() -> None:
    report = certify(RefusesDuplicateInFlight, profile="ci", seed=0, only=["E11"])
    result = report.result("E11")
    assert result.status == "fail" and result.counterexample is not None, report.to_text()
    behaviours = result.counterexample.behaviour.split("; ")
    pairs = _steps_with_equal_calls(result.counterexample.action)
    assert pairs, "the counterexample has no equal-call steps (the defect needs them)"
    # Steps sent with equal calls got the same scripted behaviour; the text must say so.
    for i, j in pairs:
        left = behaviours[i].split(": ", 1)[1]
        right = behaviours[j].split(": ", 1)[1]
        assert left == right, f"steps {i + 1} and {j + 1}: {result.counterexample.behaviour}"


# --- defect 11: a reproduce line that does not reproduce ----------------------------------------


class TrustsToolsThatWorked(ZooExecutor):
    """Remembers, in a class attribute, every tool name whose handler once returned text, and
    skips the ``additionalProperties: false`` check for it ("known good"). Breaks V5, but only
    after earlier calls made a handler succeed: a run of V5 alone never does."""

    worked: ClassVar[set[str]] = set()

    def additional_applies(self, schema: Mapping[str, object]) -> bool:
        return super().additional_applies(schema) and self._name not in self.worked

    def check_name(self, call: ToolCall) -> ToolSpec:
        self._name = call.name
        return super().check_name(call)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        result = await super().invoke(spec, arguments)
        self.worked.add(spec.name)
        return result


def test_defect11_the_reproduce_line_of_a_failure_reproduces_it() -> None:
    TrustsToolsThatWorked.worked.clear()
    full = certify(TrustsToolsThatWorked, profile="ci", seed=0, only=["V1", "E5", "V5"])
    TrustsToolsThatWorked.worked.clear()
    alone = certify(TrustsToolsThatWorked, profile="ci", seed=0, only=["V5"])
    TrustsToolsThatWorked.worked.clear()
    assert full.result("V5").status == "fail", full.to_text()
    reproduced = alone.result("V5").status == "fail"
    message = full.result("V5").message or ""
    assert reproduced or "earlier" in message, (
        "V5 failed in the full run, its --only V5 line passes, and the report does not say "
        f"the failure needs earlier clauses:\n{full.to_text()}\n{alone.to_text()}"
    )


# --- defect 12: false V1 on an ECMA-262-regex validator -----------------------------------------


class EcmaPatterns(ZooExecutor):
    """Also checks top-level ``pattern`` the way ECMA-262 does: ``\\d`` is ASCII only and
    ``$`` matches only at the very end. Stricter than the subset (E14), never wrong."""

    def check_types(self, schema: Any, arguments: Any, dialect: str) -> str | None:
        problem = super().check_types(schema, arguments, dialect)
        properties = schema.get("properties")
        for key, value in arguments.items():
            sub = properties.get(key) if isinstance(properties, Mapping) else None
            pattern = sub.get("pattern") if isinstance(sub, Mapping) else None
            if isinstance(pattern, str) and isinstance(value, str):
                ecma = re.sub(r"(?<!\\)\$$", r"\\Z", pattern)
                try:
                    matched = re.search(ecma, value, re.ASCII)
                except re.error:
                    continue
                if matched is None:
                    return problem or f"{key!r} does not match its pattern"
        return problem


async def _ok(arguments: dict[str, Any]) -> str:
    return "ok"


def test_defect12_an_ecma_regex_validator_passes_V1() -> None:
    schema = {
        "type": "object",
        "properties": {"day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}},
        "required": ["day"],
    }
    registry = ToolRegistry(
        specs=[ToolSpec(name="log", description="", parameters=schema, handler=_ok)]
    )
    executor = EcmaPatterns(registry)
    assert asyncio.run(_execute(executor, {"day": "0000-00-00\n"})).status is (
        ActionStatus.NOT_EXECUTED
    )
    report = certify(executor, registry=registry, profile="ci", seed=0, only=["V1"])
    assert report.passed, report.to_text()


async def _execute(executor: Any, arguments: Any, name: str = "log") -> Any:
    return await executor.execute(Action(tool_call=ToolCall(name=name, arguments=arguments)))


# --- defect 13: messages that mislead -----------------------------------------------------------


def _loose(name: str) -> str:
    return re.sub(r"[\s_.-]", "", name).casefold()


class RunsNearMissName(ZooExecutor):
    """Resolves an unknown name loosely (case, spaces, ``-``/``_``/``.`` ignored) and runs the
    tool it resembles (breaks V2)."""

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is not None and self.registry.spec_for(call.name) is None:
            for name in self.registry.names():
                if _loose(name) == _loose(call.name):
                    action = Action(tool_call=ToolCall(name=name, arguments=call.arguments))
        return await super().execute(action)


def _two_tools() -> ToolRegistry:
    return ToolRegistry(
        specs=[
            ToolSpec(name=name, description="", parameters={"type": "object"}, handler=_ok)
            for name in ("read_file", "write_file")
        ]
    )


def test_defect13_V2_says_which_tool_a_near_miss_name_ran() -> None:
    registry = _two_tools()
    report = certify(RunsNearMissName(registry), registry=registry, seed=0, only=["V2"])
    result = report.result("V2")
    assert result.status == "fail", report.to_text()
    message = result.message or ""
    assert "names 0 of" not in message
    # It must say which visible tool the unknown name was dispatched to.
    assert re.search(r"(read|write)_file", message), message


class LookalikeOutcome:
    """ActionOutcome's fields on another class."""

    def __init__(self, status: ActionStatus, observation: str, synthetic: bool) -> None:
        self.status = status
        self.observation = observation
        self.observation_is_synthetic = synthetic
        self.env_reported_completion = False
        self.observation_truncated_chars = 0


class ReturnsLookalike(ZooExecutor):
    """Returns a look-alike instead of an ActionOutcome (breaks E15 only)."""

    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
        return LookalikeOutcome(status, observation, synthetic)  # type: ignore[return-value]


def test_defect13_a_lookalike_outcome_is_named_for_what_it_is() -> None:
    report = certify(ReturnsLookalike, seed=0, only=["V3"])
    message = report.result("V3").message or ""
    assert "is not NOT_EXECUTED" not in message, message


# --- defect 14: E15 is not checked --------------------------------------------------------------


class NoParameters(ZooExecutor):
    """Hides ``parameters()``: not an ActionExecutor (E15)."""

    def __getattribute__(self, name: str) -> Any:
        if name == "parameters":
            raise AttributeError(name)
        return super().__getattribute__(name)


class SortedNames(RegistryExecutor):
    """A RegistryExecutor whose ``parameters()`` sorts the names (E15 wants registry order)."""

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(sorted(self.registry.names()))}


@pytest.mark.parametrize("factory", [NoParameters, SortedNames, ReturnsLookalike])
def test_defect14_E15_fails_a_factory_that_is_not_an_ActionExecutor(factory: Any) -> None:
    report = certify(factory, seed=0, only=["E15"])
    assert report.failed_ids() == ("E15",), report.to_text()


def test_defect14_E15_passes_the_reference_executor() -> None:
    report = certify(RegistryExecutor, seed=0, only=["E15"])
    assert [(r.id, r.status) for r in report.results] == [("E15", "pass")]


# --- defect 1 (second half): a clause's run does not depend on what ran before it ---------------


def test_defect1_E11_examples_do_not_depend_on_only() -> None:
    alone = certify(RegistryExecutor, profile="ci", seed=0, only=["E11"]).result("E11")
    after = certify(RegistryExecutor, profile="ci", seed=0, only=["E9", "E11"]).result("E11")
    assert (alone.status, alone.examples) == (after.status, after.examples)


# --- defect 3: no false "flaky" after a deadline stop -------------------------------------------


class HangsOnLongQueries(ZooExecutor):
    """Hangs on a call whose arguments are long (JSON text over 40 characters): the kit must
    report the deadline, once, whatever Hypothesis replays afterwards."""

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        if len(json.dumps(arguments, default=repr)) > 40:
            await asyncio.sleep(3600)
        return await super().invoke(spec, arguments)


def test_defect3_a_deadline_stop_is_reported_as_such_not_as_flaky() -> None:
    report = certify(HangsOnLongQueries, profile="ci", seed=0, only=["V1"], deadline=0.3)
    result = report.result("V1")
    assert result.status == "fail", report.to_text()
    message = result.message or ""
    assert "did not finish within the 0.3s deadline" in message, message
    assert "flaky" not in message, message


# --- defect 8: one cause fails the clause it breaks ---------------------------------------------


class AnswersWithoutCallingTheHandler(ZooExecutor):
    """Answers every valid call with EXECUTED "done" and never calls the handler (as a broken
    transport does): V1 (never reached its handler) and E8 (ran 0x) break; E5 and the other
    clauses about a handler's result have nothing to judge."""

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        return "done"


def test_defect8_a_handler_never_called_fails_V1_and_E8_not_E5() -> None:
    report = certify(
        AnswersWithoutCallingTheHandler, profile="ci", seed=0, only=["V1", "E4", "E5", "E8"]
    )
    assert report.failed_ids() == ("V1", "E8"), report.to_text()
    for clause in ("E4", "E5"):
        result = report.result(clause)
        assert result.status == "skipped", report.to_text()
        assert "handler" in (result.message or "")


def test_defect8_messages_do_not_contradict_their_evidence() -> None:
    report = certify(AnswersWithoutCallingTheHandler, profile="ci", seed=0, only=["E5"])
    assert "returned a str" not in report.to_text()


# --- E15 in black-box mode, and a look-alike judged by its fields elsewhere --------------------


def test_E15_black_box_checks_a_registry_executor_s_parameters() -> None:
    registry = ToolRegistry(
        specs=[
            ToolSpec(name=name, description="", parameters={"type": "object"}, handler=_ok)
            for name in ("write_file", "read_file")  # not in sorted order
        ]
    )
    assert certify(RegistryExecutor(registry), registry=registry, only=["E15"]).passed
    report = certify(SortedNames(registry), registry=registry, seed=0, only=["E15"])
    assert report.failed_ids() == ("E15",), report.to_text()


def test_E15_a_lookalike_outcome_fails_E15_and_passes_V3_E1_E7() -> None:
    report = certify(ReturnsLookalike, seed=0, only=["V3", "E1", "E7", "E15"])
    assert report.failed_ids() == ("E15",), report.to_text()
    assert "LookalikeOutcome" in (report.result("E15").message or "")
