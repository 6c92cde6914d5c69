"""The one deadline runner: runs a target's code on an event loop the kit does not live on.

Both halves put every call into the target (an executor's ``execute``, a tool's handler)
through a `DeadlineRunner`. The runner in use, `LoopThread`, keeps an event loop on a daemon
thread and waits for each job with a wall-clock limit, so a call that never returns (even one
that blocks the loop with ``time.sleep`` or swallows cancellation) is reported, not waited for,
and a ``KeyboardInterrupt``/``SystemExit`` raised inside the target escapes only that loop.

The interface is deliberately small (`run` a job under a limit, `close`), so that a runner that
executes the target in a child process watched by the parent can replace `LoopThread` without
touching the checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from conformance._core.outcome import TargetError
from conformance._core.text import describe_exception

__all__ = ["DeadlineRunner", "Job", "LoopThread", "Make", "judged_job"]

Make = Callable[[Callable[[], None]], Awaitable[Any]]
"""A job: ``make(touch)`` returns the coroutine to run; it calls ``touch()`` whenever it makes
progress (starts a step), which restarts the clock of `DeadlineRunner.run`'s `step_limit`."""


@dataclass(kw_only=True, eq=False)
class Job:
    """One job and what became of it."""

    make: Make
    isolate: bool
    done: threading.Event = field(default_factory=threading.Event)
    touched: float = field(default_factory=time.monotonic)
    """When the job last made progress; a job that stops making progress for longer than its
    step limit is stuck."""
    value: Any = None
    """What the job's coroutine returned."""
    raised: BaseException | None = None
    """What the job's coroutine raised (any BaseException: the job's own outcome)."""
    escaped: BaseException | None = None
    """What escaped the event loop itself (KeyboardInterrupt/SystemExit raised in some task)."""


class DeadlineRunner(Protocol):
    """Runs jobs where the target cannot take the kit down, each under a time limit."""

    def run(self, make: Make, step_limit: float, *, isolate: bool = True) -> Job | None:
        """Run ``make(touch)``; the finished job, or None when it went `step_limit` seconds
        without calling ``touch()`` (it blocks its loop, or ignores cancellation). `isolate`:
        cancel whatever tasks the job left behind before the next job runs."""

    def close(self) -> None:
        """Release the runner's thread (or process); it may not be used afterwards."""


async def _guarded(job: Job) -> None:
    def touch() -> None:
        job.touched = time.monotonic()

    try:
        job.value = await job.make(touch)
    except BaseException as exc:  # the job's own outcome, whatever it is
        job.raised = exc


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(asyncio.wait(tasks, timeout=1.0))


def _close(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(BaseException):
        _cancel_leftovers(loop)
        loop.run_until_complete(loop.shutdown_asyncgens())
    with contextlib.suppress(BaseException):
        loop.close()


class LoopThread:
    """A `DeadlineRunner`: an event loop on a daemon thread that runs one job at a time.

    When a job overruns its limit the thread is abandoned (it may be blocked for good) and a
    fresh one serves the next job."""

    def __init__(self, name: str = "polyloop-conformance-loop") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Job | None] | None = None
        self._thread: threading.Thread | None = None
        self._abandoned: list[threading.Thread] = []
        """Threads left behind by stuck jobs; each already holds its stop sentinel, so it ends
        as soon as its job does, and `close` waits a bounded time for them."""
        self.replaced = 0
        """How many times a stuck job made the runner move to a fresh thread and event loop."""

    def _start(self) -> queue.SimpleQueue[Job | None]:
        jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        thread = threading.Thread(target=self._serve, args=(jobs,), daemon=True, name=self._name)
        thread.start()
        self._jobs, self._thread = jobs, thread
        return jobs

    @staticmethod
    def _new_loop() -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        # Errors in tasks a target left behind are not the user's business here: each check
        # reports what matters for its clause.
        loop.set_exception_handler(lambda _loop, _context: None)
        return loop

    @classmethod
    def _serve(cls, jobs: queue.SimpleQueue[Job | None]) -> None:
        loop = cls._new_loop()
        try:
            while (job := jobs.get()) is not None:
                try:
                    loop.run_until_complete(_guarded(job))
                except BaseException as exc:
                    # KeyboardInterrupt/SystemExit raised inside some task leave the loop
                    # itself; that loop's state is unknown, so it is replaced.
                    job.escaped = exc
                    _close(loop)
                    loop = cls._new_loop()
                else:
                    if job.isolate:
                        _cancel_leftovers(loop)
                job.done.set()
        finally:
            _close(loop)

    def run(self, make: Make, step_limit: float, *, isolate: bool = True) -> Job | None:
        jobs = self._jobs if self._jobs is not None else self._start()
        job = Job(make=make, isolate=isolate)
        jobs.put(job)
        while not job.done.wait(0.05):
            if time.monotonic() - job.touched > step_limit:
                self._abandon()
                return None
        return job

    def _abandon(self) -> None:
        """Leave the stuck thread behind, telling it to stop once its job ever returns (without
        the sentinel it would wait for jobs forever: one leaked thread per stuck job)."""
        if self._jobs is not None and self._thread is not None:
            self._jobs.put(None)
            self._abandoned.append(self._thread)
        self._jobs = self._thread = None
        self.replaced += 1

    def close(self, wait: float = 2.0) -> None:
        """Stop the thread, and wait up to `wait` seconds in all for the abandoned ones (a job
        blocked for good in C code cannot be ended from inside the process: that is what the
        command line's child process is for)."""
        if self._jobs is not None and self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout=wait)
        until = time.monotonic() + wait
        for thread in self._abandoned:
            thread.join(timeout=max(0.0, until - time.monotonic()))
        self._abandoned = [thread for thread in self._abandoned if thread.is_alive()]
        self._jobs = self._thread = None


def judged_job(
    finished: Job | None,
    stuck: Exception,
    set_up: type[BaseException],
    inconclusive: tuple[type[BaseException], Callable[[str], Exception]] | None = None,
) -> Job:
    """A check's finished job, or the exception that ends its clause: `stuck` when the target
    never gave its event loop back; `TargetError` when something escaped the loop, the factory
    failed (`set_up`) or the target raised a BaseException that is not an Exception; the
    `inconclusive` pair's exception (the check's own) for its first type; any other Exception
    the job raised is the kit's own defect and surfaces as it is."""
    if finished is None:
        raise stuck
    if finished.escaped is not None:
        raise TargetError(
            f"the executor let {describe_exception(finished.escaped)} escape its event loop"
        )
    error = finished.raised
    if isinstance(error, set_up):
        raise TargetError(str(error)) from error
    if inconclusive is not None and isinstance(error, inconclusive[0]):
        raise inconclusive[1](str(error)) from error
    if error is not None:
        if not isinstance(error, Exception):
            raise TargetError(f"the target raised {describe_exception(error)}") from error
        raise error
    return finished
