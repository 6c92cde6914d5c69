"""Unusual but correct batch executors: the kit must certify every one of them.

They stress the kit's tolerance, not its vigilance: a semaphore for the cap, a journal that
is slow to write, handlers offloaded to threads (each on an event loop of its own), and
polyloop's own scheduler behind a wrapper. The anyio task group executor is one of the
independently written ones (``tests/specificity/correct_batch/anyio_group.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import Action, ActionOutcome, RegistryBatchExecutor, ToolRegistry
from zoo.batch_base import ZooBatch, _Batch

__all__ = ["UNUSUAL_BATCH"]


class _Semaphored(_Batch):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.slots = asyncio.Semaphore(self.owner.cap)

    def fill(self) -> None:
        # The semaphore is the cap: a call starts only when a slot is free right now.
        while self.next < self.count and not self.pending_start:
            index = self.next
            if self.rejected[index]:
                self.next += 1
                continue
            if index not in self.safe:
                self.safe[index] = self.owner.classify(self.actions[index])
            safe = self.safe[index]
            if self.exclusive is not None or (not safe and self.running) or self.slots.locked():
                return
            self.slots._value -= 1  # acquire without awaiting: the slot is free
            self.next += 1
            task = asyncio.ensure_future(self.body(index))
            self.running[task] = index
            task.add_done_callback(self.settled)
            if not safe:
                self.exclusive = index
            if self.journal is not None:
                self.pending_start = True

    def settled(self, task: asyncio.Task[object]) -> None:
        self.slots.release()
        super().settled(task)


class SemaphorePool(ZooBatch):
    """Counts slots with an asyncio.Semaphore instead of the number of running tasks."""

    BATCH = _Semaphored


class _SlowJournal:
    """Wraps the caller's journal: each record takes a few loop turns, as a durable write
    would, before and after it is handed on."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal

    async def started(self, index: int, action: Action) -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        await self.journal.started(index, action)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        await self.journal.committed(index, outcome)
        await asyncio.sleep(0)


class SlowJournal(ZooBatch):
    """Writes every journal record through a slow layer (loop turns before and after)."""

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        return await super().execute_batch(
            actions, None if journal is None else _SlowJournal(journal)
        )


class _Polls(_Batch):
    async def wait(self) -> None:
        # Busy polling: the loop never goes quiet while a handler waits at its gate.
        while not self.wake.is_set():
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                self.cancelled_while_waiting()
                break
        self.wake.clear()


class BusyPolls(ZooBatch):
    """Waits for its running calls by polling (``await asyncio.sleep(0)`` in a loop) instead of
    awaiting an event: correct, and never quiet while a handler waits, so the kit cannot judge a
    schedule mid-way (inconclusive), and must not call it hung."""

    BATCH = _Polls


class ThreadOffloading(ZooBatch):
    """Runs each call's ``execute`` on a thread of its own, on an event loop of its own; a
    cancellation is forwarded to that loop and the thread awaited."""

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        box: dict[str, Any] = {}
        ready = threading.Event()

        def finish() -> None:
            if not done.done():
                done.set_result(None)

        def worker() -> None:
            own = asyncio.new_event_loop()

            async def main() -> ActionOutcome:
                box["task"] = asyncio.current_task()
                box["loop"] = own
                ready.set()
                return await self.inner.execute(action)

            try:
                box["result"] = own.run_until_complete(main())
            except BaseException as error:
                box["error"] = error
            finally:
                ready.set()
                own.close()
                loop.call_soon_threadsafe(finish)

        threading.Thread(target=worker, daemon=True).start()
        cancelled = False
        while not done.done():
            try:
                await asyncio.shield(done)
            except asyncio.CancelledError:
                cancelled = True
                ready.wait()  # set as soon as the thread has its loop: a moment
                own, task = box.get("loop"), box.get("task")
                if own is not None and task is not None and not done.done():
                    with contextlib.suppress(RuntimeError):  # its loop closed: the call ended
                        own.call_soon_threadsafe(task.cancel)
        if "error" in box:
            raise box["error"]
        if cancelled and "result" not in box:
            raise asyncio.CancelledError()
        result: ActionOutcome = box["result"]
        return result


def _route() -> None:
    """A router's bookkeeping on a worker thread (LangGraph runs a graph's routing function,
    e.g. ``create_react_agent``'s ``should_continue``, in the loop's default executor)."""
    time.sleep(0.002)


class RoutesOnWorkerThreads(ZooBatch):
    """After each call's handler returns, runs its routing step in the event loop's default
    executor (``run_in_executor(None, ...)``) before the outcome is committed: the pool's
    threads outlive the example, idle, and are busy again in the next one."""

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        outcome = await self.inner.execute(action)
        await asyncio.get_running_loop().run_in_executor(None, _route)
        return outcome


class WrapsRegistryBatchExecutor:
    """Delegates to polyloop's own RegistryBatchExecutor, adding nothing but a repr."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        self.inner = RegistryBatchExecutor(registry, max_concurrency=max_concurrency)

    def parameters(self) -> Mapping[str, str]:
        return self.inner.parameters()

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        return await self.inner.execute_batch(actions, journal)


UNUSUAL_BATCH: tuple[type, ...] = (
    ZooBatch,
    SemaphorePool,
    SlowJournal,
    ThreadOffloading,
    BusyPolls,
    RoutesOnWorkerThreads,
    WrapsRegistryBatchExecutor,
)
