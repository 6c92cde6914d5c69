"""One policy clause's Hypothesis run: traps first, then generated examples, shrunk on failure.

Each example is one job on the kit's deadline runner: an executor that blocks its loop is
reported (an error for the clause), one that never becomes quiet makes the example
inconclusive (the clause is then ``skipped`` with the reason, never ``fail``). The last failing
example Hypothesis records is the minimal one; the same ``--seed`` replays it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis
import hypothesis.errors

from conformance._core import hypo
from conformance._core.capture import OutputCapture
from conformance._core.deadline import DeadlineRunner, judged_job
from conformance._core.limits import GRACE
from conformance._core.outcome import ClauseOutcome, TargetError
from conformance._core.report import Counterexample
from conformance._core.search import (
    case_counterexample,
    errored,
    failed,
    no_counterexample,
    run_search,
)
from conformance.policy.checks_decide import Case
from conformance.policy.harness import SCHEMA, FactoryFailed, Unsettled
from conformance.policy.judge import Kit, PolicyViolation
from conformance.policy.properties import PolicyProperty

__all__ = ["PolicyTrial", "Stuck", "search_policy_clause"]

EXAMPLES_FACTOR = 2
"""A P clause runs this many times the profile's count: an example costs milliseconds."""


class Stuck(Exception):
    """An example's job never gave its event loop back within the deadline."""


class PolicyTrial:
    """A policy factory under test, and the runner its examples run on."""

    def __init__(
        self,
        factory: Callable[..., Any],
        *,
        deadline: float,
        runner: DeadlineRunner,
        batch: Callable[..., Any] | None = None,
    ):
        self.factory = factory
        self.batch = batch
        self.deadline = deadline
        self.runner = runner
        self.output = OutputCapture()

    def check(self, prop: PolicyProperty, case: Any) -> None:
        async def job(touch: Callable[[], None]) -> None:
            await prop.check(Kit(self.factory, touch, self.deadline, self.batch), case)

        with self.output.capturing():
            finished = self.runner.run(job, self.deadline + GRACE)
        stuck = Stuck(
            f"the executor did not give its event loop back within {self.deadline:g}s "
            "(it blocks the loop, or never ends once every listener has ended)"
        )
        judged_job(finished, stuck, FactoryFailed)


def counterexample_of(case: Any, found: PolicyViolation) -> Counterexample:
    if not isinstance(case, Case):  # a batch (P11)
        calls = [
            {"tool_call": {"name": a.tool_call.name, "arguments": {"id": i}}}
            for i, a in enumerate(case.actions())
            if a.tool_call is not None
        ]
        return case_counterexample(SCHEMA, calls, case, found)
    call = case.stack.action().tool_call
    action: object = (
        {"code": case.stack.action().code}
        if call is None
        else {
            "tool_call": {
                "name": call.name,
                "arguments": case.stack.arguments()
                if case.stack.call != "invalid"
                else {"tags": []},
            }
        }
    )
    return case_counterexample(SCHEMA, action, case, found)


def search_policy_clause(
    prop: PolicyProperty,
    trial: PolicyTrial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
) -> ClauseOutcome:
    """Run one policy clause's property under Hypothesis and say what it concluded."""
    more = hypo.share_of(settings, EXAMPLES_FACTOR)
    state, exc = run_search(
        lambda case: trial.check(prop, case),
        prop.cases(),
        prop.traps,
        more,
        seed,
        f"{prop.clause}:{label}",
        violation=PolicyViolation,
        inconclusive=Unsettled,
        stops=(TargetError, Stuck),
    )
    error = errored(state, exc, (TargetError, Stuck), PolicyViolation)
    if error is not None:
        return error
    if isinstance(exc, (PolicyViolation, hypothesis.errors.Flaky)):
        assert state.failure is not None
        case, found = state.failure
        assert isinstance(found, PolicyViolation)
        note = ""
        if isinstance(exc, hypothesis.errors.Flaky):
            note = " (flaky: replaying this example did not fail the same way)"
        return failed(state.examples, found.message + note, counterexample_of(case, found))
    return no_counterexample(state.examples, exc, state.inconclusive)
