"""What the B checks share: their verdict exceptions and readings of a run's trace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance._core.text import clip, safe_repr
from conformance.batch.drive import Run
from conformance.batch.harness import AMBIGUOUS, Call
from polyloop import ActionOutcome, ActionStatus

__all__ = [
    "BatchViolation",
    "Inconclusive",
    "blocking",
    "commit_differs",
    "entered_after_stop",
    "fail_first",
    "misaligned",
    "returned_outcomes",
    "show",
    "synthetic_problem",
]


class BatchViolation(Exception):
    """The executor broke the clause being checked."""

    def __init__(self, message: str, *, expected: str = "", actual: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual


class Inconclusive(Exception):
    """The run cannot decide this clause (handlers on threads; an executor never quiet)."""


def fail_first(*rules: tuple[bool, str, str, str]) -> None:
    """Raise the first rule that is broken: ``(broken, message, expected, actual)``."""
    for broken, message, expected, actual in rules:
        if broken:
            raise BatchViolation(message, expected=expected, actual=actual)


def synthetic_problem(outcome: ActionOutcome, status: ActionStatus) -> str | None:
    """What is wrong with a synthetic outcome other than its words: its status, its synthetic
    flag, the E7 flags, an empty text."""
    if outcome.status is not status:
        return f"status {outcome.status.name}, not {status.name}"
    if outcome.observation_is_synthetic is not True:
        return "observation_is_synthetic is not True"
    if outcome.env_reported_completion or outcome.observation_truncated_chars:
        return "env_reported_completion or observation_truncated_chars set (E7)"
    text = outcome.observation
    return "an empty observation" if not isinstance(text, str) or not text.strip() else None


def commit_differs(run: Run) -> None:
    """B2: every committed outcome is the one returned."""
    out = returned_outcomes(run)
    wrong = [(i, o) for i, o in run.commits if out is not None and i < len(out) and o != out[i]]
    if out is not None and wrong:
        index, outcome = wrong[0]
        raise BatchViolation(
            f"call {index} was committed as {show(outcome)} but returned as {show(out[index])}",
            expected="the committed outcome is the one returned",
            actual=f"committed {show(outcome)}, returned {show(out[index])}",
        )


def show(value: object, limit: int = 300) -> str:
    if isinstance(value, ActionOutcome):
        return (
            f"{value.status.name} {clip(safe_repr(value.observation), 160)}"
            f"{' (synthetic)' if value.observation_is_synthetic else ''}"
        )
    if isinstance(value, (tuple, list)) and all(isinstance(v, ActionOutcome) for v in value):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return clip(safe_repr(value), limit)


def foreign_guard(run: Run, what: str) -> None:
    """A failure that could come from how threads happened to be scheduled is no verdict."""
    if run.foreign:
        raise Inconclusive(
            f"{what}: the executor runs handlers on another thread or event loop, so the order "
            "of events the kit sees is the threads' order, not the executor's decisions"
        )


def returned_outcomes(run: Run) -> tuple[ActionOutcome, ...] | None:
    """The returned outcomes when they are a well-formed answer (else None: B1 judges it)."""
    out = run.returned
    if run.raised is not None or run.hung or not isinstance(out, tuple):
        return None
    if len(out) != len(run.schedule.calls):
        return None
    if not all(isinstance(o, ActionOutcome) for o in out):
        return None
    return out


def misaligned(
    outcomes: Iterable[ActionOutcome | None], want: Iterable[ActionOutcome | None]
) -> int | None:
    """The first position whose outcome answers another call (a permutation), or None."""
    got, exp = list(outcomes), list(want)
    for i, outcome in enumerate(got):
        if outcome is None or i >= len(exp) or outcome == exp[i]:
            continue
        for j, other in enumerate(exp):
            if j != i and other is not None and other == outcome and other != exp[i]:
                return i
    return None


def blocking(call: Call) -> bool:
    """Exclusive by S6 and B9: anything but an exact concurrency-safe classification."""
    return not call.safe


def stop_point(run: Run, kinds: Iterable[str]) -> int | None:
    """The trace position at which the first stop of these kinds became known."""
    calls = run.schedule.calls
    wanted = set(kinds)
    for position, (event, ident) in enumerate(run.trace):
        if "cancel" in wanted and event == "cancel":
            return position
        if "fault" in wanted and event == "fault":
            return position
        if event == "exit" and 0 <= ident < len(calls) and run.first("stop", ident) is not None:
            do = calls[ident].do
            if ("env" in wanted and do == "env") or ("fault" in wanted and do == "nonstr"):
                return position
            if (
                "raised" in wanted
                and do in ("base", "cancel_self")
                and ident not in run.cancels_seen
            ):
                return position
    return None


def entered_after_stop(run: Run, stop: int) -> int | None:
    """A call entered after the executor had a settled moment to see the stop at `stop`,
    except one whose ``started`` was asked before the stop (B17 lets it enter)."""
    trace = run.trace
    settled = next((p for p in range(stop, len(trace)) if trace[p][0] == "settled"), None)
    if settled is None:
        return None
    asked = {ident for event, ident in trace[:stop] if event == "starting"}
    for event, ident in trace[settled:]:
        if event == "enter" and ident not in asked:
            return ident
    return None


def running_at(run: Run, position: int) -> set[int]:
    alive: set[int] = set()
    for event, ident in run.trace[:position]:
        if event == "enter":
            alive.add(ident)
        elif event == "exit":
            alive.discard(ident)
    return alive


def commits_after(run: Run, position: int) -> list[int]:
    trace = run.trace
    settled = next((p for p in range(position, len(trace)) if trace[p][0] == "settled"), None)
    if settled is None:
        return []
    return [ident for event, ident in trace[settled:] if event == "committed"]


def ambiguous(call: Call) -> bool:
    return call.kind in AMBIGUOUS


def any_of(values: Iterable[Any]) -> bool:
    return any(True for _ in values)
