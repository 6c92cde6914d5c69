"""Contract section 10 as properties: generated batches and schedules against a sequential oracle.

Hypothesis draws the batch (0-8 calls over every classification kind, every handler behaviour,
invalid and unknown calls, code actions), the cap (1-4), the order in which gates open and a
cancellation point. The oracle is `RegistryExecutor.execute` run one call at a time, plus the
contract's rules for what a stop does to each call, read off which calls the trace shows
entered. A `RuleBasedStateMachine` lets Hypothesis choose every next step and checks the
scheduling invariants after each one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from _batch_harness import (
    INTERRUPTED,
    LIVE,
    NOT_RUN_CANCELLED,
    Harness,
    Stop,
    act,
    bad,
    code,
    settle,
    unknown,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from polyloop import Action, ActionOutcome, ActionStatus
from polyloop.types import _trusted_outcome

KINDS = (
    "safe",
    "excl",
    "ask_true",
    "ask_false",
    "ask_raise",
    "ask_truthy",
    "finish",
    "bad",
    "unknown",
    "code",
)
"""Classification kinds of S6 (True, False, callable True/False/raising/truthy, completes_run)
and the three kinds of rejected call."""
SAFE_KINDS = ("safe", "ask_true")
REJECTED_KINDS = ("bad", "unknown", "code")
BEHAVIOURS = ("return", "raise", "env", "ignore_cancel", "nonstr", "base", "cancel_self")
ASK = {"ask_true": True, "ask_false": False, "ask_raise": "raise", "ask_truthy": 1}


@dataclass(frozen=True)
class Call:
    kind: str
    do: str

    def action(self, index: int) -> Action:
        if self.kind == "bad":
            return bad("safe", index)
        if self.kind == "unknown":
            return unknown(index)
        if self.kind == "code":
            return code(index)
        if self.kind in ASK:
            return act("ask", index, self.do, safe=ASK[self.kind])
        return act(self.kind, index, self.do)

    @property
    def exclusive(self) -> bool:
        return self.kind not in SAFE_KINDS


calls_strategy = st.lists(
    st.builds(Call, st.sampled_from(KINDS), st.sampled_from(BEHAVIOURS)), max_size=8
)


overlapping_calls = st.lists(
    st.builds(
        Call,
        st.sampled_from((*KINDS, "safe", "safe", "safe", "ask_true")),
        st.sampled_from(BEHAVIOURS),
    ),
    max_size=8,
)
"""Like `calls_strategy`, weighted towards concurrency-safe calls so that schedules overlap."""


def check_invariants(harness: Harness, calls: Sequence[Call], cap: int) -> None:
    """B3, B6, B7, B9, B10, B17, B2 and "nothing entered after a stop", over the whole trace."""
    running: set[int] = set()
    stopped = False
    entered: list[int] = []
    classified: list[int] = []
    trace = harness.trace
    for position, (event, index) in enumerate(trace):
        if event == "enter":
            assert not stopped, f"B13-B16: call {index} entered after a stop: {trace}"
            assert calls[index].kind not in REJECTED_KINDS, "B10: a rejected call entered"
            assert not entered or index > entered[-1], f"B3: entered out of order: {trace}"
            if calls[index].exclusive:
                assert not running, f"B6: exclusive call {index} overlapped {running}"
            assert not any(calls[other].exclusive for other in running), f"B6: {trace}"
            running.add(index)
            entered.append(index)
            assert len(running) <= cap, f"B7: {len(running)} handlers ran with cap {cap}"
            if calls[index].kind in ASK and len(calls) > 1:  # one call: nothing to schedule
                assert index in classified, f"B9: call {index} entered unclassified"
        elif event == "exit":
            running.discard(index)
        elif event in ("stop", "cancel"):
            stopped = True
        elif event == "classify":
            assert index not in classified, f"B9: call {index} classified twice"
            classified.append(index)
        elif event == "started":
            assert calls[index].kind not in REJECTED_KINDS, "B17: started for a rejected call"
            following = trace[position + 1] if position + 1 < len(trace) else None
            assert following in (None, ("enter", index)) or ("enter", index) not in trace, (
                f"B17: started({index}) not immediately followed by its entry: {trace}"
            )
    committed = harness.events("committed")
    assert committed == list(range(len(committed))), f"B2: commits out of order: {committed}"


def check_progress(
    harness: Harness,
    calls: Sequence[Call],
    cap: int,
    task: asyncio.Task[tuple[ActionOutcome, ...]],
    cancelled: bool,
) -> None:
    """At a settled point (no journal record pending): B8, B14-B16 drains, and no early return.

    Work-conserving (B8): unless the batch is stopping, the first accepted call not yet entered
    is held back only by the cap or by exclusivity. After a cancellation or a handler's own
    BaseException / non-str result, every handler still running was sent cancellation (B14-B16).
    A finished batch has no handler still running.
    """
    running = harness.running()
    if task.done():
        assert not running, f"B14: the batch ended while {running} still ran"
        return
    entered = set(harness.events("enter"))
    hard_stop = cancelled or any(
        index in entered
        and index not in running
        and index not in harness.cancels_seen
        and calls[index].do in ("nonstr", "base", "cancel_self")
        for index in range(len(calls))
    )
    if hard_stop:
        unsent = running - set(harness.cancels_seen)
        assert not unsent, f"B14-B16: {unsent} still run and were never sent cancellation"
        return
    if any(event == "stop" for event, _ in harness.trace):
        return  # an ENV_ERROR stop: nothing more enters, running calls finish (B13)
    waiting = [
        index
        for index, call in enumerate(calls)
        if call.kind not in REJECTED_KINDS and index not in entered
    ]
    if not waiting:
        return
    head = waiting[0]
    held = (
        len(running) >= cap
        or any(calls[other].exclusive for other in running)
        or (calls[head].exclusive and bool(running))
    )
    assert held, f"B8/B10: call {head} could enter but did not (running {running}, cap {cap})"


def expected(
    harness: Harness, calls: Sequence[Call], oracle: Sequence[ActionOutcome | None], cancelled: bool
) -> tuple[list[ActionOutcome | None], type[BaseException] | None]:
    """Every call's outcome by the contract, given which calls the trace shows entered."""
    entered = set(harness.events("enter"))
    outcomes: list[ActionOutcome | None] = []
    raised: list[tuple[int, str]] = []
    fault = False
    for index, call in enumerate(calls):
        if call.kind in REJECTED_KINDS:
            outcomes.append(oracle[index])
        elif index not in entered:
            outcomes.append(None)  # not run: the sentence depends on the stop, below
        elif index in harness.cancels_seen:
            survived = call.do == "ignore_cancel"
            outcomes.append(
                _trusted_outcome(ActionStatus.EXECUTED, f"survived {index}", False)
                if survived
                else _trusted_outcome(ActionStatus.ENV_ERROR, INTERRUPTED, True)
            )
        elif call.do == "nonstr":
            fault = True
            outcomes.append(None)
        elif call.do in ("base", "cancel_self"):
            raised.append((index, "Stop" if call.do == "base" else "CancelledError"))
            outcomes.append(_trusted_outcome(ActionStatus.ENV_ERROR, INTERRUPTED, True))
        else:
            outcomes.append(oracle[index])  # ran to its end: exactly what execute gives (B4)
    if fault:
        return outcomes, TypeError
    error: type[BaseException] | None = None
    text = None
    if raised:
        first, name = min(raised)
        text = f"not run: call {first} raised {name}"
        error = Stop if name == "Stop" else asyncio.CancelledError
    elif cancelled:
        text, error = NOT_RUN_CANCELLED, asyncio.CancelledError
    else:
        env = [
            i
            for i, outcome in enumerate(outcomes)
            if outcome is not None and outcome.status is ActionStatus.ENV_ERROR
        ]
        if env:
            text = f"not run: call {env[0]} reported an environment error"
    for index, outcome in enumerate(outcomes):
        if outcome is None:
            assert text is not None, f"call {index} was not entered although nothing stopped"
            outcomes[index] = _trusted_outcome(ActionStatus.NOT_EXECUTED, text, True)
    return outcomes, error


