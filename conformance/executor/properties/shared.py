"""Pieces the checks of several clauses share: running a one-step scenario, and the shapes of a
violation."""

from __future__ import annotations

from dataclasses import replace

from conformance.executor.oracle import (
    Expectation,
    Expected,
    Observed,
    expect,
    mismatch,
)
from conformance.executor.properties.scenarios import Scenario, Violation
from conformance.executor.runner import Step, Trial
from polyloop import ActionOutcome, ActionStatus

# ---------------------------------------------------------------------------------------------
# Shared pieces of the checks


def single_step(trial: Trial, scenario: Scenario) -> tuple[Step, Expectation, Observed]:
    """Run the scenario's steps on one executor and judge the last (the only one, or the one
    a primed scenario leads up to: `scenarios.single`)."""
    step = scenario.steps[-1]
    observed = trial.run(scenario.tools, scenario.steps)[-1]
    expectation = expect(scenario.schemas, step.action, step.behaviour, white_box=trial.white_box)
    stop_if_hung(observed, expectation, len(scenario.steps) - 1)
    return step, expectation, observed


def stop_if_hung(observed: Observed, expectation: Expectation, index: int = 0) -> None:
    if observed.timed_out is not None:
        raise Violation(
            f"execute did not finish within the {observed.timed_out:g}s deadline",
            step=index,
            expected=expectation.describe(),
            actual=observed.describe(),
            stop=True,
        )


def reached_handler(observed: Observed) -> bool:
    """Whether the call reached its handler (white-box only)."""
    return bool(observed.calls)


def rejected_instead(trial: Trial, observed: Observed) -> bool:
    """A valid call was rejected and never reached its handler: that is V1's failure, and
    leaves nothing for the dispatch clauses to judge. (Raising, or an outcome that is not a
    rejection, without running the handler still fails them: the outcome is not the
    handler's.)"""
    return trial.white_box and not observed.calls and rejected_outcome(observed)


def not_reached(trial: Trial, observed: Observed) -> bool:
    """White-box: the handler never ran, so a clause about what happens *after* it ran (E3–E6,
    E9, E10, E12) has nothing to judge; V1 (never reached its handler) and E8 (ran 0x) report
    it. One cause, one clause: this keeps E5 from saying "the handler returned a str" about a
    handler that was never called."""
    if trial.white_box and not observed.calls:
        return True
    trial.judged += 1
    return False


def nothing_judged(trial: Trial) -> str | None:
    """After a white-box run in which no handler ever ran: why the pass proves nothing."""
    if not trial.white_box or trial.judged:
        return None
    return (
        "no call reached its handler, so what the executor makes of a handler's result could "
        "not be observed (V1 and E8 report the calls that never reached it)"
    )


def nothing_cancelled(trial: Trial) -> str | None:
    """E6 black-box: a pass means something only if some call was caught still running."""
    if trial.white_box or trial.cancellations:
        return None
    return (
        "no call was still running when the kit cancelled it, so cancellation could not be "
        "observed: every call finished within a few event-loop iterations (its handlers never "
        "wait on anything; on Python 3.12+ asyncio.wait_for no longer adds task hops that made "
        "such a call catchable on 3.10/3.11). Certify against handlers that await I/O, or "
        "white-box"
    )


def rejected_outcome(observed: Observed) -> bool:
    return (
        isinstance(observed.outcome, ActionOutcome)
        and observed.outcome.status is ActionStatus.NOT_EXECUTED
    )


def violation(
    message: str, expectation: Expectation | Expected, observed: Observed, index: int = 0
) -> Violation:
    return Violation(
        message, step=index, expected=expectation.describe(), actual=observed.describe()
    )


def require(expected: Expected, observed: Observed, clause_words: str) -> None:
    problem = mismatch(expected, observed)
    if problem is not None:
        raise violation(f"{clause_words}: {problem}", expected, observed)


def handler_outcome(trial: Trial, scenario: Scenario, words: str) -> None:
    """E3/E4/E5/E9: once a valid call reached its handler, the outcome is exactly the one the
    handler's behaviour calls for. (Being rejected instead is V1's concern.)"""
    _, expectation, observed = single_step(trial, scenario)
    if rejected_instead(trial, observed) or not_reached(trial, observed):
        return
    require(replace(expectation.dispatched()[0], handler_calls=None), observed, words)


def handler_exception_escaped(observed: Observed) -> bool:
    """White-box: execute raised the very exception its handler raised."""
    raised = observed.raised
    return raised is not None and any(call.raised is raised for call in observed.calls or ())


def result_of_dispatch(expectation: Expectation, observed: Observed) -> bool:
    """Whether what came back is what a dispatched call gives: an `ActionOutcome`, the
    exception the handler's behaviour calls for, or (white-box) the handler's own exception,
    let through — a dispatch, whose treatment of the exception E3/E4 judge."""
    if isinstance(observed.outcome, ActionOutcome) or handler_exception_escaped(observed):
        return True
    return any(
        alternative.raises is not None and isinstance(observed.raised, alternative.raises)
        for alternative in expectation.dispatched()
    )
