"""Running one schedule against a batch executor and recording everything it did (`Run`).

A `Schedule` is a batch (its calls), a cap, a journal plan, the order in which the property
opens the handlers' gates and where the batch is cancelled. `drive` builds the kit's registry,
asks the factory for an executor with that cap, starts the batch, and after every step lets the
executor settle and takes a `Snapshot`. At the end every gate opens, so a correct executor
always finishes; what it returned or raised, the journal's records and the trace make the
`Run` that each clause's check judges.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.batch.harness import Call, Harness, Journal, Unsettled
from polyloop import Action, ActionOutcome, RegistryExecutor

__all__ = ["Oracles", "Run", "Schedule", "Snapshot", "drive", "make_executor"]


@dataclass(frozen=True)
class Schedule:
    """One generated batch and the schedule the property plays against it."""

    calls: tuple[Call, ...]
    cap: int = 4
    journal: str = "none"
    """``none`` (no journal), ``fast`` (records at once) or ``slow`` (each ``started`` waits
    for its call's step)."""
    order: tuple[int, ...] = ()
    """The calls whose gates open, one per step (the rest open at the end)."""
    cancel_at: int | None = None
    """Cancel the batch before this step (``len(order)``: after the last one)."""
    cancel_twice: bool = False
    fault: tuple[str, int] | None = None
    """The journal record that raises: ``("started", i)`` or ``("committed", i)``."""
    mutate: bool = False
    """Handlers mutate what they receive, and calls carry nested arguments (B11)."""

    def describe(self) -> str:
        parts = [f"max_concurrency {self.cap}", f"journal {self.journal}"]
        if self.fault is not None:
            parts.append(f"journal raises at {self.fault[0]}({self.fault[1]})")
        parts.append(
            "release order " + (" ".join(str(i) for i in self.order) if self.order else "(none)")
        )
        if self.cancel_at is not None:
            twice = " twice" if self.cancel_twice else ""
            parts.append(f"cancelled{twice} before step {self.cancel_at}")
        if self.mutate:
            parts.append("handlers mutate their arguments")
        calls = ", ".join(f"{i}: {call.text()}" for i, call in enumerate(self.calls))
        return "; ".join(parts) + f"; calls [{calls}]"

    def actions(self, base: int = 0) -> list[Action]:
        return [call.action(base + i, self.mutate) for i, call in enumerate(self.calls)]


@dataclass(frozen=True)
class Snapshot:
    """The state at one settled point."""

    step: int
    position: int
    """Length of the trace when taken."""
    running: frozenset[int]
    entered: frozenset[int]
    records_pending: bool
    done: bool


@dataclass(kw_only=True)
class Run:
    """What one schedule did."""

    schedule: Schedule
    trace: list[tuple[str, int]]
    snapshots: list[Snapshot]
    oracle: list[ActionOutcome | None]
    returned: Any = None
    raised: BaseException | None = None
    hung: bool = False
    leftover: int = 0
    """Tasks other than the kit's that were still alive once the batch had ended."""
    running_at_end: frozenset[int] = frozenset()
    """Handlers still running when the batch ended."""
    commits: list[tuple[int, ActionOutcome]] = field(default_factory=list)
    journal_error: BaseException | None = None
    received: list[tuple[int, Any]] = field(default_factory=list)
    seen: dict[int, Any] = field(default_factory=dict)
    cancels_seen: dict[int, int] = field(default_factory=dict)
    handler_raised: dict[int, BaseException] = field(default_factory=dict)
    foreign: bool = False
    cancelled: bool = False
    broke_off: bool = False
    """The loop never went quiet and the executor never ended once every gate was open: the
    schedule was broken off, so `snapshots` is a prefix of it (and the run is `hung`)."""

    def entered(self) -> set[int]:
        return {ident for event, ident in self.trace if event == "enter"}

    def first(self, kind: str, ident: int | None = None) -> int | None:
        for position, (event, who) in enumerate(self.trace):
            if event == kind and (ident is None or who == ident):
                return position
        return None


class FactoryFailed(Exception):
    """The factory raised, or returned something without ``execute_batch``."""


def make_executor(factory: Callable[..., Any], registry: Any, cap: int) -> Any:
    """``factory(registry, max_concurrency=cap)``, or `FactoryFailed` saying what went wrong."""
    try:
        executor = factory(registry, max_concurrency=cap)
    except Exception as exc:
        raise FactoryFailed(f"the factory raised {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(executor, "execute_batch", None)):
        raise FactoryFailed(
            f"the factory returned {type(executor).__name__}, which has no execute_batch method"
        )
    return executor


async def sequential_oracle(calls: Sequence[Call], mutate: bool = False) -> list[Any]:
    """`execute` one call at a time (polyloop's E table); None where execute itself raises."""
    harness = Harness()
    executor = RegistryExecutor(harness.registry)
    results: list[ActionOutcome | None] = []
    for index, call in enumerate(calls):
        harness.open(index)
        if not call.rejected and call.do in ("nonstr", "base", "cancel_self"):
            results.append(None)
            continue
        results.append(await executor.execute(call.action(index, mutate)))
    return results


def start_batch(
    executor: Any, actions: list[Action], journal: Any, harness: Harness | None
) -> asyncio.Future[Any]:
    """The batch as a task (or a finished future holding what went wrong before there was one)."""
    try:
        awaitable = (
            executor.execute_batch(actions)
            if journal is None
            else executor.execute_batch(actions, journal)
        )
    except BaseException as exc:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_exception(exc)
        return future
    if not inspect.isawaitable(awaitable):
        failed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        failed.set_exception(TypeError("execute_batch() did not return an awaitable"))
        return failed

    async def batch() -> Any:
        try:
            return await awaitable
        finally:
            if harness is not None:
                harness.event("done", -1)  # in the very step the batch ends

    return asyncio.ensure_future(batch())


def result_of(task: asyncio.Future[Any]) -> tuple[Any, BaseException | None]:
    try:
        return task.result(), None
    except BaseException as exc:
        if isinstance(exc, asyncio.CancelledError):
            inner = exc.__context__
            if isinstance(inner, asyncio.CancelledError):  # 3.10 wraps the original
                return None, inner
        return None, exc


Oracles = dict[tuple[tuple[Call, ...], bool], list[Any]]
"""`sequential_oracle`'s answers by batch and ``mutate``: a pure function of them (polyloop's
own executor on the kit's scripted handlers), so a trial computes each one once for all its
clauses."""


async def _oracle(schedule: Schedule, oracles: Oracles | None) -> list[Any]:
    """The sequential oracle's outcomes for `schedule`, from the run's cache when it has them
    (the oracle depends only on the calls and the handlers' mutation)."""
    key = (schedule.calls, schedule.mutate)
    known = oracles.get(key) if oracles is not None else None
    if known is not None:
        return list(known)
    oracle = list(await sequential_oracle(schedule.calls, schedule.mutate))
    if oracles is not None:
        oracles[key] = list(oracle)
    return oracle


async def drive(
    factory: Callable[..., Any],
    schedule: Schedule,
    touch: Callable[[], None],
    deadline: float,
    oracles: Oracles | None = None,
) -> Run:
    """Play `schedule` against a fresh executor from `factory` and record what happened."""
    oracle = await _oracle(schedule, oracles)
    harness = Harness(mutate=schedule.mutate)
    executor = make_executor(factory, harness.registry, schedule.cap)
    journal = (
        None
        if schedule.journal == "none"
        else Journal(harness, slow=schedule.journal == "slow", fault=schedule.fault)
    )
    run = Run(schedule=schedule, trace=harness.trace, snapshots=[], oracle=oracle)
    count = len(schedule.calls)
    task = start_batch(executor, schedule.actions(), journal, harness)
    ours = {asyncio.current_task(), task}
    before = {t for t in asyncio.all_tasks() if t not in ours}

    async def point(step: int) -> None:
        await harness.settle()
        run.snapshots.append(
            Snapshot(
                step=step,
                position=len(harness.trace),
                running=frozenset(harness.running()),
                entered=frozenset(run.entered()),
                records_pending=harness.records_pending(),
                done=task.done(),
            )
        )

    def cancel() -> None:
        run.cancelled = True
        harness.event("cancel", -1)
        task.cancel()

    try:
        unsettled: Unsettled | None = None
        try:
            await _play(schedule, task, harness, touch, point, cancel)
        except Unsettled as error:
            # Busy polling while a handler waits at its gate is correct: open every gate, and
            # a correct executor ends (the example is then inconclusive, never failed).
            unsettled = error
            harness.open_all(count)
            with contextlib.suppress(Unsettled):
                await harness.settle()
        if not task.done() and harness.foreign:
            touch()
            await asyncio.wait({task}, timeout=deadline)  # threads finish in their own time
            if unsettled is None:
                await harness.settle()
        if unsettled is not None:
            if task.done():
                raise unsettled
            run.broke_off = True  # every gate open, and it neither ends nor goes quiet: B1
        if task.done():
            run.running_at_end = frozenset(_running_when_done(harness.trace))
            run.returned, run.raised = result_of(task)
        else:
            run.hung = True
        alive = [t for t in asyncio.all_tasks() if t not in ours and t not in before]
        run.leftover = sum(not t.done() for t in alive)
    finally:
        harness.open_all(count)
        if not task.done():
            task.cancel()
    _collect(run, harness, journal)
    return run


async def _play(
    schedule: Schedule,
    task: asyncio.Future[Any],
    harness: Harness,
    touch: Callable[[], None],
    point: Callable[[int], Awaitable[None]],
    cancel: Callable[[], None],
) -> None:
    """Open the gates in the schedule's order, cancelling where it says, with a settled point
    after each step; then open every gate."""
    await point(0)
    for step, ident in enumerate(schedule.order):
        touch()
        if task.done():
            break
        if step == schedule.cancel_at:
            cancel()
            await point(step)
            if schedule.cancel_twice and not task.done():
                cancel()
                await point(step)
        harness.open(ident)
        await point(step + 1)
    late = schedule.cancel_at is not None and schedule.cancel_at >= len(schedule.order)
    if late and not task.done():
        cancel()
        await point(len(schedule.order))
    touch()
    harness.open_all(len(schedule.calls))
    await point(len(schedule.order) + 1)


def _collect(run: Run, harness: Harness, journal: Journal | None) -> None:
    """Copy what the harness and the journal saw into the run."""
    run.commits = list(journal.commits) if journal is not None else []
    run.journal_error = journal.error if journal is not None else None
    run.received = list(harness.received)
    run.seen = dict(harness.seen)
    run.cancels_seen = dict(harness.cancels_seen)
    run.handler_raised = dict(harness.raised)
    run.foreign = harness.foreign


def _running_when_done(trace: list[tuple[str, int]]) -> set[int]:
    alive: set[int] = set()
    for event, ident in trace:
        if event == "done":
            return alive
        if event == "enter":
            alive.add(ident)
        elif event == "exit":
            alive.discard(ident)
    return alive
