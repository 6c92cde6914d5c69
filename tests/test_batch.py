"""Contract section 10: `RegistryBatchExecutor.execute_batch` (B1-B18), S6 scheduling and R9.

Each test drives gated handlers (`_batch_harness`): the test opens gates in the order it wants,
settles the event loop, and judges the one trace of enter/exit/classify/started/committed
events. After every batch no task it created may still exist.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
import pytest_asyncio
from _batch_harness import (
    INTERRUPTED,
    LIVE,
    NOT_RUN_CANCELLED,
    Harness,
    Stop,
    act,
    bad,
    code,
    is_synthetic,
    not_run_env,
    not_run_raised,
    settle,
    unknown,
)

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchExecutor,
    RegistryBatchExecutor,
    ToolCall,
    ToolRegistry,
    ToolSpec,
)
from polyloop.ports import BatchJournal

pytestmark = pytest.mark.asyncio

EXECUTED = ActionStatus.EXECUTED
NOT_EXECUTED = ActionStatus.NOT_EXECUTED
ENV_ERROR = ActionStatus.ENV_ERROR


@pytest_asyncio.fixture(autouse=True)
async def release_handlers() -> AsyncIterator[None]:
    """After each test, even a failed one, open every gate: a handler that ignores cancellation
    would otherwise keep the event loop's shutdown waiting forever (that is B14)."""
    yield
    while LIVE:
        LIVE.pop().release_everything()
    await settle()


def assert_no_tasks_left() -> None:
    leftover = asyncio.all_tasks() - {asyncio.current_task()}
    assert not leftover, f"tasks outlived the batch: {leftover}"


async def finish(task: asyncio.Task[tuple[ActionOutcome, ...]]) -> tuple[ActionOutcome, ...]:
    await settle()
    assert task.done(), "the batch did not finish"
    result = task.result()
    assert_no_tasks_left()
    return result


