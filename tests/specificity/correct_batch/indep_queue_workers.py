"""A batch executor built as a pool of worker tasks fed by queues.

Written from the contract alone (CONTRACT.md sections 1-6 and 10 and polyloop's public API),
without reading polyloop's scheduler or the conformance kit.

Structure: per batch, a dispatcher (the task awaiting `execute_batch`), up to
`max_concurrency` worker tasks and, with a journal, one scribe task. Three queues connect
them: the dispatcher puts call indices on the *job* queue, a worker takes one, awaits
`journal.started(i)`, reports "entered" and enters the handler at once (through
`registry.executor().execute`: section 6 is delegated); it reports the ending on the *report*
queue. The dispatcher puts commits on the *scribe* queue, and the scribe, the only task that
writes `committed`, reports back on the report queue too. The dispatcher owns every decision
(which job may go, which commit is due, which stop governs) and only ever waits on the report
queue; journal calls never overlap because it keeps at most one of them outstanding.

Cancellation from outside interrupts the dispatcher's wait on the report queue: it stops
handing out jobs, cancels every worker holding a call and keeps reading reports (however often
it is cancelled again) until every call has ended and been committed; then it raises a fresh
`CancelledError` of its own. A handler's own `BaseException` is re-raised as that same object.
At the end every worker and the scribe get a sentinel and are awaited, so none outlives the
batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolRegistry,
    ToolValidationError,
)

NO_TOOL_CALL = "queue: no worker took this action, since it is a block of code, not a tool call"
NEVER_RAN_ENV = "queue: this call never ran because call {k} ended in an environment error"
NEVER_RAN_CANCEL = "queue: this call never ran because the batch was cancelled"
NEVER_RAN_RAISE = "queue: this call never ran because call {k} raised {cls}"
STOPPED_MIDWAY = "queue: its worker was stopped mid-call, so the tool may or may not have acted"

_WAITING, _QUEUED, _ENTERED, _SETTLED, _SKIPPED = range(5)


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _Batch:
    """Dispatcher state, workers and scribe of one `execute_batch` call (B18: nothing shared)."""

    def __init__(
        self,
        owner: QueueWorkersExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner = owner
        self.actions = actions
        self.journal = journal
        count = len(actions)
        self.rejected: list[ActionOutcome | None] = [owner.rejection(a) for a in actions]
        self.phase = [_WAITING] * count
        self.outcome: list[ActionOutcome | None] = list(self.rejected)
        self.raised: list[BaseException | None] = [None] * count
        self.safe: list[bool | None] = [None] * count
        self.cancel_sent = [False] * count
        self.holder: dict[int, asyncio.Task[Any]] = {}
        self.jobs: asyncio.Queue[int | None] = asyncio.Queue()
        self.reports: asyncio.Queue[tuple[str, int, Any]] = asyncio.Queue()
        self.scribe_jobs: asyncio.Queue[tuple[int, ActionOutcome] | None] = asyncio.Queue()
        self.helpers: list[asyncio.Task[None]] = []
        self.next_job = 0
        self.next_commit = 0
        self.in_flight = 0
        self.commit_busy = False
        self.barrier: int | None = None
        self.halted = False  # read by the workers: set the moment any stop is known
        self.fault: BaseException | None = None
        self.cancelled = False
        self.env_error = False
        self.first_raiser: int | None = None
        self.never_ran: str | None = None

    # -- workers and scribe -------------------------------------------------------------

    async def worker(self) -> None:
        me = asyncio.current_task()
        assert me is not None
        while True:
            try:
                job = await self.jobs.get()
            except asyncio.CancelledError:
                continue  # a stop aimed at a call this worker had already finished
            if job is None:
                return
            self.holder[job] = me
            await self.work(job)

    async def work(self, index: int) -> None:
        action = self.actions[index]
        post = self.reports.put_nowait
        if self.halted:
            post(("skipped", index, None))
            return
        if self.journal is not None:
            try:
                await self.journal.started(index, action)
            except BaseException as exc:
                if self.cancel_sent[index] and isinstance(exc, asyncio.CancelledError):
                    post(("skipped", index, None))
                else:
                    self.halted = True
                    post(("fault", index, exc))
                return
            if self.halted:
                post(("skipped", index, None))
                return
        post(("entered", index, None))
        try:
            outcome = await self.owner.single.execute(action)
        except asyncio.CancelledError as exc:
            if not self.cancel_sent[index]:
                self.halted = True
            post(("cancelled", index, exc))
        except Exception as exc:  # E9's TypeError: B16
            self.halted = True
            post(("fault", index, exc))
        except BaseException as exc:  # B15
            self.halted = True
            post(("raised", index, exc))
        else:
            if outcome.status is ActionStatus.ENV_ERROR:
                self.halted = True
            post(("done", index, outcome))

    async def scribe(self) -> None:
        journal = self.journal
        assert journal is not None
        while True:
            item = await self.scribe_jobs.get()
            if item is None:
                return
            index, outcome = item
            try:
                await journal.committed(index, outcome)
            except BaseException as exc:
                self.halted = True
                self.reports.put_nowait(("commit_failed", index, exc))
            else:
                self.reports.put_nowait(("committed", index, None))

    # -- the dispatcher -----------------------------------------------------------------

    def stopping(self) -> bool:
        return (
            self.fault is not None
            or self.cancelled
            or self.env_error
            or self.first_raiser is not None
        )

    def cut(self) -> None:
        """Send cancellation to every call a worker holds (B14-B16)."""
        self.halted = True
        for index, task in list(self.holder.items()):
            if self.phase[index] in (_QUEUED, _ENTERED) and not self.cancel_sent[index]:
                self.cancel_sent[index] = True
                task.cancel()

    def on_cancel(self) -> None:
        self.cancelled = True
        self.cut()

    def classify(self, index: int) -> bool:
        call = self.actions[index].tool_call
        assert call is not None
        spec = self.owner.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        rule = spec.concurrency_safe
        if rule is True:
            return True
        if not callable(rule):
            return False
        try:
            return rule(call.arguments) is True
        except Exception:
            return False

    def starting(self) -> bool:
        """A job handed out whose `started` may still be in the journal."""
        return self.journal is not None and _QUEUED in self.phase

    def feed(self) -> None:
        count = len(self.actions)
        while self.next_job < count and not self.stopping():
            index = self.next_job
            if self.rejected[index] is not None:
                self.next_job += 1
                continue
            if self.barrier is not None and self.phase[self.barrier] in (_QUEUED, _ENTERED):
                return
            if self.commit_busy or self.starting():
                return  # one journal call at a time; entries in model order
            safe = self.safe[index]
            if safe is None:
                safe = self.safe[index] = self.classify(index)
            if self.in_flight >= (self.owner.max_concurrency if safe else 1):
                return
            self.phase[index] = _QUEUED
            self.in_flight += 1
            self.jobs.put_nowait(index)
            self.next_job += 1
            if not safe:
                self.barrier = index

    def never_ran_text(self) -> str:
        if self.never_ran is None:
            if self.first_raiser is not None:
                raised = self.raised[self.first_raiser]
                self.never_ran = NEVER_RAN_RAISE.format(
                    k=self.first_raiser, cls=type(raised).__name__
                )
            elif self.cancelled:
                self.never_ran = NEVER_RAN_CANCEL
            else:
                k = next(
                    i
                    for i, outcome in enumerate(self.outcome)
                    if self.phase[i] == _SETTLED
                    and outcome is not None
                    and outcome.status is ActionStatus.ENV_ERROR
                )
                self.never_ran = NEVER_RAN_ENV.format(k=k)
        return self.never_ran

    def final(self, index: int) -> ActionOutcome | None:
        phase = self.phase[index]
        if self.rejected[index] is not None or phase == _SETTLED:
            return self.outcome[index]
        if phase == _SKIPPED or (phase == _WAITING and self.stopping()):
            return _synthetic(ActionStatus.NOT_EXECUTED, self.never_ran_text())
        return None

    def send_commit(self) -> None:
        if self.journal is None or self.fault is not None or self.commit_busy:
            return
        if self.starting() or self.next_commit >= len(self.actions):
            return
        outcome = self.final(self.next_commit)
        if outcome is not None:
            self.commit_busy = True
            self.scribe_jobs.put_nowait((self.next_commit, outcome))

    def finished(self) -> bool:
        if self.in_flight or self.commit_busy:
            return False
        if self.fault is not None:
            return True
        if self.next_job < len(self.actions) and not self.stopping():
            return False
        return self.journal is None or self.next_commit == len(self.actions)

    def take(self, report: tuple[str, int, Any]) -> None:
        kind, index, value = report
        if kind == "committed":
            self.commit_busy = False
            self.next_commit += 1
            return
        if kind == "commit_failed":
            self.commit_busy = False
            self.fault = self.fault or value
            self.cut()
            return
        if kind == "entered":
            self.phase[index] = _ENTERED
            return
        self.holder.pop(index, None)
        self.in_flight -= 1
        if kind == "skipped":
            self.phase[index] = _SKIPPED
            return
        self.phase[index] = _SETTLED
        if kind == "done":
            self.outcome[index] = value
            if value.status is ActionStatus.ENV_ERROR:
                self.env_error = True
        elif kind == "fault":
            self.fault = self.fault or value
            self.cut()
        elif kind == "cancelled" and self.cancel_sent[index]:
            self.outcome[index] = _synthetic(ActionStatus.ENV_ERROR, STOPPED_MIDWAY)
        else:  # "raised", or a CancelledError nobody sent: the handler's own (B15)
            self.raised[index] = value
            self.outcome[index] = _synthetic(ActionStatus.ENV_ERROR, STOPPED_MIDWAY)
            if self.first_raiser is None or index < self.first_raiser:
                self.first_raiser = index
            self.cut()

    async def next_report(self) -> tuple[str, int, Any] | None:
        try:
            return await self.reports.get()
        except asyncio.CancelledError:
            self.on_cancel()
            return None

    async def dispatch(self) -> None:
        accepted = sum(1 for r in self.rejected if r is None)
        for _ in range(min(accepted, self.owner.max_concurrency)):
            self.helpers.append(asyncio.create_task(self.worker()))
        if self.journal is not None:
            self.helpers.append(asyncio.create_task(self.scribe()))
        try:
            while True:
                self.feed()
                self.send_commit()
                if self.finished():
                    return
                report = await self.next_report()
                while report is not None:
                    self.take(report)
                    report = None if self.reports.empty() else self.reports.get_nowait()
        finally:
            for _ in self.helpers:
                self.jobs.put_nowait(None)
            self.scribe_jobs.put_nowait(None)
            pending = [task for task in self.helpers if not task.done()]
            while pending:
                try:
                    await asyncio.wait(pending)
                except asyncio.CancelledError:
                    self.cancelled = True
                pending = [task for task in pending if not task.done()]

    async def run(self) -> tuple[ActionOutcome, ...]:
        await self.dispatch()
        if self.fault is not None:
            raise self.fault
        if self.first_raiser is not None:
            own = self.raised[self.first_raiser]
            assert own is not None
            raise own
        outcomes = []
        for index in range(len(self.actions)):
            outcome = self.final(index)
            assert outcome is not None
            outcomes.append(outcome)
        if self.cancelled:
            raise asyncio.CancelledError("queue_workers: the batch was cancelled")
        return tuple(outcomes)


class QueueWorkersExecutor:
    """Runs one model turn's tool calls under contract section 10 (see the module docstring)."""

    def __init__(self, registry: ToolRegistry, max_concurrency: int) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, got {type(max_concurrency).__name__}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.registry = registry
        self.max_concurrency = max_concurrency
        self.single = registry.executor()
        self._parameters = {
            "tools": ",".join(registry.names()),
            "max_concurrency": str(max_concurrency),
            "scheduler": "queue_workers",
        }

    def parameters(self) -> Mapping[str, str]:
        return dict(self._parameters)

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

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        batch = tuple(actions)
        if not batch:
            return ()
        return await _Batch(self, batch, journal).run()


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> QueueWorkersExecutor:
    """The factory `polyloop-conformance certify` calls."""
    return QueueWorkersExecutor(registry, max_concurrency)
