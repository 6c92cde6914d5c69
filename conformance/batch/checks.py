"""The checks of B1-B9: each runs a schedule and judges only its own clause.

Every check reads the run through the oracle (`oracle.expected`) and the trace, never through
the executor's own account of what it did. Where another clause owns a deviation (the wording
of a "not run" text, a permutation of the outcomes, an ambiguous classification), the check
leaves it to that clause, so a report points at the rule that was broken.
"""

from __future__ import annotations

import itertools
from typing import Any

from conformance.batch.drive import Run, Schedule
from conformance.batch.harness import AMBIGUOUS, CLASSIFIER_ERROR, Call
from conformance.batch.judge import (
    BatchViolation,
    ambiguous,
    blocking,
    commit_differs,
    fail_first,
    foreign_guard,
    misaligned,
    returned_outcomes,
    show,
)
from conformance.batch.oracle import expected, has_time, rejection_problem
from polyloop import ActionOutcome

__all__ = [f"check_B{n}" for n in range(1, 10)]

Trial = Any  # conformance.batch.trial.BatchTrial (kept loose: no import back up a layer)


def check_B1(trial: Trial, schedule: Schedule) -> None:
    """One outcome per call, in model order; an empty batch does nothing."""
    run = trial.run(schedule)
    count = len(schedule.calls)
    if run.hung and not run.cancelled and not _stopped(run):
        raise BatchViolation(
            "execute_batch never returned, though every handler had ended"
            if not run.broke_off
            else "execute_batch never returned once every gate was open (its event loop never "
            "went quiet: a livelock)",
            expected="a tuple of outcomes",
            actual="no answer after every gate opened",
        )
    if run.raised is not None and not run.hung and not _owned_elsewhere(run):
        raise BatchViolation(
            f"execute_batch raised {type(run.raised).__name__} though nothing stopped the batch",
            expected=f"a tuple of {count} outcomes (no cancellation, handler BaseException, "
            "journal fault or non-str result came)",
            actual=f"raised {show(run.raised)}",
        )
    if run.raised is not None or run.hung:
        return
    out = run.returned
    if type(out) is not tuple:
        raise BatchViolation(
            f"execute_batch returned a {type(out).__name__}, not a tuple",
            expected=f"a tuple of {count} outcomes",
            actual=show(out),
        )
    if len(out) != count:
        raise BatchViolation(
            f"execute_batch returned {len(out)} outcomes for {count} calls",
            expected=f"{count} outcomes, out[i] answering call i",
            actual=show(out),
        )
    wrong = [i for i, o in enumerate(out) if not isinstance(o, ActionOutcome)]
    if wrong:
        raise BatchViolation(
            f"out[{wrong[0]}] is a {type(out[wrong[0]]).__name__}, not an ActionOutcome",
            expected="an ActionOutcome per call",
            actual=show(out),
        )
    if count == 0:
        events = [event for event, _ in run.trace if event not in ("settled", "done")]
        if events:
            raise BatchViolation(
                f"an empty batch called the handlers, classifier or journal: {events}",
                expected="() and no call of a handler, classifier or journal method",
                actual=", ".join(events),
            )
        return
    want = expected(run).outcomes
    place = misaligned(out, want)
    if place is not None:
        raise BatchViolation(
            f"out[{place}] answers another call than call {place}: the outcomes are not in "
            "model order",
            expected=show(list(want)),
            actual=show(out),
        )


def _owned_elsewhere(run: Run) -> bool:
    """Whether the raise of a run is expected or another clause's: a stop the oracle predicts
    (B13-B16), a handler's ordinary or environment error that escaped (B12, B13, B4), or the
    classifier's (B9). What is left, a raise with nothing to cause it, breaks B1."""
    if expected(run).raises is not None:
        return True
    error = run.raised
    if isinstance(error, RuntimeError) and str(error) == CLASSIFIER_ERROR:
        return True
    calls = run.schedule.calls
    return any(calls[i].do in ("raise", "env") for i in run.entered() if i < len(calls))


def _stopped(run: Run) -> bool:
    return bool(expected(run).stops)


def check_B2(trial: Trial, schedule: Schedule) -> None:
    """Commits in model order, each as soon as its prefix is known, the outcome returned."""
    run = trial.run(schedule)
    indices = [index for index, _ in run.commits]
    _once(indices, "call {} was committed {} times", "committed(i, out[i]) exactly once per call")
    if indices != list(range(len(indices))):
        raise BatchViolation(
            f"commits came in the order {indices}, not in model order",
            expected="committed(0), committed(1), ... in model order",
            actual=f"commits in the order {indices}",
        )
    count = len(schedule.calls)
    want = expected(run)
    if (
        (run.raised is None and not run.hung)
        or (run.raised is not None and want.raises == "cancel" and "fault" not in want.stops)
    ) and len(indices) != count:
        how = "returned" if run.raised is None else "raised CancelledError"
        raise BatchViolation(
            f"execute_batch {how} with {len(indices)} of {count} calls committed",
            expected="every call committed before execute_batch returns or raises CancelledError",
            actual=f"committed {indices}",
        )
    commit_differs(run)
    _timely(run)


