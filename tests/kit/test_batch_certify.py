"""certify on batch executors (issue 20): the factory contract, black-box mode, the report's
new fields, the command line, `BatchExecutorContract`, and the harness's own guarantees.

Every run here is small (``fast`` profile or a couple of clauses): the zoo tests
(`test_zoo_batch.py`) carry the verdicts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zoo.batch import CapOffByOne
from zoo.batch_base import ZooBatch

from conformance import BatchExecutorContract
from conformance._core.report import report_schema
from conformance.batch import BATCH_CLAUSES
from conformance.batch.drive import Schedule, drive
from conformance.batch.harness import Call
from conformance.batch.oracle import has_time, names_call, stop_text_problem, without_time
from conformance.batch.strategies import schedules
from conformance.cli import main
from conformance.engine import CERTIFIED_CLAUSES, SetUpError, certify, select_clauses
from polyloop import (
    Action,
    ActionOutcome,
    RegistryBatchExecutor,
    RegistryExecutor,
    ToolRegistry,
    ToolSpec,
)


def test_B_clauses_are_selected_for_a_batch_subject_only() -> None:
    assert select_clauses("strict") == CERTIFIED_CLAUSES
    batch = select_clauses("strict", subject="batch")
    assert batch == CERTIFIED_CLAUSES + BATCH_CLAUSES
    assert "B18" not in select_clauses("core", subject="batch")  # B18 is [H]: strict
    with pytest.raises(ValueError, match="batch clause"):
        certify(RegistryExecutor, only=["B7"], profile="fast")


@pytest.mark.every_python  # the reference certified on each interpreter
def test_B7_a_batch_factory_gets_max_concurrency_and_the_report_says_batch() -> None:
    caps: list[int] = []

    def factory(registry: ToolRegistry, *, max_concurrency: int) -> Any:
        caps.append(max_concurrency)
        return RegistryBatchExecutor(registry, max_concurrency=max_concurrency)

    report = certify(factory, profile="quick", seed=0, only=["B7", "E4"])
    assert report.passed, report.to_text()
    assert report.subject == "batch" and report.through_one_call_batches == ("E4",)
    assert set(caps) >= {1, 4}
    data = report.to_json()
    jsonschema.validate(data, report_schema())
    assert data["subject"] == "batch" and data["through_one_call_batches"] == ["E4"]
    assert "checked through one-call batches" in report.to_text()


def test_an_action_executor_report_keeps_its_exact_shape() -> None:
    data = certify(RegistryExecutor, profile="fast", seed=0, only=["E1"]).to_json()
    assert "subject" not in data and "through_one_call_batches" not in data


@pytest.mark.every_python  # the reference certified on each interpreter
def test_a_batch_factory_without_the_keyword_is_one_set_up_error_naming_it() -> None:
    def factory(registry: ToolRegistry) -> Any:
        return RegistryBatchExecutor(registry)

    with pytest.raises(SetUpError, match="max_concurrency"):
        certify(factory, profile="fast", only=["B1"])


def test_B1_B2_black_box_judges_outcomes_and_journal_and_skips_the_rest() -> None:
    registry = ToolRegistry(
        [ToolSpec(name="t", description="d", parameters={"type": "object"}, handler=_ok)]
    )
    report = certify(
        RegistryBatchExecutor(registry),
        registry=registry,
        profile="fast",
        seed=0,
        only=BATCH_CLAUSES,
    )
    assert report.mode == "black-box" and report.subject == "batch"
    statuses = {r.id: r.status for r in report.results}
    assert statuses.pop("B1") == "pass" and statuses.pop("B2") == "pass"
    assert set(statuses.values()) == {"skipped"}


async def _ok(arguments: Any) -> str:
    return "ok"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_B7_the_cli_certifies_a_batch_factory_with_json_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, junit = tmp_path / "r.json", tmp_path / "j.xml"
    status, _, err = run_cli(
        [
            "certify",
            "zoo.batch:CapOffByOne",
            "--only",
            "B7,E5",
            "--profile",
            "ci",
            "--seed",
            "0",
            "--json",
            str(out),
            "--junit",
            str(junit),
        ],
        capsys,
    )
    assert status == 1, err
    data = json.loads(out.read_text())
    jsonschema.validate(data, report_schema())
    assert [r["id"] for r in data["results"]] == ["E5", "B7"]
    assert {r["id"]: r["status"] for r in data["results"]} == {"E5": "pass", "B7": "fail"}
    b7 = data["results"][1]
    assert b7["reproduce"].endswith("--seed 0 --only B7")
    assert "max_concurrency" in b7["counterexample"]["behaviour"]
    text = junit.read_text()
    assert "B7 At most max_concurrency handlers run" in text
    assert "(through one-call batches)" in text


def test_the_cli_narrows_its_selection_to_the_subject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    status, _, err = run_cli(
        ["certify", "polyloop:RegistryExecutor", "--profile", "fast", "--json", str(out)], capsys
    )
    assert status == 0, err
    ids = [r["id"] for r in json.loads(out.read_text())["results"]]
    assert ids == list(CERTIFIED_CLAUSES)
    status, _, err = run_cli(["certify", "polyloop:RegistryExecutor", "--only", "B3"], capsys)
    assert status == 2 and "batch clause" in err


def test_B1_to_B18_the_cli_adds_the_batch_clauses_for_a_batch_factory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --only the parent selects V/E (it never imports the target); the child, finding
    a batch executor, adds B1-B18."""
    out = tmp_path / "r.json"
    status, _, err = run_cli(
        ["certify", "polyloop:RegistryBatchExecutor", "--profile", "fast", "--json", str(out)],
        capsys,
    )
    assert status == 0, err
    data = json.loads(out.read_text())
    assert [r["id"] for r in data["results"]] == list(CERTIFIED_CLAUSES + BATCH_CLAUSES)
    assert data["subject"] == "batch"
    assert data["through_one_call_batches"] == list(CERTIFIED_CLAUSES)


