"""One clause's Hypothesis run, shared by the subjects whose properties check one drawn case at
a time: the traps first (explicit examples), then generated cases, shrunk on failure.

A subject passes its check and the exception types that mean "violation", "inconclusive" and
"stop the search" (the target failed or hung); what the run saw comes back as a `SearchState`
and the exception it ended with, which the subject turns into its `ClauseOutcome`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import hypothesis
import hypothesis.errors
from hypothesis import given
from hypothesis import strategies as st

from conformance._core import hypo
from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus, Counterexample

__all__ = [
    "SearchState",
    "case_counterexample",
    "errored",
    "failed",
    "no_counterexample",
    "run_search",
]


def case_counterexample(
    schema: Any, action: object, case: Any, found: Any, tools: tuple[str, ...] | None = None
) -> Counterexample:
    """The report's form of a failing scripted case: the tools' `schema`, the failing
    `action`(s) as JSON, the case's ``describe()`` as the behaviour, and the expected and
    actual lines of `found` (the violation)."""
    return Counterexample(
        schema=dict(schema),
        action=action,
        behaviour=case.describe(),
        expected=found.expected,
        actual=found.actual,
        tools=tools,
    )


def errored(
    state: SearchState,
    exc: BaseException | None,
    stops: tuple[type[BaseException], ...],
    violation: type[BaseException],
) -> ClauseOutcome | None:
    """The ERROR outcome of a search one of `stops` ended, or that ended on a `violation` (or
    Hypothesis's Flaky) without keeping a failing case; None for any other end."""
    lost = isinstance(exc, (violation, hypothesis.errors.Flaky)) and state.failure is None
    if isinstance(exc, stops) or lost:
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=state.examples, message=str(exc))
    return None


@dataclass(kw_only=True)
class SearchState:
    examples: int = 0
    failure: tuple[Any, BaseException] | None = None
    inconclusive: str | None = None
    stop: BaseException | None = None


def run_search(
    check: Callable[[Any], None],
    cases: st.SearchStrategy[Any],
    traps: Sequence[Any],
    settings: hypothesis.settings,
    seed: int,
    digest: str,
    *,
    violation: type[BaseException],
    inconclusive: type[BaseException],
    stops: tuple[type[BaseException], ...],
) -> tuple[SearchState, BaseException | None]:
    """Run `check` on `traps`, then on `cases`: what it saw, and the exception the run ended
    with (None: it passed). A `violation` is the failure (kept with its case), an
    `inconclusive` is noted and the search goes on, one of `stops` ends it."""
    state = SearchState()

    def test(case: Any) -> None:
        if state.stop is not None:
            raise state.stop
        if state.failure is None:
            state.examples += 1
        try:
            check(case)
        except inconclusive as why:
            state.inconclusive = state.inconclusive or str(why)
        except violation as found:
            state.failure = (case, found)
            raise
        except stops as exc:
            state.stop = exc
            raise

    hypo.add_digest(test, digest.encode())
    wrapped: Any = settings(hypothesis.seed(seed)(given(cases)(test)))
    ended: tuple[type[BaseException], ...] = (
        violation,
        *stops,
        hypothesis.errors.Flaky,
        hypothesis.errors.FailedHealthCheck,
    )
    try:
        hypo.run_traps(test, traps, settings)
        wrapped()
    except ended as exc:
        return state, exc
    return state, None


def failed(examples: int, message: str, counterexample: Counterexample) -> ClauseOutcome:
    """A search that found (and shrank) a counterexample."""
    return ClauseOutcome(
        verdict=ClauseStatus.FAIL,
        examples=examples,
        message=message,
        counterexample=counterexample,
    )


def no_counterexample(
    examples: int, ended: BaseException | None, inconclusive: str | None
) -> ClauseOutcome:
    """A search that found no counterexample: an error when Hypothesis's health check `ended`
    it, a skip when some example was `inconclusive` (never judged), else a pass."""
    if isinstance(ended, hypothesis.errors.FailedHealthCheck):
        message = f"Hypothesis health check failed: {ended}"
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=examples, message=message)
    if inconclusive is not None:
        message = f"inconclusive: {inconclusive}"
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=examples, message=message)
    return ClauseOutcome(verdict=ClauseStatus.PASS, examples=examples)
