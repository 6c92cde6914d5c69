"""Runs schedules on the kit's deadline runner, so a batch executor cannot take the kit down.

Each schedule is one job on the runner's event loop thread: an executor that blocks that loop
or never gives it back is reported (an error for the clause), not waited for; a factory that
raises is a `TargetError`; an executor that never becomes quiet makes the example inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance._core.capture import OutputCapture
from conformance._core.deadline import DeadlineRunner, judged_job
from conformance._core.limits import GRACE
from conformance.batch.blackbox import Plain, Recorder
from conformance.batch.drive import (
    FactoryFailed,
    Oracles,
    Run,
    Schedule,
    drive,
    result_of,
    start_batch,
)
from conformance.batch.harness import Unsettled
from conformance.batch.judge import Inconclusive
from conformance.batch.together import Side, Together, drive_together
from polyloop import Action

__all__ = ["BatchTrial", "Stuck"]


class Stuck(Exception):
    """A schedule's job never gave its event loop back within the deadline."""


class BatchTrial:
    """A batch executor factory under test, and the runner its schedules run on."""

    def __init__(
        self,
        factory: Callable[..., Any] | None,
        *,
        deadline: float,
        runner: DeadlineRunner,
        executor: Any = None,
    ) -> None:
        self.factory: Any = factory
        self.executor = executor
        """The executor itself (black-box): it serves every schedule."""
        self.deadline = deadline
        self.runner = runner
        self.output = OutputCapture()
        self.runs = 0
        self._oracles: Oracles = {}

    def _job(self, make: Callable[[Callable[[], None]], Any], what: str) -> Any:
        box: list[Any] = []

        async def job(touch: Callable[[], None]) -> None:
            box.append(await make(touch))

        self.runs += 1
        with self.output.capturing():
            finished = self.runner.run(job, self.deadline + GRACE, isolate=self.executor is None)
        stuck = Stuck(
            f"{what} did not give its event loop back within {self.deadline:g}s (it blocks "
            "the loop, or never ends once every handler has ended)"
        )
        judged_job(finished, stuck, FactoryFailed, (Unsettled, Inconclusive))
        return box[0]

    def run(self, schedule: Schedule) -> Run:
        """Play one schedule on a fresh executor."""
        run: Run = self._job(
            lambda touch: drive(self.factory, schedule, touch, self.deadline, self._oracles),
            "the batch",
        )
        return run

    def run_together(self, case: Together) -> tuple[list[Side], list[Side]]:
        """B18: the batches at once on one executor, then one after the other."""
        sides: tuple[list[Side], list[Side]] = self._job(
            lambda touch: drive_together(self.factory, case, touch, self.deadline),
            "the concurrent batches",
        )
        return sides

    def run_plain(self, actions: list[Action], journal: bool) -> Plain:
        """Black-box: send `actions` as one batch to the executor, with a recording journal."""

        async def make(touch: Callable[[], None]) -> Plain:
            import asyncio

            recorder = Recorder() if journal else None
            task = start_batch(self.executor, actions, recorder, None)
            done, _ = await asyncio.wait({task}, timeout=self.deadline)
            if not done:
                task.cancel()
                raise Stuck(f"execute_batch did not finish within {self.deadline:g}s")
            returned, raised = result_of(task)
            return Plain(
                returned=returned,
                raised=raised,
                commits=list(recorder.commits) if recorder else [],
                started=list(recorder.starts) if recorder else [],
            )

        plain: Plain = self._job(make, "the batch")
        return plain