async def sequential_oracle(calls: Sequence[Call]) -> list[ActionOutcome | None]:
    """`execute` one call at a time; None where execute itself raises (E6, E9)."""
    harness = Harness(journal=False)
    executor = harness.registry.executor()
    results: list[ActionOutcome | None] = []
    for index, call in enumerate(calls):
        harness.open(index)
        if call.kind not in REJECTED_KINDS and call.do in ("nonstr", "base", "cancel_self"):
            results.append(None)
            continue
        results.append(await executor.execute(call.action(index)))
    return results


async def drive(
    calls: Sequence[Call], cap: int, order: Sequence[int], cancel_at: int | None, journal: bool
) -> None:
    oracle = await sequential_oracle(calls)
    harness = Harness(cap=cap, journal=journal)
    try:
        await _drive(harness, calls, cap, order, cancel_at, journal, oracle)
    finally:
        harness.release_everything()  # a failed check must not leave a handler waiting
        await settle()
        LIVE.clear()


async def _drive(
    harness: Harness,
    calls: Sequence[Call],
    cap: int,
    order: Sequence[int],
    cancel_at: int | None,
    journal: bool,
    oracle: Sequence[ActionOutcome | None],
) -> None:
    task = harness.start([call.action(index) for index, call in enumerate(calls)])
    await settle()
    check_invariants(harness, calls, cap)
    cancelled = False
    if len(calls) > 1 or journal:
        check_progress(harness, calls, cap, task, cancelled)
    for step, index in enumerate(order):
        if task.done():
            break
        if step == cancel_at:
            harness.trace.append(("cancel", -1))
            task.cancel()
            cancelled = True
            await settle()
            check_invariants(harness, calls, cap)
            check_progress(harness, calls, cap, task, cancelled)
        harness.open(index)
        await settle()
        check_invariants(harness, calls, cap)
        check_progress(harness, calls, cap, task, cancelled)
    harness.open(*range(len(calls)))  # a handler that ignored its cancellation ends now
    await settle()
    assert task.done(), "B14: the batch did not end once every handler ended"
    assert asyncio.all_tasks() == {asyncio.current_task()}, "a task outlived the batch"
    want, error = expected(harness, calls, oracle, cancelled)
    if error is None:
        assert harness.error is None, f"unexpected {harness.error!r}"
        assert list(task.result()) == want
    else:
        assert isinstance(harness.error, error), f"expected {error}, got {harness.error!r}"
    if journal:
        assert harness.journal is not None
        got = harness.journal.committed_outcomes
        if error is not TypeError:
            assert sorted(got) == list(range(len(calls))), "B2: a call was not committed"
        for index, outcome in got.items():
            assert outcome == want[index], f"call {index}: committed {outcome}, want {want[index]}"