async def run_open(harness: Harness, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
    for index in range(len(actions)):
        harness.open(index)
    outcomes = await harness.executor.execute_batch(actions, harness.journal)
    assert_no_tasks_left()
    return outcomes


async def sequential(harness: Harness, actions: Sequence[Action]) -> list[ActionOutcome]:
    """The oracle: `execute` one call at a time (the gates are open)."""
    executor = harness.registry.executor()
    for index in range(len(actions)):
        harness.open(index)
    return [await executor.execute(action) for action in actions]


# ---- R9 -------------------------------------------------------------------------------------


async def test_R9_batch_executor_holds_registry_cap_and_parameters() -> None:
    harness = Harness(cap=3)
    executor = harness.executor
    assert isinstance(executor, RegistryBatchExecutor)
    assert isinstance(executor, BatchExecutor)
    assert executor.registry == harness.registry
    assert executor.max_concurrency == 3
    assert executor.parameters() == {"tools": "safe,excl,ask,finish", "max_concurrency": "3"}
    assert harness.registry.batch_executor().parameters()["max_concurrency"] == "10"


@pytest.mark.parametrize("cap", [True, 2.0, "2", None])
async def test_R9_max_concurrency_not_an_int_raises_type_error_naming_it(cap: object) -> None:
    with pytest.raises(TypeError, match="max_concurrency"):
        Harness().registry.batch_executor(max_concurrency=cap)  # type: ignore[arg-type]


@pytest.mark.parametrize("cap", [0, -1])
async def test_R9_max_concurrency_below_one_raises_value_error_naming_it(cap: int) -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        Harness().registry.batch_executor(max_concurrency=cap)


async def test_R9_missing_handlers_are_all_named_as_in_R8() -> None:
    registry = ToolRegistry(
        [ToolSpec(name=name, description="d", parameters={}) for name in ("a", "b")]
    )
    with pytest.raises(ValueError, match="'a', 'b'"):
        registry.batch_executor()


async def test_R9_max_concurrency_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        Harness().registry.batch_executor(2)  # type: ignore[misc]


# ---- B1 -------------------------------------------------------------------------------------


async def test_B1_one_outcome_per_call_in_model_order_whatever_the_finishing_order() -> None:
    harness = Harness()
    actions = [act("safe", index) for index in range(5)]
    task = harness.start(actions)
    await settle()
    for index in (3, 1, 4, 0, 2):
        harness.open(index)
        await settle()
    outcomes = await finish(task)
    assert [outcome.observation for outcome in outcomes] == [f"ok {i}" for i in range(5)]
    assert harness.events("exit") == [3, 1, 4, 0, 2]


async def test_B1_empty_batch_returns_empty_tuple_and_calls_nothing() -> None:
    harness = Harness()
    assert await harness.executor.execute_batch([], harness.journal) == ()
    assert await harness.executor.execute_batch((), None) == ()
    assert harness.trace == []
    assert_no_tasks_left()


async def test_B1_non_action_items_raise_before_anything_runs() -> None:
    harness = Harness()
    with pytest.raises(TypeError, match=r"actions\[1\]"):
        await harness.executor.execute_batch([act("safe", 0), "call"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="sequence of Action"):
        await harness.executor.execute_batch(act("safe", 0))  # type: ignore[arg-type]
    assert harness.trace == []


# ---- B2 -------------------------------------------------------------------------------------


async def test_B2_commits_in_model_order_as_soon_as_the_prefix_is_known() -> None:
    harness = Harness()
    actions = [act("safe", index) for index in range(3)]
    task = harness.start(actions)
    await settle()
    harness.open(2)
    await settle()
    assert harness.events("committed") == []  # head-of-line blocking
    harness.open(1)
    await settle()
    assert harness.events("committed") == []
    harness.open(0)
    await settle()
    assert harness.events("committed") == [0, 1, 2]
    outcomes = await finish(task)
    assert harness.journal is not None
    assert all(harness.journal.committed_outcomes[i] is outcomes[i] for i in range(3))


async def test_B2_each_commit_comes_once_its_prefix_is_known_not_at_the_end() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    assert harness.events("committed") == [0]
    assert not task.done()
    harness.open(1)
    await finish(task)
    assert harness.events("committed") == [0, 1]


async def test_B2_a_cancelled_batch_raises_only_after_every_commit() -> None:
    harness = Harness()
    assert harness.journal is not None
    harness.journal.committed_gates[1] = asyncio.Event()
    task = harness.start([act("safe", 0), act("safe", 1), act("excl", 2)])
    await settle()
    harness.open(0, 1)
    await settle()
    assert harness.events("committed") == [0]  # commit 1 is in progress
    task.cancel()
    await settle()
    assert not task.done()
    harness.journal.committed_gates[1].set()
    await settle()
    assert harness.events("committed") == [0, 1, 2]
    with pytest.raises(asyncio.CancelledError):
        await task
    assert harness.journal.committed_outcomes[1].observation == "ok 1"
    # 2 entered once 0 and 1 had settled, so the cancellation interrupted it.
    assert is_synthetic(harness.journal.committed_outcomes[2], ENV_ERROR, INTERRUPTED)
    assert_no_tasks_left()


# ---- B3 -------------------------------------------------------------------------------------


async def test_B3_calls_enter_in_model_order_even_when_the_journal_is_slow() -> None:
    harness = Harness()
    assert harness.journal is not None
    harness.journal.started_gates[0] = asyncio.Event()
    task = harness.start([act("safe", 0), act("safe", 1), act("safe", 2)])
    await settle()
    assert harness.events("enter") == []
    assert harness.events("starting") == [0]  # 1 waits for 0 to be entered
    harness.journal.started_gates[0].set()
    await settle()
    assert harness.events("enter") == [0, 1, 2]
    harness.open(0, 1, 2)
    await finish(task)


async def test_B3_without_a_journal_calls_enter_in_model_order() -> None:
    harness = Harness(cap=2, journal=False)
    task = harness.start([act("safe", i) for i in range(5)])
    await settle()
    for index in (1, 0, 3, 2, 4):
        harness.open(index)
        await settle()
    await finish(task)
    assert harness.events("enter") == [0, 1, 2, 3, 4]


# ---- B4 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("journal", [False, True], ids=["no-journal", "journal"])
@pytest.mark.parametrize("do", ["return", "raise", "env"])
async def test_B4_batch_of_one_equals_execute(do: str, journal: bool) -> None:
    harness = Harness(journal=journal)
    action = act("safe", 0, do)
    expected = await sequential(harness, [action])
    received_alone = dict(harness.received[0])
    assert await run_open(harness, [action]) == tuple(expected)
    assert harness.received[0] == received_alone


@pytest.mark.parametrize("action", [bad("safe", 0), unknown(0), code(0)], ids=str)
async def test_B4_rejected_batch_of_one_equals_execute(action: Action) -> None:
    harness = Harness()
    expected = await sequential(harness, [action])
    assert await run_open(harness, [action]) == tuple(expected)
    assert harness.events("enter") == []


@pytest.mark.parametrize("journal", [False, True], ids=["no-journal", "journal"])
async def test_B4_batch_of_one_raises_executes_type_error_for_a_non_str_result(
    journal: bool,
) -> None:
    harness = Harness(journal=journal)
    harness.open(0)
    with pytest.raises(TypeError) as alone:
        await harness.registry.executor().execute(act("safe", 0, "nonstr"))
    with pytest.raises(TypeError) as batched:
        await harness.executor.execute_batch([act("safe", 0, "nonstr")], harness.journal)
    assert str(batched.value) == str(alone.value)
    assert "'safe'" in str(batched.value)
    assert_no_tasks_left()


async def test_B4_every_outcome_of_a_mixed_batch_is_executes_outcome() -> None:
    harness = Harness(cap=3)
    actions = [
        act("safe", 0),
        act("safe", 1, "raise"),
        bad("excl", 2),
        act("excl", 3),
        code(4),
        unknown(5),
        act("ask", 6, safe=True),
        act("finish", 7),
    ]
    expected = await sequential(harness, actions)
    assert await run_open(harness, actions) == tuple(expected)


# ---- B5 -------------------------------------------------------------------------------------


async def test_B5_outcomes_do_not_depend_on_release_order() -> None:
    results = []
    for order in ((0, 1, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1)):
        harness = Harness(cap=4)
        actions = [act("safe", 0), act("safe", 1, "env"), act("safe", 2, "env"), act("safe", 3)]
        task = harness.start([*actions, act("excl", 4)])
        await settle()
        for index in order:
            harness.open(index)
            await settle()
        results.append(await finish(task))
    assert results[0] == results[1] == results[2]
    assert is_synthetic(results[0][4], NOT_EXECUTED, not_run_env(1))


async def test_B5_synthetic_texts_hold_no_time_or_duration() -> None:
    harness = Harness(cap=1)
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    task.cancel()
    await settle()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert harness.journal is not None
    texts = [outcome.observation for outcome in harness.journal.committed_outcomes.values()]
    assert texts == [INTERRUPTED, NOT_RUN_CANCELLED]
    assert not any(re.search(r"\d", text) for text in texts)


# ---- B6 -------------------------------------------------------------------------------------


async def test_B6_safe_siblings_overlap() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), act("ask", 1, safe=True)])
    await settle()
    assert harness.running() == {0, 1}
    harness.open(0, 1)
    await finish(task)


