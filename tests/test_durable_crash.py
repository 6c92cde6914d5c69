"""Section 12 with real crashes: lifetimes in child processes that SIGKILL themselves.

A Hypothesis strategy chooses the batch and, for up to three lifetimes, the event at which the
process kills itself; a clean resume follows, then one more resume that must be a no-op. The
verdict comes from the ledger the handlers write outside the store, the store's state between
lifetimes, and the outcomes (`tests/_durable_harness.py`). `POLYLOOP_CRASH_CAMPAIGN=N` runs N
schedules instead of the CI few (tox env `crash-campaign`).
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

from _durable_harness import INTERRUPTED, Schedule, check_invariants, entries
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CAMPAIGN = int(os.environ.get("POLYLOOP_CRASH_CAMPAIGN", "0") or 0)
EVENTS = ("enter", "effect", "return", "started", "committed")
TOOL_NAMES = ("safe", "never", "safe_x", "never_x", "env")


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, int]]]:
    size = draw(st.integers(1, 5))
    tools = draw(
        st.lists(
            st.sampled_from(TOOL_NAMES).filter(lambda name: name != "env")
            | st.just("env").filter(lambda _: draw(st.integers(0, 5)) == 0),
            min_size=size,
            max_size=size,
        )
    )
    crashes = draw(
        st.lists(st.tuples(st.sampled_from(EVENTS), st.integers(0, size - 1)), max_size=3)
    )
    return tools, crashes


def run_schedule(directory: Path, tools: list[str], crashes: list[tuple[str, int]]) -> None:
    schedule = Schedule(directory, [(name, {}) for name in tools])
    for crash in crashes:
        schedule.lifetime(crash)
    final = schedule.lifetime()
    assert final["returncode"] == 0
    outcomes = final["outcomes"]
    check_invariants(schedule, outcomes)
    before = schedule.ledger_lines()
    again = schedule.lifetime()
    assert again["outcomes"] == outcomes, "J11: a further resume returns the same outcomes"
    assert schedule.ledger_lines() == before, "J11: a further resume enters nothing"


@settings(
    max_examples=CAMPAIGN or 20,
    deadline=None,
    derandomize=not CAMPAIGN,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(schedules())
def test_J3_J5_J8_J11_J13_invariants_hold_over_chosen_crash_schedules(
    schedule: tuple[list[str], list[tuple[str, int]]],
) -> None:
    tools, crashes = schedule
    with tempfile.TemporaryDirectory() as directory:
        run_schedule(Path(directory), tools, crashes)


def test_J3_J4_safe_call_killed_in_its_handler_is_re_entered_after_the_committed_prefix(
    tmp_path: Path,
) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {}), ("safe_x", {}), ("safe_x", {})])
    crashed = schedule.lifetime(("effect", 2))
    assert crashed["returncode"] == -signal.SIGKILL
    done = len(crashed["committed_after"])
    assert done >= 1  # call 1 was entered only after call 0 settled; its commit preceded this
    final = schedule.lifetime()
    assert final["outcomes"] == [["EXECUTED", f"safe_x:{i}:0", False] for i in range(3)]
    enters = [
        (line["life"], line["call"]) for line in schedule.ledger_lines() if line["event"] == "enter"
    ]
    assert enters == [(0, 0), (0, 1), (0, 2)] + [(1, i) for i in range(done, 3)]
    check_invariants(schedule, final["outcomes"])


def test_J5_in_doubt_never_call_stops_the_resume_and_names_it(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {}), ("never_x", {}), ("safe", {}), ("never", {})])
    schedule.lifetime(("effect", 1))
    final = schedule.lifetime()
    assert final["outcomes"] == [
        ["EXECUTED", "safe_x:0:0", False],
        ["ENV_ERROR", INTERRUPTED, True],
        ["NOT_EXECUTED", "not run: call 1 reported an environment error", True],
        ["NOT_EXECUTED", "not run: call 1 reported an environment error", True],
    ]
    assert entries(schedule.ledger_lines()) == {0: 1, 1: 1}
    check_invariants(schedule, final["outcomes"])


def test_J5_crash_after_started_before_entry_of_never_call_is_interrupted(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("never_x", {}), ("never_x", {})])
    schedule.lifetime(("started", 0))
    final = schedule.lifetime()
    assert entries(schedule.ledger_lines()) == {}
    assert final["outcomes"][0] == ["ENV_ERROR", INTERRUPTED, True]
    assert final["outcomes"][1] == [
        "NOT_EXECUTED",
        "not run: call 0 reported an environment error",
        True,
    ]


def test_J5_committed_env_error_in_prefix_makes_the_resume_enter_nothing(tmp_path: Path) -> None:
    # Call 1 (concurrent) is in doubt when call 0's ENV_ERROR is committed and the process dies.
    schedule = Schedule(tmp_path, [("env", {}), ("safe_x", {})])
    schedule.lifetime(("committed", 0))
    final = schedule.lifetime()
    assert final["outcomes"] == [
        ["ENV_ERROR", "backend down for call 0", False],
        ["NOT_EXECUTED", "not run: call 0 reported an environment error", True],
    ]
    assert entries(schedule.ledger_lines()) == {0: 1}


def test_J7_sentences_name_calls_by_whole_batch_index_after_resume(tmp_path: Path) -> None:
    # Calls 0 and 1 committed; the resumed part's ENV_ERROR is call 3, not its sub-batch index 1.
    schedule = Schedule(
        tmp_path, [("safe_x", {}), ("safe_x", {}), ("safe_x", {}), ("env", {}), ("safe_x", {})]
    )
    schedule.lifetime(("committed", 1))
    final = schedule.lifetime()
    assert final["outcomes"][3] == ["ENV_ERROR", "backend down for call 3", False]
    assert final["outcomes"][4] == [
        "NOT_EXECUTED",
        "not run: call 3 reported an environment error",
        True,
    ]


def test_J6_recorded_never_is_not_loosened_by_a_current_safe(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("never_x", {})])
    schedule.lifetime(("effect", 0))
    final = schedule.lifetime(policies={"never_x": "SAFE"})
    assert final["outcomes"] == [["ENV_ERROR", INTERRUPTED, True]]
    assert entries(schedule.ledger_lines()) == {0: 1}


def test_J6_current_never_tightens_a_recorded_safe(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {})])
    schedule.lifetime(("effect", 0))
    final = schedule.lifetime(policies={"safe_x": "NEVER"})
    assert final["outcomes"] == [["ENV_ERROR", INTERRUPTED, True]]
    assert entries(schedule.ledger_lines()) == {0: 1}


def test_J6_a_tool_no_longer_registered_counts_as_never(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {}), ("safe", {})])
    schedule.lifetime(("effect", 0))
    final = schedule.lifetime(policies={"safe_x": "absent"})
    assert final["outcomes"][0] == ["ENV_ERROR", INTERRUPTED, True]
    assert entries(schedule.ledger_lines()) == {0: 1}


def test_J13_a_safe_call_that_kills_every_lifetime_is_entered_at_most_max_attempts(
    tmp_path: Path,
) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {}), ("bomb", {}), ("safe_x", {})], max_attempts=2)
    for _ in range(3):
        schedule.lifetime()
    final = schedule.lives[-1]
    assert final["returncode"] == 0
    assert entries(schedule.ledger_lines())[1] == 2
    assert final["outcomes"] == [
        ["EXECUTED", "safe_x:0:0", False],
        ["ENV_ERROR", INTERRUPTED, True],
        ["NOT_EXECUTED", "not run: call 1 reported an environment error", True],
    ]


def test_J11_a_resume_killed_after_its_first_record_is_resumed_again(tmp_path: Path) -> None:
    schedule = Schedule(tmp_path, [("safe_x", {}), ("never_x", {}), ("safe_x", {})])
    schedule.lifetime(("enter", 1))
    killed = schedule.lifetime(("committed", 1))  # the resume's first J5 commit, then death
    assert killed["returncode"] == -signal.SIGKILL
    final = schedule.lifetime()
    assert final["outcomes"][1] == ["ENV_ERROR", INTERRUPTED, True]
    assert entries(schedule.ledger_lines()) == {0: 1, 1: 1}
    check_invariants(schedule, final["outcomes"])


def test_J2_J12_two_processes_resume_different_batches_of_one_store_at_once(
    tmp_path: Path,
) -> None:
    first = Schedule(tmp_path, [("safe", {}) for _ in range(5)], batch_id="one", ledger_name="a")
    second = Schedule(tmp_path, [("safe", {}) for _ in range(5)], batch_id="two", ledger_name="b")
    first.lifetime(("effect", 2))
    second.lifetime(("enter", 3))
    running = [first.start(), second.start()]
    for schedule, (process, record) in zip((first, second), running, strict=True):
        schedule.finish(process, record)
        assert record["returncode"] == 0
        outcomes = record["outcomes"]
        assert [o[0] for o in outcomes] == ["EXECUTED"] * 5
        check_invariants(schedule, outcomes)
        assert schedule.committed() == outcomes  # no record lost to the other process