@st.composite
def schedules(draw: Any) -> tuple[list[Call], int, list[int], int | None, bool]:
    calls = draw(calls_strategy)
    cap = draw(st.integers(1, 4))
    order = draw(st.permutations(range(len(calls))))
    cancel_at = draw(st.none() | st.integers(0, max(len(calls) - 1, 0)))
    journal = draw(st.booleans())
    return calls, cap, order, cancel_at, journal


@settings(max_examples=300, deadline=None)
@given(schedules())
def test_B1_to_B17_generated_batches_match_the_sequential_oracle(
    schedule: tuple[list[Call], int, list[int], int | None, bool],
) -> None:
    asyncio.run(drive(*schedule))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.builds(Call, st.sampled_from(KINDS), st.sampled_from(("return", "raise", "env"))),
        max_size=8,
    ),
    st.integers(1, 4),
)
def test_B4_B12_without_stops_outcomes_equal_execute_one_at_a_time(
    calls: list[Call], cap: int
) -> None:
    calls = [Call(call.kind, "return" if call.do == "env" else call.do) for call in calls]

    async def check() -> None:
        oracle = await sequential_oracle(calls)
        harness = Harness(cap=cap)
        harness.open(*range(len(calls)))
        got = await harness.executor.execute_batch(
            [call.action(index) for index, call in enumerate(calls)], harness.journal
        )
        assert list(got) == oracle
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(check())
    LIVE.clear()