async def test_B6_an_exclusive_call_is_a_barrier() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), act("safe", 1), act("excl", 2), act("safe", 3)])
    await settle()
    assert harness.running() == {0, 1}
    harness.open(1)
    await settle()
    assert harness.running() == {0}  # 2 waits for every earlier call to settle
    harness.open(0)
    await settle()
    assert harness.running() == {2}  # and 3 waits for 2
    harness.open(2)
    await settle()
    assert harness.running() == {3}
    harness.open(3)
    await finish(task)


@pytest.mark.parametrize(
    "action",
    [
        act("excl", 1),
        act("ask", 1, safe=False),
        act("ask", 1, safe=1),
        act("ask", 1, safe="yes"),
        act("ask", 1, safe="raise"),
        act("finish", 1),
    ],
    ids=["default-false", "callable-false", "truthy-int", "truthy-str", "raising", "completes"],
)
async def test_B6_fail_closed_classification_runs_alone(action: Action) -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), action, act("safe", 2)])
    await settle()
    assert harness.running() == {0}
    harness.open(0)
    await settle()
    assert harness.running() == {1}
    harness.open(1, 2)
    outcomes = await finish(task)
    assert outcomes[1].observation == "ok 1"  # B9: scheduling only, never the outcome


# ---- B7 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", [1, 2, 3])
async def test_B7_never_more_than_the_cap_run(cap: int) -> None:
    harness = Harness(cap=cap)
    task = harness.start([act("safe", index) for index in range(6)])
    await settle()
    peak = len(harness.running())
    for index in range(6):
        harness.open(index)
        await settle()
        peak = max(peak, len(harness.running()))
    await finish(task)
    assert peak == cap
    if cap == 1:
        assert harness.events("enter") == [0, 1, 2, 3, 4, 5]
        assert [e for e, _ in harness.trace if e in ("enter", "exit")] == ["enter", "exit"] * 6


