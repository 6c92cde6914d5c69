"""A correct batch executor, written from contract section 10, with one method per decision.

Every broken batch executor in ``batch.py`` subclasses :class:`ZooBatch` and overrides one
hook, so the planted bug is the only difference from an implementation that certifies. It
runs each call through ``RegistryExecutor.execute`` (so each outcome is execute's, B4) inside a
task of its own that first awaits ``journal.started`` (B17), and keeps order, the cap, the
exclusivity rule and the four stops in one loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolRegistry,
    ToolValidationError,
)

__all__ = ["INTERRUPTED", "NOT_RUN_CANCELLED", "ZooBatch", "not_run", "synthetic"]

INTERRUPTED = "interrupted while running; its effects are unknown"
NOT_RUN_CANCELLED = "not run: the batch was cancelled"


def synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def not_run(text: str) -> ActionOutcome:
    return synthetic(ActionStatus.NOT_EXECUTED, text)


class _Raised:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_NOT_ENTERED = object()


class ZooBatch:
    """A plain, correct `BatchExecutor` (B1-B18); subclasses plant one bug each."""

    VIOLATES: tuple[str, ...] = ()
    KNOWN_MISS: str | None = None
    REPORT: str | None = None
    """The user bug report (batch-dispatch.md section 4) a realistic entry is modelled on."""
    BATCH: Any = None  # set below: the per-batch state class (a subclass may replace it)

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        self.registry = registry
        self.cap = max_concurrency
        self.inner = RegistryExecutor(registry)

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names()), "max_concurrency": str(self.cap)}

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        actions = list(actions)
        if not actions:
            return ()
        return await self.BATCH(self, actions, journal).run()

    # -- hooks -------------------------------------------------------------------------------

    def rejected(self, action: Action) -> bool:
        call = action.tool_call
        if call is None or self.registry.spec_for(call.name) is None:
            return True
        try:
            self.registry.validate(call)
        except ToolValidationError:
            return True
        return False

    def classify(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        safe = spec.concurrency_safe
        if isinstance(safe, bool):
            return safe
        try:
            return safe(call.arguments) is True
        except Exception:
            return False

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        """Whether the next call may start now (B6, B7)."""
        if exclusive_running or running >= self.cap:
            return False
        return safe or running == 0

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        return await self.inner.execute(action)

    def not_run_text(self, stop: str, first: int, name: str) -> str:
        if stop == "raised":
            return f"not run: call {first} raised {name}"
        if stop == "cancel":
            return NOT_RUN_CANCELLED
        return f"not run: call {first} reported an environment error"

    def on_env_error(self, batch: _Batch) -> None:
        """B13: stop entering; running calls finish."""

    def on_failure(self, batch: _Batch, index: int) -> None:
        """B12: an ordinary failure (an E4 outcome) changes nothing else."""

    def interrupted(self, index: int) -> ActionOutcome:
        return synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)


class _Batch:
    def __init__(self, owner: ZooBatch, actions: list[Action], journal: Any) -> None:
        self.owner = owner
        self.actions = actions
        self.journal = journal
        self.count = len(actions)
        self.outcomes: list[ActionOutcome | None] = [None] * self.count
        self.rejected = [owner.rejected(a) for a in actions]
        self.safe: dict[int, bool] = {}
        self.next = 0
        self.committed = 0
        self.running: dict[asyncio.Task[object], int] = {}
        self.exclusive: int | None = None
        self.pending_start = False
        self.entered: set[int] = set()
        self.sent: set[asyncio.Task[object]] = set()
        self.stop: str | None = None
        self.raised: dict[int, BaseException] = {}
        self.fault: BaseException | None = None
        self.wake = asyncio.Event()

    async def run(self) -> tuple[ActionOutcome, ...]:
        for index, action in enumerate(self.actions):
            if self.rejected[index]:
                self.outcomes[index] = await self.owner.inner.execute(action)
        try:
            while True:
                if self.stop is None:
                    self.fill()
                if self.fault is None:
                    await self.commit_ready()
                if self.fault is not None:
                    break
                if self.done():
                    break
                await self.wait()
        except BaseException as error:  # a journal fault while committing
            if self.fault is None:
                self.fault = error
        if self.fault is not None:
            await self.drain()
            raise self.fault
        self.resolve_rest()
        await self.commit_ready()
        if self.raised:
            raise self.raised[min(self.raised)]
        if self.stop == "cancel":
            raise asyncio.CancelledError()
        return tuple(o for o in self.outcomes if o is not None)

    def done(self) -> bool:
        """Nothing runs, and nothing more will be entered."""
        return not self.running and (self.next >= self.count or self.stop is not None)

    def fill(self) -> None:
        while self.next < self.count and not self.pending_start:
            index = self.next
            if self.rejected[index]:
                self.next += 1
                continue
            if index not in self.safe:
                self.safe[index] = self.owner.classify(self.actions[index])
            safe = self.safe[index]
            if not self.owner.room(len(self.running), safe, self.exclusive is not None):
                return
            self.next += 1
            task = asyncio.ensure_future(self.body(index))
            self.running[task] = index
            task.add_done_callback(self.settled)
            if not safe:
                self.exclusive = index
            if self.journal is not None:
                self.pending_start = True

    async def body(self, index: int) -> object:
        action = self.actions[index]
        if self.journal is not None:
            try:
                await self.journal.started(index, action)
            except asyncio.CancelledError:
                self.pending_start = False
                return _NOT_ENTERED
            except BaseException as error:
                self.pending_start = False
                self.set_fault(error)
                return _NOT_ENTERED
            self.pending_start = False
            self.wake.set()
            if not await self.after_started():
                return _NOT_ENTERED
            if self.stop is not None or self.fault is not None:
                return _NOT_ENTERED
        self.entered.add(index)
        try:
            return await self.owner.run_call(index, action)
        except BaseException as error:
            return _Raised(error)

    async def after_started(self) -> bool:
        """Between a call's `started` and its entry; False: the call is not entered. Correct
        code does nothing here (B17); a broken entry overrides it."""
        return True

    def settled(self, task: asyncio.Task[object]) -> None:
        index = self.running.pop(task)
        if self.exclusive == index:
            self.exclusive = None
        if task.cancelled():
            result: object = (
                _NOT_ENTERED if index not in self.entered else _Raised(asyncio.CancelledError())
            )
        else:
            result = task.result()
        self.record(index, result, task in self.sent)
        self.wake.set()

    def record(self, index: int, result: object, sent: bool) -> None:
        if isinstance(result, ActionOutcome):
            self.outcomes[index] = result
            if result.status is ActionStatus.ENV_ERROR and self.stop is None:
                self.stop = "env"
                self.owner.on_env_error(self)
            elif result.status is ActionStatus.EXECUTED and result.observation.startswith(
                "ValueError"
            ):
                self.owner.on_failure(self, index)
        elif isinstance(result, _Raised):
            error = result.error
            if isinstance(error, Exception):
                self.set_fault(error)  # E9's TypeError: no outcome is invented (B16)
            elif isinstance(error, asyncio.CancelledError) and sent:
                self.outcomes[index] = self.owner.interrupted(index)
            else:
                self.outcomes[index] = self.owner.interrupted(index)
                self.raised[index] = error
                if self.stop in (None, "env"):
                    self.stop = "raised"
                self.cancel_running()

    def set_fault(self, error: BaseException) -> None:
        if self.fault is None:
            self.fault = error
        self.cancel_running()

    def cancel_running(self) -> None:
        for task in self.running:
            if task not in self.sent:
                self.sent.add(task)
                task.cancel()

    async def wait(self) -> None:
        if self.wake.is_set():
            self.wake.clear()
            return
        try:
            await self.wake.wait()
        except asyncio.CancelledError:
            self.cancelled_while_waiting()
        self.wake.clear()

    def cancelled_while_waiting(self) -> None:
        """B14: the batch was cancelled from outside; cancel the running handlers."""
        if self.stop in (None, "env"):
            self.stop = "cancel"
        self.cancel_running()

    async def drain(self) -> None:
        self.cancel_running()
        while self.running:
            await self.wait()

    async def commit_ready(self) -> None:
        while (
            self.committed < self.count
            and self.outcomes[self.committed] is not None
            and not self.pending_start
        ):
            index = self.committed
            outcome = self.outcomes[index]
            if self.journal is not None:
                task = asyncio.ensure_future(self.journal.committed(index, outcome))
                while not task.done():
                    try:
                        await asyncio.wait({task})
                    except asyncio.CancelledError:
                        if self.stop in (None, "env"):
                            self.stop = "cancel"
                        self.cancel_running()
                task.result()
            self.committed = index + 1

    def resolve_rest(self) -> None:
        if all(o is not None for o in self.outcomes):
            return
        stop = self.stop or "env"
        if self.raised:
            first = min(self.raised)
            name = type(self.raised[first]).__name__
        else:
            first = next(
                (
                    i
                    for i, o in enumerate(self.outcomes)
                    if o is not None and o.status is ActionStatus.ENV_ERROR
                ),
                0,
            )
            name = ""
        text = self.owner.not_run_text(stop, first, name)
        for index in range(self.count):
            if self.outcomes[index] is None:
                self.outcomes[index] = not_run(text)


ZooBatch.BATCH = _Batch