@settings(max_examples=40, deadline=None)
@given(st.lists(calls_strategy, min_size=2, max_size=3), st.integers(1, 3))
def test_B18_concurrent_batches_equal_the_same_batches_one_after_the_other(
    batches: list[list[Call]], cap: int
) -> None:
    """Each batch's calls get distinct ids, so gates are shared by nobody."""
    safe = [
        [Call(c.kind, c.do if c.do in ("return", "raise", "env") else "return") for c in b]
        for b in batches
    ]

    def actions_of(harness: Harness) -> list[list[Action]]:
        result, offset = [], 0
        for batch in safe:
            result.append([call.action(offset + i) for i, call in enumerate(batch)])
            offset += len(batch)
        return result

    async def check() -> None:
        harness = Harness(cap=cap, journal=False)
        harness.open(*range(sum(len(b) for b in safe)))
        together = await asyncio.gather(
            *(harness.executor.execute_batch(a) for a in actions_of(harness))
        )
        alone = [await harness.executor.execute_batch(a) for a in actions_of(harness)]
        assert list(together) == alone
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(check())
    LIVE.clear()


# ---- the state machine ------------------------------------------------------------------------


class BatchSchedule(RuleBasedStateMachine):
    """Hypothesis picks each next step (open a running call's gate, open a waiting journal
    record, cancel); the invariants hold after every one."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.harness: Harness | None = None
        self.task: asyncio.Task[tuple[ActionOutcome, ...]] | None = None
        self.calls: list[Call] = []
        self.cap = 1

    def run(self, coroutine: Any) -> None:
        self.loop.run_until_complete(coroutine)

    @initialize(calls=overlapping_calls, cap=st.integers(1, 4), slow_journal=st.booleans())
    def start(self, calls: list[Call], cap: int, slow_journal: bool) -> None:
        self.calls, self.cap = calls, cap

        async def begin() -> None:
            self.harness = Harness(cap=cap)
            assert self.harness.journal is not None
            if slow_journal:
                for index in range(len(calls)):
                    self.harness.journal.started_gates[index] = asyncio.Event()
            self.task = self.harness.start([c.action(i) for i, c in enumerate(calls)])
            await settle()

        self.run(begin())

    @precondition(lambda self: self.harness is not None and self.harness.running())
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        assert self.harness is not None
        index = data.draw(st.sampled_from(sorted(self.harness.running())))
        self.harness.open(index)
        self.run(settle())

    @precondition(lambda self: self.harness is not None and self._waiting_records())
    @rule(data=st.data())
    def record(self, data: st.DataObject) -> None:
        assert self.harness is not None and self.harness.journal is not None
        index = data.draw(st.sampled_from(self._waiting_records()))
        self.harness.journal.started_gates[index].set()
        self.run(settle())

    @precondition(lambda self: self.task is not None and not self.task.done())
    @rule()
    def cancel(self) -> None:
        assert self.harness is not None and self.task is not None
        self.harness.trace.append(("cancel", -1))
        self.task.cancel()
        self.run(settle())

    @rule()
    def idle(self) -> None:
        """Nothing to open: the batch must still keep its rules (and may have ended)."""
        self.run(settle())

    def _waiting_records(self) -> list[int]:
        if self.harness is None or self.harness.journal is None:
            return []
        gates = self.harness.journal.started_gates
        started = set(self.harness.events("starting"))
        return [i for i, gate in gates.items() if i in started and not gate.is_set()]

    @invariant()
    def scheduling_rules_hold(self) -> None:
        if self.harness is not None:
            check_invariants(self.harness, self.calls, self.cap)

    def teardown(self) -> None:
        async def end() -> None:
            if self.harness is not None and self.harness.journal is not None:
                for gate in self.harness.journal.started_gates.values():
                    gate.set()
                self.harness.open(*range(len(self.calls)))
                await settle()
                assert self.task is not None and self.task.done(), "the batch never ended"
                check_invariants(self.harness, self.calls, self.cap)
                if self.harness.error is None:
                    assert sorted(self.harness.journal.committed_outcomes) == list(
                        range(len(self.calls))
                    )
            assert asyncio.all_tasks() == {asyncio.current_task()}

        try:
            self.run(end())
        finally:
            if self.harness is not None:
                self.harness.release_everything()
                self.run(settle())
            LIVE.clear()
            self.loop.close()


BatchSchedule.TestCase.settings = settings(max_examples=100, stateful_step_count=15, deadline=None)
test_B2_B3_B6_B7_state_machine = BatchSchedule.TestCase