# ---- B8 -------------------------------------------------------------------------------------


class _CountingJournal:
    def __init__(self) -> None:
        self.starts: list[int] = []
        self.commits: list[int] = []

    async def started(self, index: int, action: Action) -> None:
        self.starts.append(index)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        self.commits.append(index)


@pytest.mark.parametrize("journal", [False, True], ids=["no-journal", "journal"])
async def test_B7_B2_a_batch_past_256_calls_keeps_the_cap_and_answers_every_call(
    journal: bool,
) -> None:
    """Counters past CPython's small-int cache (256): a scheduler that compares counts by
    identity rather than value overruns the cap, indexes past the end or never returns."""
    running = peak = 0

    async def handler(arguments: dict[str, Any]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        return f"ok {arguments['n']}"

    spec = ToolSpec(
        name="count",
        description="Count.",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        handler=handler,
        concurrency_safe=True,
    )
    cap, calls = 300, 400
    executor = RegistryBatchExecutor(ToolRegistry([spec]), max_concurrency=cap)
    actions = [Action(tool_call=ToolCall(name="count", arguments={"n": i})) for i in range(calls)]
    recorder = _CountingJournal() if journal else None
    outcomes = await asyncio.wait_for(executor.execute_batch(actions, recorder), timeout=10)
    assert [o.observation for o in outcomes] == [f"ok {i}" for i in range(calls)]
    assert 1 <= peak <= cap
    if recorder is None:
        assert peak == cap  # every slot is filled at once (B8)
    else:
        assert recorder.starts == recorder.commits == list(range(calls))
    assert_no_tasks_left()


async def test_B8_a_freed_slot_is_filled_at_once_not_after_a_window() -> None:
    harness = Harness(cap=2)
    task = harness.start([act("safe", index) for index in range(4)])
    await settle()
    assert harness.running() == {0, 1}
    harness.open(1)  # not the oldest: 0 still runs
    await settle()
    assert harness.running() == {0, 2}
    harness.open(2)
    await settle()
    assert harness.running() == {0, 3}
    harness.open(0, 3)
    await finish(task)


async def test_B8_after_a_barrier_all_allowed_calls_start_together() -> None:
    harness = Harness(cap=3)
    task = harness.start([act("excl", 0)] + [act("safe", index) for index in range(1, 5)])
    await settle()
    harness.open(0)
    await settle()
    assert harness.running() == {1, 2, 3}
    harness.open(1, 2, 3, 4)
    await finish(task)


# ---- B9 -------------------------------------------------------------------------------------


async def test_B9_classifier_called_once_before_entry_never_for_rejected_calls() -> None:
    harness = Harness(cap=1)
    actions = [
        act("ask", 0, safe=True),
        act("ask", 1, safe=False),
        Action(tool_call=ToolCall(name="ask", arguments={"id": "x"})),
        act("ask", 3, safe=True),
    ]
    task = harness.start(actions)
    await settle()
    for index in (0, 1, 3):
        harness.open(index)
        await settle()
    await finish(task)
    assert harness.events("classify") == [0, 1, 3]
    for index in (0, 1, 3):
        assert harness.trace.index(("classify", index)) < harness.trace.index(("enter", index))


async def test_B9_classifier_sees_read_only_arguments() -> None:
    seen: list[object] = []

    def classify(arguments: Any) -> bool:
        seen.append(arguments)
        with pytest.raises(TypeError):
            arguments["id"] = 5
        return True

    async def echo(arguments: dict[str, Any]) -> str:
        return str(arguments["id"])

    registry = ToolRegistry(
        [
            ToolSpec(
                name="t", description="d", parameters={}, handler=echo, concurrency_safe=classify
            )
        ]
    )
    outcomes = await registry.batch_executor().execute_batch(
        [Action(tool_call=ToolCall(name="t", arguments={"id": i})) for i in range(2)]
    )
    assert [outcome.observation for outcome in outcomes] == ["0", "1"]
    assert len(seen) == 2


async def test_B9_a_blocked_exclusive_call_is_classified_only_once() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), act("ask", 1, safe=False)])
    await settle()
    harness.open(0)
    await settle()
    harness.open(1)
    await finish(task)
    assert harness.events("classify") == [1]


