"""A batch executor whose scheduler busy-polls its tasks instead of waiting to be woken.

Written from docs/contract.md (section 10, B1-B18, with E1-E15 for single calls) and
polyloop's public API alone; it never reads or uses polyloop's own batch scheduler. One call
is run by the public single-call executor, `RegistryExecutor(registry).execute(action)`;
calls are judged accepted or rejected beforehand with `ToolRegistry.validate`, which is the
check `execute` makes, so a call judged accepted here is run by `execute`, never rejected.

How it waits: the task awaiting `execute_batch` never awaits an event, a condition or a
future to learn that a call or a journal call ended. It runs a loop: one synchronous pass
(`_Batch._advance`: collect every child task whose `.done()` is true, cut entered calls
once the batch must stop, start the next due journal commit, admit the next calls the rules
allow), then `await asyncio.sleep(0)`, and again, until nothing is left. So its event loop
is never idle while a handler is blocked; that is deliberate, it is what this fixture is for.

Stopping: a child that ends its call with ENV_ERROR, a non-str result (E9), its handler's
own `BaseException`, or a failing `started()` raises a shared flag in the same step, so no
call is entered after that even before the next pass. An outside cancellation can only land
on the loop's `sleep(0)`: it is recorded (however often it comes), entered calls are
cancelled, and the loop goes on until every child and journal call has ended and every call
is committed; then the first `CancelledError` it caught is raised. Journal calls run in
their own tasks, one at a time (a `started` or a `committed`, never both), and are never
cancelled by the batch.

A cut call keeps the outcome its own ending gives (B14: its handler may catch the
cancellation and return, or turn it into an ordinary exception; a non-str result is still
B16's fault). Only a call ended by the cancellation, its `CancelledError` propagating out of
`execute`, gets the synthetic "interrupted" sentence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    RegistryExecutor,
    ToolRegistry,
    ToolValidationError,
)

NO_TOOL_CALL = "busy-poller: this action holds code rather than a tool call; no tool was run"
NOT_RUN_ENV = "busy-poller: never started, because call {k} hit a broken environment"
NOT_RUN_CANCEL = "busy-poller: never started, because the batch was called off"
NOT_RUN_RAISED = "busy-poller: never started, because call {k} raised {cls}"
INTERRUPTED = "busy-poller: cut off while running; whether its effects happened is unknown"

# Per-call phases.
_WAITING = 0  # accepted, no child task yet
_OPENING = 1  # child task created, handler not entered (started() may be awaited)
_ENTERED = 2  # the handler has been entered and has not ended
_DONE = 3  # outcome known (rejected calls start here)
_NOT_RUN = 4  # accepted, will never be entered
_LOST = 5  # entered, ended by a fault (E9): no outcome is invented


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


async def _commit(
    journal: BatchJournal, index: int, outcome: ActionOutcome
) -> BaseException | None:
    """Run one `committed()`; hand back what it raised instead of raising it in a task."""
    try:
        await journal.committed(index, outcome)
    except BaseException as exc:  # a task must not raise KeyboardInterrupt out of the loop
        return exc
    return None


@dataclass(eq=False)
class _Stop:
    """Why the batch stopped; the first reason seen, and the raisers."""

    first: str | None = None  # "env", "cancel", "raised" or "fault"
    env_index: int | None = None
    raised: BaseException | None = None
    raised_index: int | None = None
    fault: BaseException | None = None
    cancelled: asyncio.CancelledError | None = None

    def note(self, reason: str) -> None:
        if self.first is None:
            self.first = reason

    @property
    def cutting(self) -> bool:
        """Whether entered calls must be cancelled (B14-B16, not B13)."""
        return self.cancelled is not None or self.raised is not None or self.fault is not None


class _Batch:
    """The state of one `execute_batch` call, advanced by polling."""

    def __init__(
        self,
        owner: BusyPollerExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner = owner
        self.actions = actions
        self.journal = journal
        self.loop = asyncio.get_running_loop()
        count = len(actions)
        self.outcomes: list[ActionOutcome | None] = [owner.rejection(a) for a in actions]
        self.phase = [_WAITING if o is None else _DONE for o in self.outcomes]
        self.safe: list[bool | None] = [None] * count
        self.cut_sent = [False] * count
        self.children: dict[int, asyncio.Task[None]] = {}
        self.cursor = 0
        self.solo: int | None = None  # an exclusive call whose child is alive
        self.opening: int | None = None  # with a journal: the call holding the journal lane
        self.commit_task: asyncio.Task[BaseException | None] | None = None
        self.committed = 0
        self.stop = _Stop()
        self.not_run_outcome: ActionOutcome | None = None

    # -- stopping ------------------------------------------------------------------------

    @property
    def halted(self) -> bool:
        return self.stop.first is not None

    def fail(self, exc: BaseException) -> None:
        if self.stop.fault is None:
            self.stop.fault = exc
        self.stop.note("fault")

    def not_run(self) -> ActionOutcome:
        """The one "not run" outcome of this batch, fixed the first time it is needed (by
        then every entered call has ended, so the reason can no longer change)."""
        if self.not_run_outcome is None:
            stop = self.stop
            if stop.raised is not None:
                text = NOT_RUN_RAISED.format(k=stop.raised_index, cls=type(stop.raised).__name__)
            elif stop.first == "env" and stop.env_index is not None:
                text = NOT_RUN_ENV.format(k=stop.env_index)
            else:
                text = NOT_RUN_CANCEL
            self.not_run_outcome = _synthetic(ActionStatus.NOT_EXECUTED, text)
        return self.not_run_outcome

    def resolved(self, index: int) -> ActionOutcome | None:
        phase = self.phase[index]
        if phase == _DONE:
            return self.outcomes[index]
        if phase == _NOT_RUN or (phase == _WAITING and self.halted):
            return self.not_run()
        return None

    # -- the child task of one call --------------------------------------------------------

    async def child(self, index: int) -> None:
        """Open (journal), enter and end call `index`; every result is written to the shared
        state in the step that produces it. Never raises."""
        if self.halted:
            self.phase[index] = _NOT_RUN
            return
        action = self.actions[index]
        journal = self.journal
        if journal is not None:
            try:
                await journal.started(index, action)
            except BaseException as exc:  # a journal fault (B16); the call is not entered
                self.phase[index] = _NOT_RUN
                self.fail(exc)
                return
            if self.halted:  # stopped while started() was awaited (B17): not run
                self.phase[index] = _NOT_RUN
                return
        self.phase[index] = _ENTERED
        try:
            outcome = await self.owner.single.execute(action)
        except BaseException as exc:
            self.ended_by(index, exc)
            return
        # Returned or raised an ordinary exception: execute's outcome stands, even when the
        # call was cut (B14: the handler caught the cancellation and ended on its own).
        if outcome.status is ActionStatus.ENV_ERROR:
            stop = self.stop
            if stop.env_index is None or index < stop.env_index:
                stop.env_index = index
            stop.note("env")
        self.outcomes[index] = outcome
        self.phase[index] = _DONE

    def ended_by(self, index: int, exc: BaseException) -> None:
        interrupted = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
        if self.cut_sent[index] and isinstance(exc, asyncio.CancelledError):
            self.outcomes[index], self.phase[index] = interrupted, _DONE  # ended by the stop
        elif isinstance(exc, Exception):  # execute's TypeError for a non-str result (E9, B16)
            self.phase[index] = _LOST
            self.fail(exc)
        else:  # the handler's own BaseException (B15)
            self.outcomes[index], self.phase[index] = interrupted, _DONE
            stop = self.stop
            if stop.raised is None:
                stop.raised, stop.raised_index = exc, index
            stop.note("raised")

    # -- one polling pass ------------------------------------------------------------------

    def advance(self) -> None:
        task = self.commit_task
        if task is not None and task.done():
            self.commit_task = None
            error = task.result()
            if error is None:
                self.committed += 1
            else:
                self.fail(error)
        for index in [i for i, child in self.children.items() if child.done()]:
            child = self.children.pop(index)
            if child.cancelled():  # cannot happen (only entered calls are cancelled)
                self.phase[index] = _NOT_RUN
            if self.solo == index:
                self.solo = None
        if self.opening is not None and self.phase[self.opening] != _OPENING:
            self.opening = None  # entered or resolved: the journal lane is free
        if self.stop.cutting:
            for index, child in self.children.items():
                if self.phase[index] == _ENTERED and not self.cut_sent[index] and not child.done():
                    self.cut_sent[index] = True
                    child.cancel()
        self.commit_next()
        self.admit()

    def commit_next(self) -> None:
        journal = self.journal
        if journal is None or self.stop.fault is not None:
            return  # after a fault nothing more is committed (B16)
        if self.commit_task is not None or self.opening is not None:
            return
        if self.committed >= len(self.actions):
            return
        outcome = self.resolved(self.committed)
        if outcome is not None:
            self.commit_task = self.loop.create_task(_commit(journal, self.committed, outcome))

    def admit(self) -> None:
        count = len(self.actions)
        while not self.halted and self.cursor < count:
            if self.journal is not None and (
                self.opening is not None or self.commit_task is not None
            ):
                return  # one journal call at a time
            index = self.cursor
            if self.phase[index] == _DONE:  # rejected: no slot, no barrier (B10)
                self.cursor += 1
                continue
            if self.solo is not None:
                return  # an exclusive call runs alone (B6)
            safe = self.classify(index)
            if safe:
                if len(self.children) >= self.owner.max_concurrency:
                    return
            elif self.children:
                return
            self.phase[index] = _OPENING
            self.children[index] = self.loop.create_task(self.child(index))
            self.cursor += 1
            if not safe:
                self.solo = index
            if self.journal is not None:
                self.opening = index
                return

    def classify(self, index: int) -> bool:
        """Asked at most once per accepted call; only an exact True is safe (B9)."""
        known = self.safe[index]
        if known is None:
            known = self.safe[index] = self.owner.classify(self.actions[index])
        return known

    def finished(self) -> bool:
        if self.children or self.commit_task is not None:
            return False
        if self.stop.fault is not None:
            return True
        if self.journal is not None:
            return self.committed == len(self.actions)
        return self.halted or self.cursor == len(self.actions)

    # -- the driver ----------------------------------------------------------------------

    async def run(self) -> tuple[ActionOutcome, ...]:
        while True:
            self.advance()
            if self.finished():
                break
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError as exc:
                if self.stop.cancelled is None:
                    self.stop.cancelled = exc
                self.stop.note("cancel")
        stop = self.stop
        if stop.raised is not None and not (
            stop.fault is not None and isinstance(stop.raised, asyncio.CancelledError)
        ):
            raise stop.raised
        if stop.fault is not None:
            raise stop.fault
        if stop.cancelled is not None:
            raise stop.cancelled
        results: list[ActionOutcome] = []
        for index in range(len(self.actions)):
            outcome = self.resolved(index)
            assert outcome is not None
            results.append(outcome)
        return tuple(results)


class BusyPollerExecutor:
    """Runs one model turn's tool calls under contract section 10 by busy polling."""

    def __init__(self, registry: ToolRegistry, max_concurrency: int) -> None:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, got {type(max_concurrency).__name__}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.single = RegistryExecutor(registry)  # raises ValueError for a missing handler
        self.registry = registry
        self.max_concurrency = max_concurrency

    def parameters(self) -> dict[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
        }

    def rejection(self, action: Action) -> ActionOutcome | None:
        """The E1/E2 outcome of a rejected call, or None for an accepted one."""
        call = action.tool_call
        if call is None:
            return _synthetic(ActionStatus.NOT_EXECUTED, NO_TOOL_CALL)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _synthetic(ActionStatus.NOT_EXECUTED, str(exc))
        return None

    def classify(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:  # exclusive (B6; docs/contract.md said so only from 2026-12-06)
            return False
        rule = spec.concurrency_safe
        if isinstance(rule, bool):
            return rule is True
        try:
            return rule(call.arguments) is True
        except Exception:  # fail closed: whatever it raises changes scheduling only
            return False

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        batch = tuple(actions)
        for position, action in enumerate(batch):
            if not isinstance(action, Action):
                raise TypeError(f"actions[{position}] is a {type(action).__name__}, not an Action")
        if not batch:
            return ()
        return await _Batch(self, batch, journal).run()


def make_executor(registry: ToolRegistry, *, max_concurrency: int = 10) -> BusyPollerExecutor:
    """The factory the conformance kit calls."""
    return BusyPollerExecutor(registry, max_concurrency)