class TestCapOffByOneContract(BatchExecutorContract):
    """Collected only as far as its B7 test (below): a contract class certifying a zoo entry."""

    __test__ = False

    @staticmethod
    def make_executor(registry: ToolRegistry, **kwargs: Any) -> Any:
        return CapOffByOne(registry, **kwargs)


def test_B7_batch_executor_contract_has_one_test_per_clause_and_fails_the_planted_bug() -> None:
    names = [n for n in dir(BatchExecutorContract) if n.startswith("test_")]
    assert len(names) == len(CERTIFIED_CLAUSES) + len(BATCH_CLAUSES)
    assert "test_B7_at_most_max_concurrency_handlers_run" in names
    report = TestCapOffByOneContract()._certify("B7", "strict", "ci", 0, None)
    assert report.failed_ids() == ("B7",)


def test_B5_times_and_durations_are_found_and_taken_out() -> None:
    assert has_time("not run: the batch was cancelled (after 0.003s)")
    assert has_time("not run at 12:03:04")
    assert not has_time("not run: call 3 reported an environment error")
    assert without_time("not run: the batch was cancelled (after 0.003s)") == (
        "not run: the batch was cancelled"
    )


@settings(max_examples=25, deadline=None)
@given(schedules(("safe", "excl", "ask_true", "bad"), ("return", "raise", "env"), cancel="maybe"))
def test_B1_to_B18_the_harness_replays_a_schedule_exactly(schedule: Schedule) -> None:
    """No verdict may rest on timing: the same schedule on a fresh executor gives the same
    trace (so a failing schedule replays from its seed)."""

    async def twice() -> tuple[list[Any], list[Any]]:
        first = await drive(RegistryBatchExecutor, schedule, lambda: None, 5.0)
        second = await drive(RegistryBatchExecutor, schedule, lambda: None, 5.0)
        return first.trace, second.trace

    first, second = asyncio.run(twice())
    assert first == second


