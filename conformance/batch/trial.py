"""Runs schedules on the kit's deadline runner, so a batch executor cannot take the kit down.

Each schedule is one job on the runner's event loop thread: an executor that blocks that loop
or never gives it back is reported (an error for the clause), not waited for; a factory that
raises is a `TargetError`; an executor that never becomes quiet makes the example inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance._core.capture import OutputCapture
from conformance._core.deadline import DeadlineRunner
from conformance._core.limits import GRACE
from conformance._core.text import describe_exception
from conformance._runner import TargetError
from conformance.batch.drive import FactoryFailed, Run, Schedule, drive
from conformance.batch.harness import Unsettled
from conformance.batch.judge import Inconclusive
from conformance.batch.together import Side, Together, drive_together

__all__ = ["BatchTrial", "Stuck"]


class Stuck(Exception):
    """A schedule's job never gave its event loop back within the deadline."""


class BatchTrial:
    """A batch executor factory under test, and the runner its schedules run on."""

    def __init__(
        self, factory: Callable[..., Any], *, deadline: float, runner: DeadlineRunner
    ) -> None:
        self.factory = factory
        self.deadline = deadline
        self.runner = runner
        self.output = OutputCapture()
        self.runs = 0

    def _job(self, make: Callable[[Callable[[], None]], Any], what: str) -> Any:
        box: list[Any] = []

        async def job(touch: Callable[[], None]) -> None:
            box.append(await make(touch))

        self.runs += 1
        with self.output.capturing():
            finished = self.runner.run(job, self.deadline + GRACE, isolate=True)
        if finished is None:
            raise Stuck(
                f"{what} did not give its event loop back within {self.deadline:g}s (it blocks "
                "the loop, or never ends once every handler has ended)"
            )
        if finished.escaped is not None:
            raise TargetError(
                f"the executor let {describe_exception(finished.escaped)} escape its event loop"
            )
        error = finished.raised
        if isinstance(error, FactoryFailed):
            raise TargetError(str(error)) from error
        if isinstance(error, Unsettled):
            raise Inconclusive(str(error)) from error
        if error is not None:
            if not isinstance(error, Exception):
                raise TargetError(f"the target raised {describe_exception(error)}") from error
            raise error  # a defect in the kit itself: let it surface
        return box[0]

    def run(self, schedule: Schedule) -> Run:
        """Play one schedule on a fresh executor."""
        run: Run = self._job(
            lambda touch: drive(self.factory, schedule, touch, self.deadline), "the batch"
        )
        return run

    def run_together(self, case: Together) -> tuple[list[Side], list[Side]]:
        """B18: the batches at once on one executor, then one after the other."""
        sides: tuple[list[Side], list[Side]] = self._job(
            lambda touch: drive_together(self.factory, case, touch), "the concurrent batches"
        )
        return sides