# ---- B10 ------------------------------------------------------------------------------------


async def test_B10_rejected_calls_take_no_slot_and_are_no_barrier() -> None:
    harness = Harness(cap=2)
    actions = [act("safe", 0), bad("excl", 1), unknown(2), code(3), act("safe", 4)]
    task = harness.start(actions)
    await settle()
    assert harness.running() == {0, 4}
    assert harness.events("committed") == []  # 0 is still the head of the line
    harness.open(0, 4)
    outcomes = await finish(task)
    assert [outcome.status for outcome in outcomes] == [EXECUTED] + [NOT_EXECUTED] * 3 + [EXECUTED]
    assert harness.events("started") == [0, 4]
    assert harness.events("committed") == [0, 1, 2, 3, 4]


async def test_B10_rejected_calls_behind_an_exclusive_call_resolve_at_once() -> None:
    harness = Harness()
    task = harness.start([act("excl", 0), bad("safe", 1), code(2)])
    await settle()
    harness.open(0)
    outcomes = await finish(task)
    assert outcomes[1].status is NOT_EXECUTED and outcomes[2].status is NOT_EXECUTED


# ---- B11 ------------------------------------------------------------------------------------


async def test_B11_each_handler_gets_its_own_copy() -> None:
    harness = Harness()
    harness.mutate = True
    shared = ToolCall(name="safe", arguments={"id": 0, "nested": {"x": 0}})
    task = harness.start([Action(tool_call=shared), Action(tool_call=shared)])
    await settle()
    assert harness.running() == {0}  # both calls carry id 0, so both handlers used one gate
    harness.open(0)
    outcomes = await finish(task)
    assert shared.arguments == {"id": 0, "nested": {"x": 0}}
    assert [outcome.observation for outcome in outcomes] == ["ok 0", "ok 0"]


# ---- B12 ------------------------------------------------------------------------------------


async def test_B12_an_ordinary_exception_changes_only_its_own_outcome() -> None:
    harness = Harness(cap=2)
    task = harness.start([act("safe", 0), act("safe", 1, "raise"), act("safe", 2), bad("safe", 3)])
    await settle()
    harness.open(1)
    await settle()
    assert harness.running() == {0, 2}  # later calls still enter
    harness.open(0, 2)
    outcomes = await finish(task)
    assert outcomes[1] == ActionOutcome(
        status=EXECUTED,
        observation="ValueError: bad 1",
        observation_is_synthetic=False,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )
    assert outcomes[0].observation == "ok 0" and outcomes[2].observation == "ok 2"
    assert harness.cancels_seen == {}


# ---- B13 ------------------------------------------------------------------------------------


async def test_B13_env_error_stops_the_batch_and_running_calls_finish() -> None:
    harness = Harness(cap=2)
    actions = [act("safe", 0), act("safe", 1, "env"), act("safe", 2), bad("safe", 3)]
    task = harness.start([*actions, act("excl", 4)])
    await settle()
    harness.open(1)
    await settle()
    assert harness.running() == {0}  # 2 is not entered afterwards
    harness.open(0)
    outcomes = await finish(task)
    assert outcomes[0].observation == "ok 0"  # finished, kept its own outcome
    assert outcomes[1].status is ENV_ERROR and outcomes[1].observation == "down 1"
    assert is_synthetic(outcomes[2], NOT_EXECUTED, not_run_env(1))
    assert outcomes[3].status is NOT_EXECUTED and "invalid arguments" in outcomes[3].observation
    assert is_synthetic(outcomes[4], NOT_EXECUTED, not_run_env(1))
    assert harness.cancels_seen == {}
    assert harness.events("enter") == [0, 1]


async def test_B13_names_the_lowest_index_env_error_not_the_first_to_finish() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0, "env"), act("safe", 1, "env"), act("excl", 2)])
    await settle()
    harness.open(1)
    await settle()
    harness.open(0)
    outcomes = await finish(task)
    assert is_synthetic(outcomes[2], NOT_EXECUTED, not_run_env(0))