def _timely(run: Run) -> None:
    """At every settled point before any stop (and with no journal record pending), exactly the
    longest prefix of known outcomes is committed."""
    calls = run.schedule.calls
    trace = run.trace
    for snap in run.snapshots:
        if snap.done or snap.records_pending:
            continue
        before = trace[: snap.position]
        if any(event in ("stop", "cancel", "fault") for event, _ in before):
            return
        committed = sum(event == "committed" for event, _ in before)
        exited = {ident for event, ident in before if event == "exit"}
        known = 0
        while known < len(calls) and (calls[known].rejected or known in exited):
            known += 1
        fail_first(
            (
                committed < known,
                f"after step {snap.step}, calls 0..{known - 1} had known outcomes but only "
                f"{committed} were committed",
                f"{known} calls committed as soon as their prefix is known",
                f"{committed} committed while the batch waited for more",
            ),
            (
                committed > known,
                f"after step {snap.step}, {committed} calls were committed though only the "
                f"outcomes of calls 0..{known - 1} were known",
                f"{known} calls committed",
                f"{committed} committed",
            ),
        )


def _once(events: list[int], message: str, wanted: str) -> None:
    """Each call at most once in `events` (commits, entries)."""
    twice = sorted({i for i in events if events.count(i) > 1})
    if twice:
        counted = message.format(twice[0], events.count(twice[0]))
        raise BatchViolation(counted, expected=wanted, actual=f"in the order {events}")


def check_B3(trial: Trial, schedule: Schedule) -> None:
    """Calls are entered in model order."""
    run = trial.run(schedule)
    order = list(dict.fromkeys(ident for event, ident in run.trace if event == "enter"))
    late = next(((a, b) for a, b in itertools.pairwise(order) if b < a), None)
    if late is not None:
        earlier, later = late
        foreign_guard(run, f"call {later} was seen entered after call {earlier}")
        fail_first(
            (
                True,
                f"call {later} was entered after call {earlier}",
                "calls entered in model order",
                f"entered in the order {order}",
            )
        )


def check_B4(trial: Trial, schedule: Schedule) -> None:
    """Each call's outcome is execute's (the E table), and each handler runs once."""
    run = trial.run(schedule)
    entered = [ident for event, ident in run.trace if event == "enter"]
    _once(
        entered,
        "the handler of call {} was entered {} times",
        "each call's handler called once, as execute calls it",
    )
    want = expected(run)
    out = returned_outcomes(run)
    got: dict[int, ActionOutcome] = dict(enumerate(out)) if out is not None else {}
    if out is None:
        got = dict(run.commits)
    if misaligned([got.get(i) for i in range(len(schedule.calls))], want.outcomes) is not None:
        return  # a permutation of the answers: B1's
    for index, why in enumerate(want.why):
        if why not in ("rejected", "finished") or index not in got:
            continue
        wanted, outcome = want.outcomes[index], got[index]
        if why == "rejected":
            problem = rejection_problem(schedule.calls[index].kind, outcome)
        else:
            reference = f"polyloop's reference execute gives {show(wanted)}"
            problem = None if outcome == wanted else reference
        if problem is not None:
            raise BatchViolation(
                f"call {index} ({schedule.calls[index].text()}) got {show(outcome)}: {problem}",
                expected=show(wanted)
                if why != "rejected"
                else "NOT_EXECUTED, synthetic, the executor's own sentence (E1) or rejection "
                f"message (E2, V2-V8), as polyloop's {show(wanted)}",
                actual=show(outcome),
            )


def check_B5(trial: Trial, schedule: Schedule) -> None:
    """No synthetic observation holds a time; the same schedule gives the same outcomes."""
    run = trial.run(schedule)
    seen = list(returned_outcomes(run) or ()) + [o for _, o in run.commits]
    for outcome in seen:
        if outcome.observation_is_synthetic and has_time(outcome.observation):
            raise BatchViolation(
                f"a synthetic observation holds a time or duration: {outcome.observation!r}",
                expected="synthetic texts that depend only on the batch and what happened",
                actual=show(outcome),
            )
    again = trial.run(schedule)
    if again.entered() != run.entered() or again.cancels_seen != run.cancels_seen:
        return  # a different course of events: nothing to compare
    first, second = returned_outcomes(run), returned_outcomes(again)
    if first is not None and second is not None and first != second:
        foreign_guard(run, "two runs of one schedule gave different outcomes")
        index = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)
        raise BatchViolation(
            f"the same schedule, run twice, gave call {index} different outcomes",
            expected=show(first[index]),
            actual=show(second[index]),
        )


