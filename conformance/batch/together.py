"""B18's driver: several batches at once on one executor, then the same batches one by one.

The calls of batch ``b`` are numbered from its base (the sizes of the batches before it), so
every gate and trace entry belongs to one call of one batch. After every step of its own, each
batch's entered calls are recorded; run alone, a batch must show the same at the same own step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.batch.drive import Run, Schedule, make_executor, result_of, start_batch
from conformance.batch.harness import Call, Harness, Journal

__all__ = ["Side", "Together", "drive_together"]


@dataclass(frozen=True)
class Together:
    """Batches run concurrently on one executor, and the order their gates open in."""

    batches: tuple[tuple[Call, ...], ...]
    cap: int = 2
    journal: bool = False
    order: tuple[tuple[int, int], ...] = ()
    """``(batch, call)`` per step."""

    def bases(self) -> list[int]:
        bases, total = [], 0
        for batch in self.batches:
            bases.append(total)
            total += len(batch)
        return bases

    def describe(self) -> str:
        batches = "; ".join(
            f"batch {b}: [" + ", ".join(f"{i}: {c.text()}" for i, c in enumerate(calls)) + "]"
            for b, calls in enumerate(self.batches)
        )
        order = " ".join(f"{b}.{i}" for b, i in self.order) or "(none)"
        journal = "a journal per batch" if self.journal else "no journal"
        return f"max_concurrency {self.cap}; {journal}; release order {order}; {batches}"


@dataclass(kw_only=True)
class Side:
    """One batch's view: entered calls after each of its own steps, and what it gave."""

    steps: list[frozenset[int]]
    outcomes: Any
    run: Run
    entered: frozenset[int] = frozenset()
    """The calls entered by the time the batch ended."""


def _entered(harness: Harness, base: int, size: int) -> frozenset[int]:
    return frozenset(
        ident for event, ident in harness.trace if event == "enter" and base <= ident < base + size
    )


def _answer(task: asyncio.Future[Any]) -> Any:
    if not task.done():
        return "did not finish"
    value, error = result_of(task)
    return value if error is None else f"raised {type(error).__name__}: {error}"


async def drive_together(
    factory: Callable[..., Any], case: Together, touch: Callable[[], None], deadline: float
) -> tuple[list[Side], list[Side]]:
    bases = case.bases()
    sizes = [len(b) for b in case.batches]
    total = sum(sizes)
    # Together.
    harness = Harness()
    executor = make_executor(factory, harness.registry, case.cap)
    tasks = [
        start_batch(
            executor,
            Schedule(calls=calls).actions(base),
            Journal(harness, base=base) if case.journal else None,
            harness,
        )
        for calls, base in zip(case.batches, bases, strict=True)
    ]
    steps: list[list[frozenset[int]]] = [[] for _ in case.batches]
    try:
        await harness.settle()
        for b in range(len(case.batches)):
            steps[b].append(_entered(harness, bases[b], sizes[b]))
        for b, position in case.order:
            touch()
            harness.open(bases[b] + position)
            await harness.settle()
            steps[b].append(_entered(harness, bases[b], sizes[b]))
        harness.open_all(total)
        await harness.settle()
        if harness.foreign and not all(task.done() for task in tasks):
            await asyncio.wait(tasks, timeout=deadline)  # threads finish in their own time
    finally:
        harness.open_all(total)
    together = [
        Side(
            steps=steps[b],
            outcomes=_answer(tasks[b]),
            run=_as_run(harness),
            entered=_entered(harness, bases[b], sizes[b]),
        )
        for b in range(len(tasks))
    ]
    # One after the other, on one executor.
    alone_harness = Harness()
    executor = make_executor(factory, alone_harness.registry, case.cap)
    alone: list[Side] = []
    try:
        for b, (calls, base) in enumerate(zip(case.batches, bases, strict=True)):
            touch()
            task = start_batch(
                executor,
                Schedule(calls=calls).actions(base),
                Journal(alone_harness, base=base) if case.journal else None,
                alone_harness,
            )
            await alone_harness.settle()
            own = [_entered(alone_harness, base, sizes[b])]
            for other, position in case.order:
                if other != b:
                    continue
                alone_harness.open(base + position)
                await alone_harness.settle()
                own.append(_entered(alone_harness, base, sizes[b]))
            alone_harness.open(*range(base, base + sizes[b]))
            await alone_harness.settle()
            if alone_harness.foreign and not task.done():
                await asyncio.wait({task}, timeout=deadline)
            alone.append(
                Side(
                    steps=own,
                    outcomes=_answer(task),
                    run=_as_run(alone_harness),
                    entered=_entered(alone_harness, base, sizes[b]),
                )
            )
    finally:
        alone_harness.open_all(total)
    return together, alone


def _as_run(harness: Harness) -> Run:
    run = Run(schedule=Schedule(calls=()), trace=harness.trace, snapshots=[], oracle=[])
    run.foreign = harness.foreign
    return run