# ---- B14 ------------------------------------------------------------------------------------


async def test_B14_cancellation_interrupts_running_and_skips_the_rest() -> None:
    harness = Harness(cap=2)
    actions = [act("safe", 0), act("safe", 1), act("safe", 2), bad("safe", 3), act("safe", 4)]
    task = harness.start(actions)
    await settle()
    harness.open(0)
    await settle()  # 0 finished, 2 entered
    task.cancel()
    await settle()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_no_tasks_left()
    assert harness.journal is not None
    out = harness.journal.committed_outcomes
    assert out[0].observation == "ok 0"
    assert is_synthetic(out[1], ENV_ERROR, INTERRUPTED)
    assert is_synthetic(out[2], ENV_ERROR, INTERRUPTED)
    assert out[3].status is NOT_EXECUTED and "invalid arguments" in out[3].observation
    assert is_synthetic(out[4], NOT_EXECUTED, NOT_RUN_CANCELLED)
    assert harness.events("committed") == [0, 1, 2, 3, 4]
    assert harness.events("enter") == [0, 1, 2]


async def test_B14_a_handler_ignoring_cancellation_keeps_the_batch_waiting() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0, "ignore_cancel"), act("excl", 1)])
    await settle()
    for _ in range(3):
        task.cancel()
        await settle()
        assert not task.done()
        assert harness.running() == {0}
    assert harness.cancels_seen == {0: 1}  # sent once, awaited however often cancelled
    harness.open(0)
    await settle()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert harness.journal is not None
    out = harness.journal.committed_outcomes
    assert out[0].observation == "survived 0"  # a finished call keeps its own result
    assert is_synthetic(out[1], NOT_EXECUTED, NOT_RUN_CANCELLED)
    assert_no_tasks_left()


@pytest.mark.parametrize("journal", [False, True], ids=["no-journal", "journal"])
async def test_B14_a_lone_call_swallowing_the_cancel_still_ends_in_cancelled_error(
    journal: bool,
) -> None:
    harness = Harness(journal=journal)
    task = harness.start([act("safe", 0, "ignore_cancel")])
    await settle()
    task.cancel()
    await settle()
    assert not task.done()
    harness.open(0)
    await settle()
    assert isinstance(harness.error, asyncio.CancelledError)
    if harness.journal is not None:
        assert harness.journal.committed_outcomes[0].observation == "survived 0"
    assert_no_tasks_left()


async def test_B14_a_call_finished_before_the_cancel_keeps_its_result() -> None:
    harness = Harness(journal=False)
    task = harness.start([act("safe", 0), act("safe", 1, "raise"), act("safe", 2)])
    await settle()
    harness.open(0, 1)  # both finish in the same turn the cancel lands in
    task.cancel()
    await settle()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_no_tasks_left()
    assert harness.events("exit")[:2] == [0, 1]


async def test_B14_cancelled_while_started_is_awaited_commits_not_run() -> None:
    harness = Harness()
    assert harness.journal is not None
    harness.journal.started_gates[1] = asyncio.Event()
    task = harness.start([act("safe", 0), act("safe", 1), act("safe", 2)])
    await settle()
    assert harness.events("starting") == [0, 1]
    assert harness.events("started") == [0]
    task.cancel()
    await settle()
    with pytest.raises(asyncio.CancelledError):
        await task
    out = harness.journal.committed_outcomes
    assert is_synthetic(out[0], ENV_ERROR, INTERRUPTED)
    assert is_synthetic(out[1], NOT_EXECUTED, NOT_RUN_CANCELLED)
    assert is_synthetic(out[2], NOT_EXECUTED, NOT_RUN_CANCELLED)
    assert harness.events("enter") == [0]
    assert_no_tasks_left()


# ---- B15 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("do,name", [("base", "Stop"), ("cancel_self", "CancelledError")])
async def test_B15_a_handlers_base_exception_stops_and_is_re_raised(do: str, name: str) -> None:
    harness = Harness(cap=3)
    task = harness.start([act("safe", 0), act("safe", 1, do), act("safe", 2), act("excl", 3)])
    await settle()
    harness.open(1)
    await settle()
    assert task.done()
    error = harness.error
    assert type(error).__name__ == name
    assert str(error) == ("stop 1" if do == "base" else "own 1")
    assert harness.cancels_seen == {0: 1, 2: 1}
    assert harness.journal is not None
    out = harness.journal.committed_outcomes
    assert is_synthetic(out[0], ENV_ERROR, INTERRUPTED)
    assert is_synthetic(out[1], ENV_ERROR, INTERRUPTED)
    assert is_synthetic(out[3], NOT_EXECUTED, not_run_raised(1, name))
    assert_no_tasks_left()


