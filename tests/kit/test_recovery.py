"""The recovery subject (section 12): polyloop's reference certifies, the zoo's broken runtimes
are caught on their clause, the set-up errors are one line.

Every lifetime is a process start, so CI keeps to the reference (through `RecoveryContract`,
whose clause tests share one set of lifetimes) and one trap per broken or realistic runtime;
the full campaign (every zoo entry certified, more schedules) runs with
``POLYLOOP_RECOVERY_CAMPAIGN=1``.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

import pytest
from zoo.recovery import BROKEN, UNUSUAL
from zoo.recovery_realistic import REALISTIC

from conformance import RecoveryContract, certify
from conformance.catalog import get
from conformance.engine import SetUpError
from conformance.recovery import RECOVERY_CLAUSES
from conformance.recovery.clauses import CHECKS, Violation, judge
from conformance.recovery.lifetimes import run_schedule
from conformance.recovery.reference import factory
from conformance.recovery.schedules import Call, Schedule
from conformance.recovery.search import TRAPS
from conformance.recovery.subject import SUBJECT, importable_name
from polyloop import ToolRegistry

BROKEN_CLAUSES = [clause for clause in RECOVERY_CLAUSES if clause in BROKEN]
CAMPAIGN = os.environ.get("POLYLOOP_RECOVERY_CAMPAIGN", "") not in ("", "0")


class TestPolyloopReference(RecoveryContract):
    """run_durable over SqliteJournalStore and RegistryBatchExecutor certifies J1-J13."""

    profile = "fast"

    @staticmethod
    def make_executor(registry: ToolRegistry, directory: str) -> Any:  # type: ignore[override]
        return factory(registry, directory)


def test_rows_are_J1_to_J13_with_J12_J13_strict() -> None:
    assert tuple(row.id for row in SUBJECT.rows) == RECOVERY_CLAUSES
    assert [get(c).level for c in RECOVERY_CLAUSES].count("strict") == 2
    assert get("J12").level == get("J13").level == "strict"


def test_a_lambda_factory_is_a_set_up_error_naming_module_attr() -> None:
    with pytest.raises(SetUpError, match="module:attr"):
        certify(lambda registry, directory: None)


def test_a_nested_factory_is_not_importable_but_a_module_level_one_is() -> None:
    def nested(registry: ToolRegistry, directory: str) -> None:
        return None

    assert importable_name(nested) is None
    assert importable_name(factory) == "conformance.recovery.reference:factory"
    assert SUBJECT.claims(factory, None) > 0
    assert SUBJECT.claims(factory, ToolRegistry()) == 0


def _failing(target: str, schedule: Schedule) -> dict[str, str]:
    observation = run_schedule(target, schedule)
    found = {}
    for clause in CHECKS:
        try:
            judge(observation, clause)
        except Violation as violation:
            found[clause] = violation.message
    return found


# The trap (an index into TRAPS, or a schedule) on which each broken runtime shows its bug.
_CATCH: dict[str, Schedule] = {
    "J1": TRAPS[0],
    "J2": TRAPS[7],
    "J3": TRAPS[3],
    "J4": TRAPS[3],
    "J5": TRAPS[1],
    "J6": TRAPS[6],
    "J7": TRAPS[4],
    "J8": TRAPS[3],
    "J9": TRAPS[9],
    "J10": TRAPS[11],
    "J11": Schedule((Call("safe_seq"), Call("never_seq", 1)), crashes=(("effect", 1),)),
    "J13": TRAPS[12],
}


@pytest.mark.parametrize("clause", BROKEN_CLAUSES)
def test_each_broken_runtime_is_caught_exactly_on_its_clause(clause: str) -> None:
    failing = _failing(f"zoo.recovery:{BROKEN[clause]}", _CATCH[clause])
    assert set(failing) == {clause}, failing


def test_J10_every_copy_is_damaged_so_an_unchecked_mirror_is_caught() -> None:
    """A store that reads its records back from a second, unchecked copy: the kit damages every
    copy of the observation (it once changed only the first it found, and passed LangGraph's
    and openai-agents' RunState's unchecked later copies)."""
    assert _failing("zoo.recovery:broken_j10_unchecked_mirror", TRAPS[11]) == {
        "J10": _failing("zoo.recovery:broken_j10_unchecked_mirror", TRAPS[11])["J10"]
    }


def test_J4_a_result_the_call_produced_in_the_J9_probe_is_its_own() -> None:
    """A runtime that runs the recorded batch when given a changed one (J9's failure) re-enters
    the in-doubt SAFE call 0 in that probe lifetime: its result there is its own handler's, so
    J4 holds (the kit called it invented until field adapters on LangGraph and DBOS showed it)."""
    schedule = Schedule((Call("safe_seq"), Call("never_seq", 1)), crashes=(("effect", 0),))
    schedule = dataclasses.replace(schedule, other_batch=1)
    failing = _failing("zoo.recovery:broken_j9_recorded_batch_run_instead", schedule)
    assert set(failing) == {"J9"}, failing


def test_J10_a_store_the_kit_cannot_damage_is_reported_not_checked() -> None:
    """Records the kit cannot find as plain text (base64 inside CRC-checked lines) leave J10
    unjudged: skipped with the reason, never a pass it did not earn."""
    from zoo.recovery import encoded_runtime

    report = certify(encoded_runtime, only=["J10"], profile="fast")
    (result,) = report.results
    assert result.status == "skipped", report.to_text()
    assert result.message is not None and result.message.startswith("not checked"), result.message


_STOPPED_RESUME = TRAPS[13]
"""Both calls in flight at the crash; on resume the second, now exclusive, waits for the
first, whose ENV_ERROR stops the batch before the second is entered again."""


def test_J4_polyloops_own_not_run_bug_is_caught_and_the_fixed_reference_passes() -> None:
    """polyloop committed such an in-doubt SAFE call "not run" until 8973c0e (found by an
    independent runtime, missed by the kit until the `exclusive` registry change and this
    trap). Black-box, "NOT_EXECUTED for a call the ledger shows entered" is J2's finding: a
    runtime that never made `started` durable shows exactly the same, so the kit names J2 and
    its expected line says the call is in doubt (interrupted or re-run)."""
    failing = _failing(
        "zoo.recovery_realistic:realistic_j4_in_doubt_safe_not_run_after_a_stop", _STOPPED_RESUME
    )
    assert set(failing) == {"J2"}, failing
    assert "entered in lifetime 0" in failing["J2"]
    assert _failing("conformance.recovery.reference:factory", _STOPPED_RESUME) == {}


_REALISTIC_CATCH: dict[str, Schedule] = {
    "realistic_journal_flushed_on_exit": TRAPS[1],  # NEVER call 1 killed after its effect
    "realistic_in_doubt_pruned_as_not_started": TRAPS[0],  # NEVER call killed on entry
    "realistic_interrupted_reported_executed": TRAPS[0],
    "realistic_interrupted_result_not_persisted": TRAPS[1],  # the stop's commit is lost
    "realistic_attempts_not_counted": TRAPS[12],  # a call that kills its process
    "realistic_index_committed_twice": TRAPS[3],
    "realistic_started_written_after_entry": TRAPS[0],
    "realistic_damaged_store_started_afresh": TRAPS[11],  # a flipped byte
    "realistic_policy_migration_loosens_never": TRAPS[6],  # NEVER -> SAFE after the crash
    "realistic_changed_batch_wipes_journal": TRAPS[10],  # a changed batch, same id
    "realistic_workflow_retry_reruns_never": TRAPS[1],
    "realistic_restored_results_discarded": TRAPS[3],  # call 0 committed, call 1 in doubt
    "realistic_resume_numbers_the_resumed_part": TRAPS[14],  # call 0 committed, 1 in doubt
    "realistic_interrupted_marked_complete": TRAPS[14],
    "realistic_commit_acknowledged_before_durable": TRAPS[16],  # killed after commit 0's report
    "realistic_resume_accepts_a_shorter_batch": TRAPS[17],  # resumed with call 1 dropped
}


@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_each_realistic_broken_runtime_is_caught_on_its_clauses(name: str) -> None:
    """Section 2's reported bugs, each by a mechanism of its own (a journal flushed on exit,
    a write-behind `started`, a header migration...): one pinned schedule catches each on
    exactly the clauses `REALISTIC` lists (every one is a trap the reference certifies on)."""
    failing = _failing(f"zoo.recovery_realistic:{name}", _REALISTIC_CATCH[name])
    assert set(failing) == set(REALISTIC[name]), failing


@pytest.mark.skipif(not CAMPAIGN, reason="campaign: POLYLOOP_RECOVERY_CAMPAIGN=1")
@pytest.mark.parametrize("name", sorted(REALISTIC))
def test_campaign_certify_fails_each_realistic_runtime_on_its_clauses(name: str) -> None:
    import importlib

    target = getattr(importlib.import_module("zoo.recovery_realistic"), name)
    report = certify(target, profile="fast")
    failing = {r.id for r in report.results if r.status not in ("pass", "skipped")}
    assert set(REALISTIC[name]) <= failing, report.to_text()


@pytest.mark.parametrize("name", UNUSUAL)
def test_unusual_but_correct_runtimes_pass_the_traps_that_catch_the_zoo(name: str) -> None:
    schedules = dict.fromkeys(_CATCH.values())
    for schedule in list(schedules)[: None if CAMPAIGN else 1]:
        assert _failing(f"zoo.recovery:{name}", schedule) == {}, schedule.describe()


@pytest.mark.skipif(not CAMPAIGN, reason="campaign: POLYLOOP_RECOVERY_CAMPAIGN=1")
@pytest.mark.parametrize("clause", BROKEN_CLAUSES)
def test_campaign_certify_fails_each_broken_runtime_on_its_clause(clause: str) -> None:
    import importlib

    target = getattr(importlib.import_module("zoo.recovery"), BROKEN[clause])
    report = certify(target, profile="fast")
    failing = {r.id for r in report.results if r.status not in ("pass", "skipped")}
    assert clause in failing
    assert failing <= {clause} | CONSEQUENCES.get(clause, set()), failing


CONSEQUENCES: dict[str, set[str]] = {
    "J1": {"J9"},  # a header missing from the journal: a changed batch raises no ValueError
    "J2": {"J5", "J6", "J13"},  # a lost started record: re-entry, attempts undercounted
    "J3": {"J5"},  # re-entering committed calls in a resume that had to stop
    "J5": {"J6"},  # every in-doubt NEVER re-run, recorded or current
}
"""What else a broken runtime's one bug breaks in the campaign (docs/recovery-certification.md,
black-box limits); each is also caught alone on its `_CATCH` schedule."""


@pytest.mark.skipif(not CAMPAIGN, reason="campaign: POLYLOOP_RECOVERY_CAMPAIGN=1")
@pytest.mark.parametrize("name", UNUSUAL)
def test_campaign_unusual_runtimes_certify(name: str) -> None:
    import importlib

    target = getattr(importlib.import_module("zoo.recovery"), name)
    report = certify(target, profile="fast")
    assert report.passed, report.to_text()


INDEPENDENT = ("sqlite_log", "jsonl_log", "sqlite_rows", "file_per_record")
"""`tests/specificity/correct_recovery/`: runtimes written from the contract alone."""


@pytest.mark.parametrize("name", INDEPENDENT)
def test_independent_correct_runtimes_pass_a_trap(name: str) -> None:
    target = f"specificity.correct_recovery.{name}:factory"
    for schedule in (TRAPS[1],) if not CAMPAIGN else TRAPS:
        assert _failing(target, schedule) == {}, schedule.describe()


@pytest.mark.skipif(not CAMPAIGN, reason="campaign: POLYLOOP_RECOVERY_CAMPAIGN=1")
@pytest.mark.parametrize("name", INDEPENDENT)
def test_campaign_independent_runtimes_certify(name: str) -> None:
    import importlib

    module = importlib.import_module(f"specificity.correct_recovery.{name}")
    report = certify(module.factory, profile="ci")
    assert report.passed, report.to_text()


def test_a_lifetime_that_never_ends_is_killed_at_its_time_box() -> None:
    from conformance.recovery.clauses import Unusable

    observation = run_schedule(
        "zoo.recovery:hanging_runtime", Schedule((Call("safe_seq"),)), limit=3.0
    )
    assert [life.ended for life in observation.lives] == ["timeout"]
    with pytest.raises(Unusable, match="time box"):
        judge(observation, "J8")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_process_a_lifetime_started_outlives_it(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("RECOVERY_HELPER_PIDS", str(pids))
    observation = run_schedule("zoo.recovery:detaching_runtime", Schedule((Call("safe_seq"),)))
    assert [life.ended for life in observation.lives] == ["returned", "returned"]
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 2
    for pid in started:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        assert state == b"Z", f"helper {pid} still runs ({state!r})"


def test_a_factory_that_raises_is_an_error_of_every_clause_not_a_verdict() -> None:
    from conformance.recovery.clauses import Unusable

    observation = run_schedule("zoo.recovery:raising_factory", Schedule((Call("safe_seq"),)))
    for clause in CHECKS:
        with pytest.raises(Unusable, match="no database driver configured"):
            judge(observation, clause)


def test_the_lifetimes_tools_take_the_schema_the_report_shows() -> None:
    import runpy
    from pathlib import Path

    import conformance.recovery
    from conformance.recovery.schedules import TOOL_SCHEMA

    child = Path(conformance.recovery.__file__).with_name("_lifetime.py")
    assert runpy.run_path(str(child))["SCHEMA"] == dict(TOOL_SCHEMA)