def test_B14_a_cancelled_schedule_drains_and_commits_under_the_reference() -> None:
    schedule = Schedule(
        calls=(Call("safe"), Call("safe", "ignore_cancel"), Call("excl")),
        cap=2,
        journal="fast",
        cancel_at=0,
    )
    run = asyncio.run(drive(RegistryBatchExecutor, schedule, lambda: None, 5.0))
    assert isinstance(run.raised, asyncio.CancelledError)
    assert [i for i, _ in run.commits] == [0, 1, 2]
    assert run.commits[1][1].observation == "survived 1"


def test_B7_generation_alone_shrinks_to_the_smallest_batch_and_replays_from_the_seed() -> None:
    """Traps off: Hypothesis finds the bug, shrinks it to two safe calls at cap 1 with no
    release step, and the same seed gives the same counterexample."""
    import dataclasses

    from conformance._core import hypo
    from conformance._core.deadline import LoopThread
    from conformance.batch.properties import PROPERTIES
    from conformance.batch.search import search_batch_clause
    from conformance.batch.trial import BatchTrial

    prop = dataclasses.replace(PROPERTIES["B7"], traps=())
    seen = []
    for _ in range(2):
        runner = LoopThread()
        try:
            trial = BatchTrial(CapOffByOne, deadline=5.0, runner=runner)
            settings = hypo.run_settings(hypo.profile_settings("ci"))
            outcome = search_batch_clause(prop, trial, settings, 0, "shrink")
        finally:
            runner.close()
        assert outcome.counterexample is not None
        seen.append(outcome.counterexample.behaviour)
    assert (
        seen[0]
        == seen[1]
        == (
            "max_concurrency 1; journal none; release order (none); "
            "calls [0: safe/return, 1: safe/return]"
        )
    )


class _LetsHandlerErrorsOut(ZooBatch):
    """A handler's ordinary exception escapes execute_batch instead of becoming its E4
    outcome, as pydantic-ai's and LangGraph's batch paths do: B12's failure (and B4's)."""

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        outcome = await self.inner.execute(action)
        if outcome.observation.startswith("ValueError: "):
            raise ValueError(outcome.observation.removeprefix("ValueError: "))
        return outcome


class _LetsClassifierErrorsOut(ZooBatch):
    """A classifier's exception escapes execute_batch instead of making its call exclusive:
    B9's failure."""

    def classify(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        safe = spec.concurrency_safe
        if spec.completes_run or isinstance(safe, bool):
            return super().classify(action)
        return safe(call.arguments) is True


@pytest.mark.parametrize(
    ("target", "owner"), [(_LetsHandlerErrorsOut, "B12"), (_LetsClassifierErrorsOut, "B9")]
)
def test_B1_leaves_an_escaped_handler_or_classifier_error_to_its_own_clause(
    target: type[ZooBatch], owner: str
) -> None:
    """B1 fails a raise nothing caused; one whose cause another clause owns is that clause's
    alone, so a report names one rule per bug."""
    report = certify(target, level="strict", profile="ci", seed=0, only=["B1", owner])
    assert report.result(owner).status == "fail", report.to_text()
    assert report.result("B1").status == "pass", report.to_text()


# --- the stop sentences and E1/E2 words are the executor's own (issue 30) --------------------

HONEST = (
    "not run: call {k} reported an environment error",
    "skipped (#{k} hit ENV_ERROR)",
    "index {k} failed first; not started",
    "actions[{k}] broke the environment",
)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200), st.sampled_from(HONEST))
def test_B13_a_sentence_names_call_k_as_a_number_and_no_other_index_passes_for_it(
    k: int, other: int, template: str
) -> None:
    assert names_call(template.format(k=k), k)
    assert stop_text_problem(template.format(k=k), ("env", k)) is None
    if other != k:
        assert not names_call(template.format(k=other), k)
        assert stop_text_problem(template.format(k=other), ("env", k)) == (
            f"the sentence does not name call {k}"
        )


def test_B15_the_sentence_names_k_and_the_class_as_a_word() -> None:
    assert (
        stop_text_problem(
            "skipped: #1 raised asyncio.CancelledError", ("raised", 1, "CancelledError")
        )
        is None
    )
    assert stop_text_problem("skipped: #1 raised Stopped", ("raised", 1, "Stop")) == (
        "the sentence does not name the exception class Stop"
    )
    assert stop_text_problem("call 1 was stopped at 12:01", ("raised", 1, "Stop")) == (
        "the sentence does not name the exception class Stop"
    )
    assert stop_text_problem("  ", ("cancel",)) == "an empty sentence"
    assert not names_call("took 1.5s", 1)  # a duration is B5's, never an index