async def test_B15_the_same_exception_object_is_re_raised() -> None:
    raised = Stop("mine")

    async def stop(arguments: dict[str, Any]) -> str:
        raise raised

    registry = ToolRegistry([ToolSpec(name="t", description="d", parameters={}, handler=stop)])
    calls = [Action(tool_call=ToolCall(name="t", arguments={})), code(1)]
    with pytest.raises(Stop) as info:
        await registry.batch_executor().execute_batch(calls)
    assert info.value is raised
    assert_no_tasks_left()


async def test_B15_governs_the_sentence_over_a_cancellation() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0, "ignore_then_base"), act("excl", 1)])
    await settle()
    task.cancel()
    await settle()
    harness.open(0)  # after ignoring the cancellation it raises its own BaseException
    await settle()
    with pytest.raises(Stop):
        await task
    assert harness.journal is not None
    out = harness.journal.committed_outcomes
    assert is_synthetic(out[0], ENV_ERROR, INTERRUPTED)
    assert is_synthetic(out[1], NOT_EXECUTED, not_run_raised(0, "Stop"))
    assert_no_tasks_left()


# ---- B16 ------------------------------------------------------------------------------------


async def test_B16_a_journal_fault_stops_cancels_and_propagates() -> None:
    harness = Harness(cap=2)
    assert harness.journal is not None
    fault = OSError("disk full")
    harness.journal.fail_committed[0] = fault
    task = harness.start([act("safe", 0), act("safe", 1), act("safe", 2)])
    await settle()
    harness.open(0)
    await settle()
    assert task.done()
    assert task.exception() is fault
    assert harness.events("committed") == []
    # 2 entered in the slot 0 freed, before commit 0 failed; nothing entered afterwards.
    assert harness.events("enter") == [0, 1, 2]
    assert harness.cancels_seen == {1: 1, 2: 1}
    assert_no_tasks_left()


async def test_B16_a_failing_started_is_no_record_and_stops_the_batch() -> None:
    harness = Harness()
    assert harness.journal is not None
    fault = OSError("log gone")
    harness.journal.fail_started[1] = fault
    task = harness.start([act("safe", 0), act("safe", 1), act("safe", 2)])
    await settle()
    assert task.done()
    assert task.exception() is fault
    assert harness.events("enter") == [0]
    assert harness.cancels_seen == {0: 1}
    assert harness.journal.committed_outcomes == {}
    assert_no_tasks_left()


async def test_B16_a_non_str_result_raises_type_error_and_commits_nothing_more() -> None:
    harness = Harness()
    task = harness.start([act("safe", 0), act("safe", 1, "nonstr"), act("safe", 2)])
    await settle()
    harness.open(0)
    await settle()
    assert harness.events("committed") == [0]
    harness.open(1)
    await settle()
    assert task.done()
    error = task.exception()
    assert isinstance(error, TypeError) and "'safe'" in str(error)
    assert harness.cancels_seen == {2: 1}
    assert harness.events("committed") == [0]  # no outcome invented for 1 or 2
    assert_no_tasks_left()


async def test_B16_journal_fault_while_cancelled_still_raises_the_fault() -> None:
    harness = Harness()
    assert harness.journal is not None
    fault = OSError("disk full")
    harness.journal.fail_committed[1] = fault
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    task.cancel()
    await settle()
    assert task.exception() is fault
    assert harness.events("committed") == [0]
    assert_no_tasks_left()


async def test_B16_running_handlers_are_awaited_before_the_fault_propagates() -> None:
    harness = Harness(cap=2)
    assert harness.journal is not None
    fault = OSError("disk full")
    harness.journal.fail_committed[0] = fault
    task = harness.start([act("safe", 0), act("safe", 1, "ignore_cancel")])
    await settle()
    harness.open(0)
    await settle()
    assert not task.done()  # 1 ignores its cancellation, so the batch waits for it
    assert harness.running() == {1}
    harness.open(1)
    await settle()
    assert harness.error is fault
    assert_no_tasks_left()


