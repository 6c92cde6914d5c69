"""A batch executor built on `asyncio.TaskGroup` and a ledger of call states.

Written from the contract alone (CONTRACT.md sections 1-6 and 10 and polyloop's public API),
without reading polyloop's scheduler or the conformance kit.

Structure: one driver coroutine (the task awaiting `execute_batch`) runs inside a task group
(`asyncio.TaskGroup` on Python 3.11+, a small hand-written group with the same guarantee on
3.10: no child outlives the block). It keeps a *ledger*, one line per call holding the call's
phase (waiting, starting, running, settled, skipped), and loops: admit every call the rules
allow, write every commit whose prefix is known, then sleep on one `asyncio.Event` that every
child sets when its line changes. Each call runs in its own child task, which awaits
`journal.started(i)` and then enters the handler with no suspension in between. Accepted calls
are dispatched through `registry.executor().execute` (section 6 delegated); rejections, the
"no tool call" sentence and every stop sentence are this module's own.

Cancellation from outside is caught by the driver, sent to every child that is starting or
running, and the driver keeps waiting (however often it is cancelled again) until every child
ended and every call is committed; then it re-raises the `CancelledError` its own task received
first. A handler's own `BaseException` is re-raised as that same object.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolRegistry,
    ToolValidationError,
)

NO_TOOL_CALL = "ledger: nothing was dispatched, because this action holds code and no tool call"
HALTED_BY_ENV = "ledger: never started; call {k} hit a broken environment and halted the batch"
HALTED_BY_CANCEL = "ledger: never started; the batch was called off by a cancellation"
HALTED_BY_RAISE = "ledger: never started; call {k} raised {cls}, which halted the batch"
CUT_OFF = "ledger: cut off by a stop while its tool was running; whether it took effect is unknown"

_WAITING, _STARTING, _RUNNING, _SETTLED, _SKIPPED = range(5)


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _FallbackGroup:
    """What `asyncio.TaskGroup` guarantees here, for Python 3.10: on exit every child is awaited
    (cancelled first when the block raised), however often the awaiting task is cancelled."""

    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[Any]] = []

    async def __aenter__(self) -> _FallbackGroup:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            for task in self._tasks:
                task.cancel()
        cancelled: BaseException | None = None
        pending = [task for task in self._tasks if not task.done()]
        while pending:
            try:
                await asyncio.wait(pending)
            except asyncio.CancelledError as again:
                cancelled = again
                for task in pending:
                    task.cancel()
            pending = [task for task in pending if not task.done()]
        if cancelled is not None and exc is None:
            raise cancelled

    def create_task(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.append(task)
        return task


def _new_group() -> Any:
    if sys.version_info >= (3, 11):
        return asyncio.TaskGroup()
    return _FallbackGroup()


async def _captured(awaitable: Awaitable[None]) -> BaseException | None:
    """Run a journal call in a child that never fails the group: its exception is its value."""
    try:
        await awaitable
    except BaseException as exc:  # handed to the driver, which decides
        return exc
    return None


class _Line:
    """One ledger line: everything the driver knows about call `index`."""

    __slots__ = (
        "action",
        "began",
        "cancel_sent",
        "index",
        "outcome",
        "phase",
        "raised",
        "rejection",
        "safe",
        "task",
    )

    def __init__(self, index: int, action: Action, rejection: ActionOutcome | None) -> None:
        self.index = index
        self.action = action
        self.rejection = rejection
        self.safe: bool | None = None
        self.phase = _WAITING
        self.outcome: ActionOutcome | None = rejection
        self.raised: BaseException | None = None
        self.cancel_sent = False
        self.began = False
        self.task: asyncio.Task[Any] | None = None


class _Run:
    """The state of one `execute_batch` call (nothing is shared between batches: B18)."""

    def __init__(
        self,
        owner: TaskGroupLedgerExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner = owner
        self.journal = journal
        self.lines = [
            _Line(index, action, owner.rejection(action)) for index, action in enumerate(actions)
        ]
        self.changed = asyncio.Event()
        self.cursor = 0
        self.committed = 0
        self.active = 0
        self.barrier: _Line | None = None
        self.fault: BaseException | None = None
        self.cancelled: asyncio.CancelledError | None = None
        self.env_stop = False
        self.skip_text: str | None = None
        self.group: Any = None

    # -- stops --------------------------------------------------------------------------

    def stopping(self) -> bool:
        return (
            self.fault is not None
            or self.cancelled is not None
            or self.env_stop
            or any(line.raised is not None for line in self.lines)
        )

    def cut_children(self) -> None:
        for line in self.lines:
            if line.phase in (_STARTING, _RUNNING) and not line.cancel_sent:
                line.cancel_sent = True
                if line.began:  # a child that has not begun sees the stop at its first step
                    assert line.task is not None
                    line.task.cancel()

    def on_outer_cancel(self, exc: asyncio.CancelledError) -> None:
        if self.cancelled is None:
            self.cancelled = exc
        self.cut_children()

    def on_fault(self, exc: BaseException) -> None:
        if self.fault is None:
            self.fault = exc
        self.cut_children()

    # -- scheduling ---------------------------------------------------------------------

    def classify(self, line: _Line) -> bool:
        call = line.action.tool_call
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

    def admit(self) -> None:
        lines = self.lines
        while self.cursor < len(lines) and not self.stopping():
            line = lines[self.cursor]
            if line.rejection is not None:
                self.cursor += 1
                continue
            if self.barrier is not None and self.barrier.phase not in (_SETTLED, _SKIPPED):
                return
            if self.journal is not None and any(x.phase == _STARTING for x in lines):
                return  # one journal call at a time, and entries in model order (B3, B17)
            if line.safe is None:
                line.safe = self.classify(line)
            if line.safe and self.active >= self.owner.max_concurrency:
                return
            if not line.safe and self.active > 0:
                return
            line.phase = _STARTING
            self.active += 1
            line.task = self.group.create_task(self.run_call(line))
            self.cursor += 1
            if not line.safe:
                self.barrier = line

    async def run_call(self, line: _Line) -> None:
        line.began = True
        try:
            if self.stopping():
                line.phase = _SKIPPED  # the batch stopped before this child's first step
                return
            if self.journal is not None:
                try:
                    await self.journal.started(line.index, line.action)
                except BaseException as exc:
                    if not (line.cancel_sent and isinstance(exc, asyncio.CancelledError)):
                        self.on_fault(exc)
                    line.phase = _SKIPPED
                    return
                if self.stopping():
                    line.phase = _SKIPPED  # stopped while started() was awaited (B17)
                    return
            line.phase = _RUNNING
            self.changed.set()  # the driver may admit the next call once this one is entered
            try:
                outcome = await self.owner.single.execute(line.action)
            except asyncio.CancelledError as exc:
                if line.cancel_sent:
                    line.outcome = _synthetic(ActionStatus.ENV_ERROR, CUT_OFF)
                else:
                    self.raised_by_handler(line, exc)
            except Exception as exc:  # E9's TypeError (B16)
                self.on_fault(exc)
            except BaseException as exc:  # B15: re-raised by the driver
                self.raised_by_handler(line, exc)
            else:
                line.outcome = outcome
                if outcome.status is ActionStatus.ENV_ERROR:
                    self.env_stop = True
            line.phase = _SETTLED
        finally:
            self.active -= 1
            self.changed.set()

    def raised_by_handler(self, line: _Line, exc: BaseException) -> None:
        line.raised = exc
        line.outcome = _synthetic(ActionStatus.ENV_ERROR, CUT_OFF)
        self.cut_children()

    # -- outcomes -----------------------------------------------------------------------

    def not_run_text(self) -> str:
        if self.skip_text is None:
            raisers = [line for line in self.lines if line.raised is not None]
            if raisers:
                first = raisers[0]
                self.skip_text = HALTED_BY_RAISE.format(
                    k=first.index, cls=type(first.raised).__name__
                )
            elif self.cancelled is not None:
                self.skip_text = HALTED_BY_CANCEL
            else:
                k = next(
                    line.index
                    for line in self.lines
                    if line.phase == _SETTLED
                    and line.outcome is not None
                    and line.outcome.status is ActionStatus.ENV_ERROR
                )
                self.skip_text = HALTED_BY_ENV.format(k=k)
        return self.skip_text

    def final(self, line: _Line) -> ActionOutcome | None:
        """The call's outcome if it is final now, else None."""
        if line.rejection is not None:
            return line.rejection
        if line.phase == _SETTLED:
            return line.outcome
        if line.phase == _SKIPPED or (line.phase == _WAITING and self.stopping()):
            return _synthetic(ActionStatus.NOT_EXECUTED, self.not_run_text())
        return None

    # -- the driver ---------------------------------------------------------------------

    async def through(self, awaitable: Awaitable[None]) -> BaseException | None:
        """Await a journal call to its end whatever cancels the driver meanwhile."""
        task = self.group.create_task(_captured(awaitable))
        while not task.done():
            try:
                await asyncio.wait((task,))
            except asyncio.CancelledError as exc:
                self.on_outer_cancel(exc)
        result: BaseException | None = task.result()
        return result

    async def commit_ready(self) -> bool:
        journal = self.journal
        if journal is None or self.fault is not None:
            return False
        if any(line.phase == _STARTING for line in self.lines):
            return False
        wrote = False
        while self.committed < len(self.lines) and self.fault is None:
            outcome = self.final(self.lines[self.committed])
            if outcome is None:
                break
            error = await self.through(journal.committed(self.committed, outcome))
            if error is not None:
                self.on_fault(error)
                break
            self.committed += 1
            wrote = True
        return wrote

    def finished(self) -> bool:
        if self.active:
            return False
        if self.fault is not None:
            return True
        if self.cursor < len(self.lines) and not self.stopping():
            return False
        return self.journal is None or self.committed == len(self.lines)

    async def drive(self) -> None:
        while True:
            self.changed.clear()
            self.admit()
            if await self.commit_ready():
                continue
            if self.finished():
                return
            try:
                await self.changed.wait()
            except asyncio.CancelledError as exc:
                self.on_outer_cancel(exc)

    async def run(self) -> tuple[ActionOutcome, ...]:
        try:
            async with _new_group() as group:
                self.group = group
                await self.drive()
        except asyncio.CancelledError as exc:  # cancelled while the group waited for its last child
            if self.cancelled is None:
                self.cancelled = exc
        if self.fault is not None:
            raise self.fault
        for line in self.lines:
            if line.raised is not None:
                raise line.raised
        outcomes = []
        for line in self.lines:
            outcome = self.final(line)
            assert outcome is not None
            outcomes.append(outcome)
        if self.cancelled is not None:
            raise self.cancelled
        return tuple(outcomes)


class TaskGroupLedgerExecutor:
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
        return await _Run(self, batch, journal).run()


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> TaskGroupLedgerExecutor:
    """The factory `polyloop-conformance certify` calls."""
    return TaskGroupLedgerExecutor(registry, max_concurrency)