class _OwnWordsInner(RegistryExecutor):
    async def execute(self, action: Action) -> ActionOutcome:
        outcome = await super().execute(action)
        if action.tool_call is None:
            return dataclasses.replace(outcome, observation="Nothing to dispatch: no tool call.")
        return outcome


class OwnWords(ZooBatch):
    """Correct, with sentences of its own: its E1 sentence, "not run" and "interrupted"."""

    WORDS: ClassVar[dict[str, str]] = {
        "env": "skipped: #{first} hit an environment error first",
        "raised": "skipped: #{first} raised {name}",
        "cancel": "skipped: the whole batch was cancelled",
    }
    INTERRUPTED = "stopped mid-call; outcome unknown"

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self.inner = _OwnWordsInner(registry)

    def not_run_text(self, stop: str, first: int, name: str) -> str:
        return self.WORDS[stop].format(first=first, name=name)

    def interrupted(self, index: int) -> ActionOutcome:
        return dataclasses.replace(super().interrupted(index), observation=self.INTERRUPTED)


class WrongIndex(OwnWords):
    """Names call k counted from 1 (B13 counts from 0, as the contract does)."""

    WORDS: ClassVar[dict[str, str]] = {
        **OwnWords.WORDS,
        "env": "skipped: call {first_plus} failed",
        "raised": "x",
    }

    def not_run_text(self, stop: str, first: int, name: str) -> str:
        if stop == "env":
            return self.WORDS["env"].format(first_plus=first + 1)
        return super().not_run_text(stop, first, name)


class NoClass(OwnWords):
    WORDS: ClassVar[dict[str, str]] = {
        **OwnWords.WORDS,
        "raised": "skipped: #{first} stopped the batch",
    }


class SameSentence(OwnWords):
    WORDS: ClassVar[dict[str, str]] = {**OwnWords.WORDS, "cancel": OwnWords.INTERRUPTED}


STOPS = ["E1", "E6", "B4", "B13", "B14", "B15"]


def test_B4_B13_B14_B15_an_executor_with_its_own_sentences_certifies() -> None:
    report = certify(OwnWords, level="strict", profile="ci", seed=0, only=STOPS)
    assert report.passed, report.to_text()


@pytest.mark.parametrize(
    ("target", "clause", "words"),
    [
        (WrongIndex, "B13", "does not name call"),
        (NoClass, "B15", "does not name the exception class"),
        (SameSentence, "B14", "got the same sentence"),
    ],
)
def test_B13_B14_B15_what_the_sentence_must_say_still_fails(
    target: type[ZooBatch], clause: str, words: str
) -> None:
    report = certify(target, level="strict", profile="ci", seed=0, only=[clause])
    assert report.failed_ids() == (clause,), report.to_text()
    assert words in (report.result(clause).message or ""), report.result(clause).message


def test_37_B4_a_failure_a_fixed_trap_found_is_shrunk_and_names_the_reference() -> None:
    """Issue 37, item 5: the five-call trap that first catches a bug does not stand as the
    counterexample when a generated schedule fails too: Hypothesis shrinks that one, and the
    expected outcome is named as polyloop's reference, not the user's own `execute`."""
    from zoo.batch import ErrorsBecomeNotExecuted

    from conformance.batch.properties import PROPERTIES

    report = certify(ErrorsBecomeNotExecuted, profile="ci", seed=0, only=["B4"])
    result = report.result("B4")
    assert result.status == "fail" and result.counterexample is not None
    trap_sizes = {len(trap.calls) for trap in PROPERTIES["B4"].traps}
    shown = result.counterexample.action
    assert isinstance(shown, list) and len(shown) < min(trap_sizes), shown
    assert "polyloop's reference execute gives" in (result.message or "")