async def test_B16_nothing_is_committed_after_a_fault_seen_during_a_commit() -> None:
    harness = Harness()
    assert harness.journal is not None
    harness.journal.committed_gates[0] = asyncio.Event()
    task = harness.start([act("safe", 0), act("safe", 1), act("safe", 2, "nonstr")])
    await settle()
    harness.open(0, 1)
    await settle()  # committed(0) is being awaited; 1's outcome is known
    harness.open(2)
    await settle()
    harness.journal.committed_gates[0].set()
    await settle()
    assert task.done()
    assert isinstance(harness.error, TypeError)
    assert harness.events("committed") == [0]
    assert_no_tasks_left()


# ---- B17 ------------------------------------------------------------------------------------


async def test_B17_started_comes_immediately_before_entry_never_for_rejected() -> None:
    harness = Harness(cap=2)
    actions = [act("safe", 0), bad("safe", 1), act("ask", 2, safe=True), act("excl", 3)]
    task = harness.start(actions)
    await settle()
    for index in (2, 0, 3):
        harness.open(index)
        await settle()
    await finish(task)
    trace = harness.trace
    assert harness.events("started") == [0, 2, 3]
    for index in (0, 2, 3):
        position = trace.index(("started", index))
        assert trace[position + 1] == ("enter", index)
    assert trace.index(("classify", 2)) < trace.index(("started", 2))


async def test_B17_a_call_stopped_during_started_is_committed_not_run() -> None:
    harness = Harness()
    assert harness.journal is not None
    harness.journal.started_gates[1] = asyncio.Event()
    task = harness.start([act("safe", 0, "env"), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    assert not task.done()  # started(1) is still being awaited
    harness.journal.started_gates[1].set()
    outcomes = await finish(task)
    assert is_synthetic(outcomes[1], NOT_EXECUTED, not_run_env(0))
    assert harness.events("enter") == [0]


# ---- B18 ------------------------------------------------------------------------------------


async def test_B18_concurrent_batches_neither_order_nor_limit_each_other() -> None:
    harness = Harness(cap=1, journal=False)
    first = asyncio.ensure_future(harness.executor.execute_batch([act("excl", 0), act("excl", 1)]))
    second = asyncio.ensure_future(harness.executor.execute_batch([act("excl", 2), act("excl", 3)]))
    await settle()
    assert harness.running() == {0, 2}  # each batch has its own cap and its own barrier
    harness.open(2)
    await settle()
    assert harness.running() == {0, 3}
    harness.open(3, 0, 1)
    await settle()
    together = (first.result(), second.result())
    alone = (
        await run_open(harness, [act("excl", 0), act("excl", 1)]),
        await run_open(harness, [act("excl", 2), act("excl", 3)]),
    )
    assert together == alone
    assert_no_tasks_left()


# ---- ports ----------------------------------------------------------------------------------


async def test_ports_journal_protocol_is_structural() -> None:
    class Quiet:
        async def started(self, index: int, action: Action) -> None:
            pass

        async def committed(self, index: int, outcome: ActionOutcome) -> None:
            pass

    journal: BatchJournal = Quiet()
    harness = Harness(journal=False)
    outcomes = await run_open(harness, [act("safe", 0), act("safe", 1)])
    harness.open(0, 1)
    assert await harness.executor.execute_batch([act("safe", 0)], journal) == outcomes[:1]


async def test_ports_a_journal_without_the_methods_is_refused() -> None:
    with pytest.raises(TypeError, match="BatchJournal"):
        await Harness().executor.execute_batch([act("safe", 0)], object())  # type: ignore[arg-type]


# ---- the example ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
def test_example_batch_prints_model_order_history_and_the_cancelled_turn() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "batch.py"
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    lines = result.stdout.splitlines()
    committed = [line.split("#")[1].split()[0] for line in lines if "committed #" in line]
    assert committed == ["0", "1", "2", "3"] * 2
    assert (
        "  journal: committed #2 ENV_ERROR: interrupted while running; its effects are unknown"
        in lines
    )
    assert "  execute_batch raised CancelledError after committing every call" in lines
