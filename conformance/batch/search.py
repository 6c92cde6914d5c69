"""One batch clause's Hypothesis run: traps first, then generated schedules, shrunk on failure.

The kit records every failing schedule; Hypothesis replays the minimal one last, so the last
record is the counterexample the report shows. The same ``--seed`` replays it exactly (the
run is derandomized from the seed, as for V and E). A schedule that cannot be judged (handlers
on threads whose order decides the check; an executor that never becomes quiet) counts as
passing for the search and makes the clause ``skipped`` with the reason, never ``fail``.
"""

from __future__ import annotations

from typing import Any

import hypothesis
import hypothesis.errors

from conformance._core.outcome import ClauseOutcome, TargetError
from conformance._core.report import Counterexample
from conformance._core.search import (
    SearchState,
    case_counterexample,
    errored,
    failed,
    no_counterexample,
    run_search,
)
from conformance.batch.drive import Schedule
from conformance.batch.harness import SCHEMA
from conformance.batch.judge import BatchViolation, Inconclusive
from conformance.batch.properties import BatchProperty
from conformance.batch.together import Together
from conformance.batch.trial import BatchTrial, Stuck

__all__ = ["counterexample_of", "search_batch_clause"]


def _action_json(action: Any) -> dict[str, Any]:
    call = action.tool_call
    if call is None:
        return {"code": action.code}
    arguments = {k: v for k, v in call.arguments.items()}
    for key, value in list(arguments.items()):
        if hasattr(value, "items"):
            arguments[key] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in value.items()}
    return {"tool_call": {"name": call.name, "arguments": arguments}}


def counterexample_of(case: Any, found: BatchViolation) -> Counterexample:
    """The report's form of a failing schedule: the batch, and the schedule as behaviour."""
    if isinstance(case, Together):
        actions: Any = [
            [_action_json(a) for a in Schedule(calls=calls).actions(base)]
            for calls, base in zip(case.batches, case.bases(), strict=True)
        ]
    else:
        actions = [_action_json(a) for a in case.actions()]
    return case_counterexample(SCHEMA, actions, case, found)


def _run(
    prop: BatchProperty,
    trial: BatchTrial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
    *,
    traps: bool = True,
) -> tuple[SearchState, BaseException | None]:
    """One Hypothesis run of the clause's property (its traps first, unless `traps` is off)."""
    return run_search(
        lambda case: prop.check(trial, case),
        prop.cases(),
        prop.traps if traps else (),
        settings,
        seed,
        f"{prop.clause}:{label}",
        violation=BatchViolation,
        inconclusive=Inconclusive,
        stops=(TargetError, Stuck),
    )


def _shrunk(
    prop: BatchProperty,
    trial: BatchTrial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
    state: SearchState,
) -> tuple[Any, BatchViolation, str]:
    """A failure a fixed trap found, shrunk: the generated search run again without the traps
    gives Hypothesis's smallest failing schedule when it finds one; else the trap stands."""
    assert state.failure is not None
    case, found = state.failure
    assert isinstance(found, BatchViolation)
    if case not in prop.traps:
        return case, found, ""
    again, exc = _run(prop, trial, settings, seed, label, traps=False)
    if isinstance(exc, BatchViolation) and again.failure is not None:
        shrunk, violation = again.failure
        assert isinstance(violation, BatchViolation)
        return shrunk, violation, ""
    return case, found, " (a fixed schedule of the kit's; generated schedules did not fail)"


def search_batch_clause(
    prop: BatchProperty,
    trial: BatchTrial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
) -> ClauseOutcome:
    """Run one batch clause's property under Hypothesis and say what it concluded; a failure
    one of its fixed traps found is shrunk by a generated search when one fails too."""
    state, exc = _run(prop, trial, settings, seed, label)
    error = errored(state, exc, (TargetError, Stuck), BatchViolation)
    if error is not None:
        return error
    if isinstance(exc, (BatchViolation, hypothesis.errors.Flaky)):
        case, found, note = _shrunk(prop, trial, settings, seed, label, state)
        if isinstance(exc, hypothesis.errors.Flaky):
            note = (
                " (flaky: replaying this schedule did not fail the same way; the executor keeps "
                "state between batches or is nondeterministic)"
            )
        return failed(state.examples, found.message + note, counterexample_of(case, found))
    return no_counterexample(state.examples, exc, state.inconclusive)
