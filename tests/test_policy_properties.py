"""Contract section 11 over drawn policies, schedules and cancellation points.

Each drawn `Script` (decider answers including garbage and raises; approver answers True,
False, None, 1, "yes", raising or missing; wrappers that pass through, retry, short-circuit or
swallow the cancellation; post-processors that replace, raise or return a non-str) is run on
`execute` and on a batch of one and compared with `oracle`, the section applied by hand. The
batch part draws per-call answers and checks P11's order; the state machine opens the gates
of held listeners and handlers in drawn orders and may cancel the batch at any point.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _policy_harness import (
    APPROVER_ANSWERS,
    DECIDER_ANSWERS,
    HANDLER_KINDS,
    POST_KINDS,
    SECRET,
    WRAPPER_KINDS,
    Recorder,
    Script,
    act,
    decider_answer,
    leftover_tasks,
    oracle,
    settle,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from polyloop import ActionOutcome, ActionStatus, Decision, ToolCall, ToolPolicy
from polyloop.batch import NOT_RUN_CANCELLED

scripts = st.builds(
    Script,
    deciders=st.lists(st.sampled_from(DECIDER_ANSWERS), max_size=4).map(tuple),
    approver=st.sampled_from(APPROVER_ANSWERS),
    wrappers=st.lists(st.sampled_from(WRAPPER_KINDS), max_size=3).map(tuple),
    post=st.lists(st.sampled_from(POST_KINDS), max_size=3).map(tuple),
    default=st.sampled_from(list(Decision)),
    handler=st.sampled_from(HANDLER_KINDS),
)


@given(script=scripts, call_id=st.integers(0, 5))
def test_P2_P3_P4_P5_P6_P8_P10_execute_and_batch_of_one_match_the_oracle(
    script: Script, call_id: int
) -> None:
    expected = oracle(script, call_id)
    for run in ("execute", "batch"):
        recorder = Recorder()

        async def go(recorder: Recorder = recorder, run: str = run) -> ActionOutcome:
            registry = recorder.registry(script.handler)
            policy = recorder.policy(script)
            if run == "execute":
                outcome = await registry.executor(policy=policy).execute(act(call_id))
            else:
                journal = recorder.journal()
                (outcome,) = await registry.batch_executor(policy=policy).execute_batch(
                    [act(call_id)], journal
                )
                assert journal.committed_outcomes == {0: outcome}
            assert leftover_tasks() == set()
            return outcome

        outcome = asyncio.run(go())
        assert outcome == expected.outcome, run
        assert recorder.stages() == expected.stages, run
        if outcome.observation_is_synthetic:
            assert SECRET not in outcome.observation


@given(
    script=scripts,
    point=st.integers(0, 30),
    swallow=st.booleans(),
    batch=st.booleans(),
)
def test_P9_a_cancellation_anywhere_ends_in_cancelled_error_with_nothing_entered_after(
    script: Script, point: int, swallow: bool, batch: bool
) -> None:
    stages = oracle(script).stages
    inert = not (script.deciders or script.wrappers or script.post) and (
        script.default is Decision.ALLOW
    )
    # An inert policy is no policy: a handler that swallows a cancellation decides (E6).
    assume(stages and not (inert and swallow and not batch))
    gate_at = point % len(stages)
    recorder = Recorder()
    recorder.gates[gate_at] = asyncio.Event()
    if swallow:
        recorder.swallow_at.add(gate_at)
    registry = recorder.registry(script.handler)
    policy = recorder.policy(script)
    journal = recorder.journal()

    async def scenario() -> None:
        if batch:
            task: asyncio.Task[Any] = asyncio.create_task(
                registry.batch_executor(policy=policy).execute_batch([act(0)], journal)
            )
        else:
            task = asyncio.create_task(registry.executor(policy=policy).execute(act(0)))
        await settle()
        assert len(recorder.stages()) == gate_at + 1
        task.cancel()
        await settle()
        assert task.done()
        assert task.cancelled() or isinstance(task.exception(), asyncio.CancelledError)
        assert leftover_tasks() == set()

    asyncio.run(scenario())
    after = recorder.stages()[gate_at + 1 :]
    assert ("handler", 0) not in after
    assert all(stage != "post" for stage, _ in after)
    if batch:
        (committed,) = journal.committed_outcomes.values()
        assert SECRET not in committed.observation or not script.post
        held = stages[gate_at][0]
        if held in ("decide", "approve"):
            assert committed.observation == NOT_RUN_CANCELLED
        if held == "handler" and not swallow:
            assert committed.status is ActionStatus.ENV_ERROR


def _table_policy(
    recorder: Recorder, table: list[tuple[str, ...]], approve: list[bool]
) -> ToolPolicy:
    """Deciders whose answers depend on the call's id: `table[id][position]`."""

    def decider(position: int) -> Any:
        async def decide(call: ToolCall) -> Any:
            call_id = call.arguments["id"]
            await recorder.step("decide", position, call_id, None)
            return decider_answer(position, table[call_id][position])

        return decide

    async def approver(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        await recorder.step("approve", 0, call.arguments["id"], reasons)
        return approve[call.arguments["id"]]

    return ToolPolicy(deciders=[decider(0), decider(1)], approver=approver)


answers = st.tuples(*[st.sampled_from(("allow", "ask", "deny", "abstain", "raise"))] * 2)


@given(
    table=st.lists(answers, min_size=1, max_size=8),
    data=st.data(),
    safe=st.booleans(),
    cap=st.integers(1, 4),
)
def test_P11_batch_decides_one_call_at_a_time_in_model_order_before_classify_and_started(
    table: list[tuple[str, ...]], data: st.DataObject, safe: bool, cap: int
) -> None:
    approve = data.draw(st.lists(st.booleans(), min_size=len(table), max_size=len(table)))
    recorder = Recorder()
    registry = recorder.registry(safe=safe)
    policy = _table_policy(recorder, table, approve)
    journal = recorder.journal()
    outcomes = asyncio.run(
        registry.batch_executor(policy=policy, max_concurrency=cap).execute_batch(
            [act(i) for i in range(len(table))], journal
        )
    )
    # Each call's outcome is the one `execute` gives it with the same policy (B4, P6: no stop).
    for call_id, outcome in enumerate(outcomes):
        single = Recorder()
        expected = asyncio.run(
            single.registry(safe=safe)
            .executor(policy=_table_policy(single, table, approve))
            .execute(act(call_id))
        )
        assert outcome == expected
    assert recorder.overlap.get("deciding", 0) <= 1
    deciding_ids = [i for stage, _, i, _ in recorder.trace if stage in ("decide", "approve")]
    assert deciding_ids == sorted(deciding_ids)
    for call_id, outcome in enumerate(outcomes):
        events = [(stage, i) for stage, _, i, _ in recorder.trace]
        last_decide = max(
            n
            for n, (stage, i) in enumerate(events)
            if stage in ("decide", "approve") and i == call_id
        )
        denied = outcome.status is ActionStatus.NOT_EXECUTED
        for stage in ("classify", "started", "handler"):
            where = [n for n, (s, i) in enumerate(events) if s == stage and i == call_id]
            if denied:
                assert where == [], f"denied call {call_id} reached {stage}"
            else:
                assert where and where[0] > last_decide, f"call {call_id} {stage} before deciding"
    assert recorder.overlap.get("handler", 0) <= (cap if safe else 1)


class PolicyBatchMachine(RuleBasedStateMachine):
    """A batch whose every listener and handler is held at a gate; the machine opens them in
    the order it draws and may cancel the batch. Checked after every step: deciding stages
    never overlap, at most `cap` chains run, no denied call is ever classified, started or
    entered."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.recorder = Recorder(hold=True)
        self.task: asyncio.Task[Any] | None = None
        self.cancelled = False
        self.cap = 2
        self.table: list[tuple[str, ...]] = []
        self.approve: list[bool] = []

    def _settle(self) -> None:
        self.loop.run_until_complete(settle())

    @precondition(lambda self: self.task is None)
    @rule(
        table=st.lists(answers, min_size=1, max_size=6),
        approve=st.lists(st.booleans(), min_size=6, max_size=6),
        cap=st.integers(1, 3),
        wrap=st.booleans(),
    )
    def start(
        self, table: list[tuple[str, ...]], approve: list[bool], cap: int, wrap: bool
    ) -> None:
        self.table, self.approve, self.cap = table, approve, cap
        base = _table_policy(self.recorder, table, approve)
        wrappers = (self.recorder.wrapper(0, "pass"),) if wrap else ()
        post = (self.recorder.post(0, "replace"),)
        policy = ToolPolicy(
            deciders=base.deciders, approver=base.approver, wrappers=wrappers, post=post
        )
        batch = self.recorder.registry(safe=True).batch_executor(policy=policy, max_concurrency=cap)
        self.journal = self.recorder.journal()
        self.task = self.loop.create_task(
            batch.execute_batch([act(i) for i in range(len(table))], self.journal)
        )
        self._settle()

    @precondition(lambda self: self.task is not None and bool(self.recorder.waiting))
    @rule(choice=st.integers(0, 100))
    def open_one(self, choice: int) -> None:
        keys = sorted(self.recorder.waiting)
        self.recorder.waiting[keys[choice % len(keys)]].set()
        self._settle()

    @precondition(
        lambda self: self.task is not None and not self.task.done() and not self.cancelled
    )
    @rule()
    def cancel(self) -> None:
        assert self.task is not None
        self.cancelled = True
        self.task.cancel()
        self._settle()

    @rule()
    def settle_loop(self) -> None:
        self._settle()

    @invariant()
    def deciding_never_overlaps_and_chains_respect_the_cap(self) -> None:
        assert self.recorder.active.get("deciding", 0) <= 1
        assert self.recorder.overlap.get("deciding", 0) <= 1
        running = {i for stage, _, i, _ in self.recorder.trace if stage == "started"} - {
            i for stage, _, i, _ in self.recorder.trace if stage == "committed"
        }
        del running  # committed lags settled (head-of-line), so only the handler count is exact
        assert self.recorder.overlap.get("handler", 0) <= self.cap

    @invariant()
    def denied_calls_take_no_slot(self) -> None:
        if not self.table:
            return
        for call_id, answer in enumerate(self.table):
            denies = "deny" in answer or "raise" in answer
            refused = not denies and "ask" in answer and not self.approve[call_id]
            if denies or refused:
                for stage, _, i, _ in self.recorder.trace:
                    if i == call_id and stage in ("classify", "started", "handler", "wrap"):
                        raise AssertionError(f"denied call {call_id} reached {stage}")

    def teardown(self) -> None:
        try:
            if self.task is not None:
                for _ in range(200):
                    if self.task.done():
                        break
                    for gate in list(self.recorder.waiting.values()):
                        gate.set()
                    self._settle()
                assert self.task.done()
                if self.cancelled:
                    assert self.task.cancelled() or isinstance(
                        self.task.exception(), asyncio.CancelledError
                    )
                else:
                    outcomes = self.task.result()
                    assert len(outcomes) == len(self.table)
                    assert self.journal.committed_outcomes == dict(enumerate(outcomes))
                    for outcome in outcomes:
                        assert SECRET not in outcome.observation  # redacted by post[0]
                pending = self.loop.run_until_complete(_leftovers())
                assert pending == set()
        finally:
            self.loop.close()


async def _leftovers() -> set[asyncio.Task[Any]]:
    return leftover_tasks()


TestPolicyBatchMachine = PolicyBatchMachine.TestCase
TestPolicyBatchMachine.settings = settings(stateful_step_count=25, deadline=None)