def check_B6(trial: Trial, schedule: Schedule) -> None:
    """Only concurrency-safe calls overlap; exclusive calls run alone. A call whose classifier
    answers other than an exact True (or raises) is exclusive too; if the executor asked that
    classifier and misread the answer, the fault is B9's, so such a call is left to B9. One whose
    classifier was never asked is judged here, as exclusive: an executor that runs everything
    at once without classifying breaks B6, not B9."""
    run = trial.run(schedule)
    calls = schedule.calls
    running: set[int] = set()
    asked: set[int] = set()

    def deferred(ident: int) -> bool:
        return ambiguous(calls[ident]) and ident in asked

    for event, ident in run.trace:
        if not 0 <= ident < len(calls):
            continue
        if event == "classify":
            asked.add(ident)
            continue
        if event == "exit":
            running.discard(ident)
            continue
        if event != "enter":
            continue
        call = calls[ident]
        definite = [other for other in running if not deferred(other)]
        if not deferred(ident):
            if blocking(call) and definite:
                raise _overlap(ident, call, sorted(definite), calls)
            exclusive = [other for other in definite if blocking(calls[other])]
            if exclusive:
                raise _overlap(ident, call, exclusive, calls)
        running.add(ident)


def _overlap(ident: int, call: Call, others: list[int], calls: tuple[Call, ...]) -> BatchViolation:
    names = ", ".join(f"{o} ({calls[o].text()})" for o in others)
    message = f"call {ident} ({call.text()}) was entered while {names} ran"
    overlapped = f"call {ident} overlapped {names}"
    return BatchViolation(message, expected="only concurrency-safe overlap", actual=overlapped)


def check_B7(trial: Trial, schedule: Schedule) -> None:
    """At most max_concurrency handlers of one batch run at once."""
    run = trial.run(schedule)
    running: set[int] = set()
    for event, ident in run.trace:
        if event == "enter":
            running.add(ident)
            if len(running) > schedule.cap:
                raise BatchViolation(
                    f"{len(running)} handlers ran at once with max_concurrency={schedule.cap}",
                    expected=f"at most {schedule.cap} running",
                    actual=f"running {sorted(running)}",
                )
        elif event == "exit":
            running.discard(ident)


def check_B8(trial: Trial, schedule: Schedule) -> None:
    """Work-conserving: at every settled point, the next call is held back only by the cap or
    by exclusivity."""
    run = trial.run(schedule)
    calls = schedule.calls
    for snap in run.snapshots:
        before = run.trace[: snap.position]
        if any(event in ("stop", "cancel", "fault") for event, _ in before):
            return
        if snap.done or snap.records_pending:
            continue
        waiting = [i for i, c in enumerate(calls) if not c.rejected and i not in snap.entered]
        if not waiting:
            return
        head = waiting[0]
        running = snap.running
        held = (
            len(running) >= schedule.cap
            or any(blocking(calls[other]) for other in running)
            or (blocking(calls[head]) and bool(running))
        )
        if not held:
            foreign_guard(run, f"call {head} was not entered although it could be")
            raise BatchViolation(
                f"after step {snap.step}, call {head} could enter (running {sorted(running)}, "
                f"max_concurrency {schedule.cap}) but was not entered",
                expected=f"call {head} entered as soon as a slot was free",
                actual=f"call {head} waited with {len(running)} of {schedule.cap} slots used",
            )


def check_B9(trial: Trial, schedule: Schedule) -> None:
    """The classifier: at most once per accepted call, before it is entered, never for a
    rejected call; only an exact True is concurrency-safe; its answer changes scheduling only.
    A misread answer is judged only where the classifier was asked (else it is B6's)."""
    run = trial.run(schedule)
    calls = schedule.calls
    classified: list[int] = []
    running: set[int] = set()
    entered: set[int] = set()
    for event, ident in run.trace:
        if not 0 <= ident < len(calls):
            continue
        if event == "classify":
            fail_first(
                (
                    calls[ident].rejected,
                    f"the classifier was asked about call {ident}, which validation rejects",
                    "no classification of a rejected call",
                    f"classify({ident})",
                ),
                (
                    ident in classified,
                    f"the classifier was asked twice about call {ident}",
                    "at most one classification per call",
                    f"classified {[*classified, ident]}",
                ),
                (
                    ident in entered,
                    f"call {ident} was classified after its handler was entered",
                    "classification before the call is entered",
                    f"classify({ident}) after enter({ident})",
                ),
            )
            classified.append(ident)
        elif event == "enter":
            others = sorted(running)
            if ambiguous(calls[ident]) and ident in classified and others:
                raise _ambiguous(ident, calls[ident], others, "was entered while", calls)
            running.add(ident)
            entered.add(ident)
        elif event == "exit":
            running.discard(ident)
    error = run.raised
    if isinstance(error, RuntimeError) and str(error) == CLASSIFIER_ERROR:
        raise BatchViolation(
            "the classifier's exception escaped execute_batch",
            expected="a raising classifier makes its call exclusive and changes nothing else",
            actual=f"execute_batch raised {error!r}",
        )


def _ambiguous(
    ident: int, call: Call, others: list[int], how: str, calls: tuple[Call, ...]
) -> BatchViolation:
    names = ", ".join(f"{o} ({calls[o].text()})" for o in others)
    kinds = " or ".join(AMBIGUOUS)
    return BatchViolation(
        f"call {ident} ({call.text()}) {how} {names} ran: a classifier that does not answer an "
        f"exact True ({kinds}) makes its call exclusive",
        expected="fail-closed classification",
        actual=f"call {ident} overlapped {names}",
    )
