"""The checks of B10-B18: rejections, copies, failures, the four stops, the journal's
``started`` and concurrent batches.

B10, B12 and B18 are differential: the same schedule is run again with the rejected calls
removed, with every raising handler returning instead, or one batch at a time, and the
scheduling the kit saw must not change. A correct executor is deterministic under the harness
(every gate opens only when the property says so), so any difference is the executor's.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from conformance.batch.drive import Run, Schedule
from conformance.batch.harness import Call
from conformance.batch.judge import (
    BatchViolation,
    commits_after,
    entered_after_stop,
    fail_first,
    foreign_guard,
    misaligned,
    returned_outcomes,
    running_at,
    show,
    stop_point,
    synthetic_problem,
)
from conformance.batch.oracle import Expected, expected, stop_text_problem, without_time
from polyloop import ActionOutcome

__all__ = [f"check_B{n}" for n in range(10, 19)]

Trial = Any  # conformance.batch.trial.BatchTrial


def _scheduling(run: Run, names: dict[int, int] | None = None) -> list[tuple[int, frozenset[int]]]:
    """Per settled point: the step and the calls entered by then (renamed by `names`)."""
    rename = names or {}
    return [
        (snap.step, frozenset(rename.get(i, i) for i in snap.entered)) for snap in run.snapshots
    ]


def check_B10(trial: Trial, schedule: Schedule) -> None:
    """A rejected call enters no handler, takes no slot and is no barrier."""
    run = trial.run(schedule)
    calls = schedule.calls
    for ident in sorted(run.entered()):
        if 0 <= ident < len(calls) and calls[ident].rejected:
            raise BatchViolation(
                f"call {ident} ({calls[ident].text()}) is rejected, yet a handler was entered "
                "for it",
                expected="a rejected call resolved NOT_EXECUTED without entering a handler",
                actual=f"enter({ident})",
            )
    kept = [i for i, call in enumerate(calls) if not call.rejected]
    if len(kept) == len(calls) or not kept:
        return
    names = {old: new for new, old in enumerate(kept)}
    stripped = dataclasses.replace(
        schedule,
        calls=tuple(calls[i] for i in kept),
        order=tuple(names[i] for i in schedule.order if i in names),
    )
    alone = trial.run(stripped)
    if run.broke_off or alone.broke_off:
        return  # a scheduling cut short where the executor never ended: B1's (and a stop's)
    if _scheduling(run, names) != _scheduling(alone):
        foreign_guard(run, "the rejected calls changed the scheduling")
        got = [sorted(e) for _, e in _scheduling(run, names)]
        want = [sorted(e) for _, e in _scheduling(alone)]
        raise BatchViolation(
            "the rejected calls changed which accepted calls were entered when (they took a "
            "slot or acted as a barrier)",
            expected=f"entered per step as without them: {want}",
            actual=f"entered per step with them: {got} (accepted calls numbered among themselves)",
        )


def check_B11(trial: Trial, schedule: Schedule) -> None:
    """Each handler gets its own plain copy of its arguments."""
    run = trial.run(schedule)
    owners: dict[int, tuple[int, int]] = {}
    for receipt, (ident, arguments) in enumerate(run.received):
        if type(arguments) is not dict:
            raise BatchViolation(
                f"the handler of call {ident} got a {type(arguments).__name__}, not a plain dict",
                expected="a plain copy (dicts and lists) per handler",
                actual=type(arguments).__name__,
            )
        for part in _containers(arguments):
            first, other = owners.setdefault(id(part), (receipt, ident))
            if first != receipt:
                calls = (
                    f"calls {other} and {ident}"
                    if other != ident
                    else f"two identical calls (call {ident} and the same tool and arguments again)"
                )
                raise BatchViolation(
                    f"the handlers of {calls} got the same {type(part).__name__} object",
                    expected="each handler its own copy",
                    actual=f"one {type(part).__name__} shared by the handlers of {calls}",
                )
    for ident, seen in run.seen.items():
        action = (
            schedule.calls[ident].action(ident, schedule.mutate)
            if 0 <= ident < len(schedule.calls)
            else None
        )
        if action is None or action.tool_call is None:
            continue
        want = _plain(action.tool_call.arguments)
        if seen != want:
            raise BatchViolation(
                f"the handler of call {ident} received arguments another handler had mutated",
                expected=show(want),
                actual=show(seen),
            )


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, (dict, list)):
        found.append(value)
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            found += _containers(item)
    return found


def _plain(value: Any) -> Any:
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def check_B12(trial: Trial, schedule: Schedule) -> None:
    """An ordinary failure changes only its own outcome."""
    run = trial.run(schedule)
    failing = [i for i, c in enumerate(schedule.calls) if c.do == "raise" and not c.rejected]
    if not failing:
        return
    calm = dataclasses.replace(
        schedule,
        calls=tuple(Call(c.kind, "return") if c.do == "raise" else c for c in schedule.calls),
    )
    other = trial.run(calm)
    if run.cancels_seen and not other.cancels_seen:
        raise BatchViolation(
            f"call {failing[0]} raised an ordinary exception and the handlers of "
            f"{sorted(run.cancels_seen)} were cancelled",
            expected="siblings run on as if it had returned a string",
            actual=f"cancelled {sorted(run.cancels_seen)}",
        )
    if not (run.broke_off or other.broke_off) and _scheduling(run) != _scheduling(other):
        foreign_guard(run, "an ordinary failure changed the scheduling")
        raise BatchViolation(
            f"calls {failing} raising ordinary exceptions changed which calls were entered when",
            expected=f"entered per step as if they returned: {_steps(other)}",
            actual=f"entered per step: {_steps(run)}",
        )
    first, second = returned_outcomes(run), returned_outcomes(other)
    if first is not None and misaligned(first, expected(run).outcomes) is not None:
        return  # a permutation of the answers: B1's
    if first is not None and second is not None:
        for index, (a, b) in enumerate(zip(first, second, strict=True)):
            if index not in failing and a != b:
                raise BatchViolation(
                    f"call {index}'s outcome changed because call {failing[0]} raised",
                    expected=show(b),
                    actual=show(a),
                )
    elif (first is None) != (second is None) and run.raised is not None:
        raise BatchViolation(
            f"execute_batch raised {type(run.raised).__name__} because call {failing[0]} raised "
            "an ordinary exception",
            expected="one outcome per call, the failing call's own an error outcome",
            actual=f"raised {run.raised!r}",
        )


def _steps(run: Run) -> list[list[int]]:
    return [sorted(e) for _, e in _scheduling(run)]


def _seen_outcomes(run: Run) -> dict[int, ActionOutcome]:
    out = returned_outcomes(run)
    if out is not None:
        return dict(enumerate(out))
    return dict(run.commits)


_SITUATION = {"not_entered": "not run", "interrupted": "interrupted"}


def _stop_outcome_problem(
    outcome: ActionOutcome, wanted: ActionOutcome, situation: tuple[object, ...]
) -> str | None:
    """What the contract finds wrong with a stop outcome: its status, its flags (synthetic,
    E7) and its sentence (`stop_text_problem`), never polyloop's wording."""
    problem = synthetic_problem(outcome, wanted.status)
    return problem or stop_text_problem(outcome.observation, situation)


def _wanted_text(why: str, want: Expected, wanted: ActionOutcome) -> str:
    situation = want.situation if why == "not_entered" else None
    naming = ""
    if situation is not None and situation[0] == "env":
        naming = f" naming call {situation[1]}"
    elif situation is not None and situation[0] == "raised":
        naming = f" naming call {situation[1]} and {situation[2]}"
    return (
        f"{wanted.status.name}, synthetic, the executor's own fixed {_SITUATION[why]!r} "
        f"sentence{naming} (polyloop's: {wanted.observation!r})"
    )


def _stop_outcomes(run: Run, want: Expected, clause: str) -> None:
    """Each call's outcome after a stop: "not run" for calls never entered, "interrupted" for
    calls the stop ended (each the executor's own sentence, one per situation, the two
    different), and the call's own outcome for calls that finished."""
    seen = _seen_outcomes(run)
    if misaligned([seen.get(i) for i in range(len(want.why))], want.outcomes) is not None:
        return  # a permutation of the answers: B1's
    sentences: dict[str, tuple[int, str]] = {}
    for index, outcome in sorted(seen.items()):
        if not 0 <= index < len(want.why):
            continue
        why, wanted = want.why[index], want.outcomes[index]
        if wanted is None or (why not in _SITUATION and why != "survived"):
            continue
        if why == "survived" or not wanted.observation_is_synthetic:
            problem = None if outcome == wanted else "another outcome"
        else:
            situation = want.situation if why == "not_entered" else ("interrupted",)
            problem = _stop_outcome_problem(outcome, wanted, situation or ("cancel",))
        if problem is None and why in _SITUATION:
            earlier = sentences.setdefault(why, (index, outcome.observation))
            if earlier[1] != outcome.observation:
                problem = f"call {earlier[0]}, in the same situation, got {earlier[1]!r}"
        if problem is not None:
            # On threads, which stop came first (and so each call's text) is the threads' race.
            foreign_guard(run, f"call {index} got another outcome than the stop gives it")
            raise BatchViolation(
                f"call {index} ({why.replace('_', ' ')}) got {show(outcome)}: {problem} ({clause})",
                expected=_wanted_text(why, want, wanted) if why in _SITUATION else show(wanted),
                actual=show(outcome),
            )
    if len(sentences) == 2 and sentences["not_entered"][1] == sentences["interrupted"][1]:
        index, text = sentences["not_entered"]
        raise BatchViolation(
            f"call {index} (not run) and call {sentences['interrupted'][0]} (interrupted) got "
            f"the same sentence {text!r} ({clause})",
            expected='a "not run" sentence that differs from the "interrupted" one',
            actual=f"both {text!r}",
        )


def _ended(run: Run, after: str, wanted: str) -> None:
    if run.hung:
        raise BatchViolation(
            f"execute_batch never ended after {after}",
            expected=wanted,
            actual="no answer after every gate opened",
        )


def _stopped_cleanly(run: Run, want: Expected, stop: int | None, what: str, clause: str) -> None:
    """After a stop that cancels: nothing entered, running handlers cancelled and awaited, no
    task left over, and each call's stop outcome."""
    _not_after(run, stop, what)
    _cancelled_running(run, stop, what)
    _drained(run, clause)
    _stop_outcomes(run, want, clause)


def _drained(run: Run, clause: str) -> None:
    if run.running_at_end:
        raise BatchViolation(
            f"execute_batch ended while the handlers of {sorted(run.running_at_end)} still ran",
            expected="every started handler awaited before the batch ends",
            actual=f"still running: {sorted(run.running_at_end)}",
        )
    if run.leftover:
        raise BatchViolation(
            f"{run.leftover} task(s) the batch created outlived it",
            expected="no task outlives the batch",
            actual=f"{run.leftover} task(s) still alive",
        )


def _not_after(run: Run, stop: int | None, what: str) -> None:
    if stop is None:
        return
    late = entered_after_stop(run, stop)
    if late is not None:
        raise BatchViolation(
            f"call {late} was entered after {what}",
            expected=f"nothing entered after {what}",
            actual=f"enter({late}) after {what}",
        )


def _cancelled_running(run: Run, stop: int | None, what: str) -> None:
    if stop is None:
        return
    alive = running_at(run, stop + 1)
    trace = run.trace
    settled = next((p for p in range(stop, len(trace)) if trace[p][0] == "settled"), len(trace))
    opened = {ident for event, ident in trace[:settled] if event == "open"}
    unsent = sorted(
        i
        for i in alive
        if i not in run.cancels_seen and run.first("stop", i) is None and i not in opened
    )
    if unsent:
        raise BatchViolation(
            f"after {what} the handlers of {unsent} were left running, never cancelled",
            expected="running handlers cancelled and awaited",
            actual=f"never cancelled: {unsent}",
        )


def check_B13(trial: Trial, schedule: Schedule) -> None:
    """ENV_ERROR stops the batch; running calls finish."""
    run = trial.run(schedule)
    want = expected(run)
    if want.stops != {"env"}:
        return
    stop = stop_point(run, ["env"])
    _not_after(run, stop, "a call reported an environment error")
    if run.cancels_seen:
        raise BatchViolation(
            f"an environment error cancelled the handlers of {sorted(run.cancels_seen)}",
            expected="running handlers finish and keep their outcomes",
            actual=f"cancelled {sorted(run.cancels_seen)}",
        )
    _ended(run, "an environment error", "the batch ends once its running calls finish")
    if run.raised is not None:
        raise BatchViolation(
            f"execute_batch raised {run.raised!r} after an environment error",
            expected="one outcome per call",
            actual=f"raised {run.raised!r}",
        )
    _drained(run, "B13")
    _stop_outcomes(run, want, "B13")


def check_B14(trial: Trial, schedule: Schedule) -> None:
    """Cancellation drains started calls, commits every call and raises CancelledError."""
    run = trial.run(schedule)
    want = expected(run)
    if not run.cancelled or want.stops - {"cancel", "env"}:
        return
    stop = stop_point(run, ["cancel"])
    _ended(run, "the cancellation", "CancelledError once the started calls are drained")
    if run.raised is None:
        raise BatchViolation(
            "the cancelled batch returned instead of raising CancelledError (it swallowed the "
            "cancellation)",
            expected="CancelledError",
            actual=f"returned {show(run.returned)}",
        )
    if not isinstance(run.raised, asyncio.CancelledError):
        raise BatchViolation(
            f"the cancelled batch raised {run.raised!r}",
            expected="CancelledError",
            actual=f"raised {run.raised!r}",
        )
    _stopped_cleanly(run, want, stop, "the cancellation", "B14")


def check_B15(trial: Trial, schedule: Schedule) -> None:
    """A handler's own BaseException stops the batch and is re-raised, that very object."""
    run = trial.run(schedule)
    want = expected(run)
    if want.stops != {"raised"}:
        return
    stop = stop_point(run, ["raised"])
    own = [run.handler_raised[i] for i in sorted(run.handler_raised) if run.first("stop", i)]
    _ended(run, "a handler raised a BaseException", "the handler's BaseException re-raised")
    error = run.raised
    same = any(error is mine for mine in own) or (
        isinstance(error, asyncio.CancelledError)
        and any(isinstance(mine, asyncio.CancelledError) for mine in own)
    )
    if not same:
        raise BatchViolation(
            f"a handler raised {own[0]!r}; execute_batch "
            + ("returned" if error is None else f"raised {error!r}"),
            expected=f"the very object re-raised: {own[0]!r}",
            actual="returned" if error is None else repr(error),
        )
    _stopped_cleanly(run, want, stop, "a handler's BaseException", "B15")


def check_B16(trial: Trial, schedule: Schedule) -> None:
    """A journal fault or a non-str result stops the batch without invented outcomes."""
    run = trial.run(schedule)
    want = expected(run)
    if want.stops != {"fault"}:
        return
    stop = stop_point(run, ["fault"])
    journal = run.first("fault") is not None
    _ended(run, "the fault", "the fault raised")
    error = run.raised
    nonstr = any(w == "fault" for w in want.why)
    ok = (journal and error is run.journal_error) or (nonstr and isinstance(error, TypeError))
    if not ok:
        what = "the journal raised" if journal else "a handler returned a non-str"
        raise BatchViolation(
            f"{what}; execute_batch "
            + ("returned " + show(run.returned) if error is None else f"raised {error!r}"),
            expected=repr(run.journal_error) if journal else "TypeError (E9)",
            actual="returned" if error is None else repr(error),
        )
    _not_after(run, stop, "the fault")
    if stop is not None:
        late = commits_after(run, stop)
        if late:
            raise BatchViolation(
                f"call {late[0]} was committed after the fault",
                expected="nothing more committed",
                actual=f"committed {late} after the fault",
            )
    for index, outcome in run.commits:
        if 0 <= index < len(want.why) and want.why[index] in ("interrupted", "fault", "unfinished"):
            raise BatchViolation(
                f"call {index} was entered and never finished, yet committed as {show(outcome)}",
                expected="no outcome invented for an entered call",
                actual=f"committed({index}, {show(outcome)})",
            )
    _cancelled_running(run, stop, "the fault")
    _drained(run, "B16")


def check_B17(trial: Trial, schedule: Schedule) -> None:
    """started(i) comes immediately before call i's handler is entered, never for a rejected
    call, after its classification."""
    run = trial.run(schedule)
    calls = schedule.calls
    trace = run.trace
    stopped = bool(expected(run).stops)
    asked: list[int] = []
    entered_once: set[int] = set()
    for position, (event, ident) in enumerate(trace):
        if not 0 <= ident < len(calls):
            continue
        if event == "starting":
            fail_first(
                (
                    calls[ident].rejected,
                    f"started({ident}) was called for a rejected call",
                    "never started for a rejected call",
                    f"started({ident})",
                ),
                (
                    ident in asked,
                    f"started({ident}) was called twice",
                    "one started per entered call",
                    f"started({ident}) twice",
                ),
            )
            asked.append(ident)
        elif event == "classify" and ident in asked:
            raise BatchViolation(
                f"call {ident} was classified after started({ident})",
                expected="started(i) after the call is classified",
                actual=f"classify({ident}) after started({ident})",
            )
        elif event == "enter" and ident not in entered_once:
            entered_once.add(ident)
            previous = trace[position - 1] if position else None
            if run.first("started", ident) is None or run.first("started", ident) > position:
                raise BatchViolation(
                    f"call {ident} was entered without started({ident}) first",
                    expected=f"started({ident}) immediately before the handler",
                    actual=f"enter({ident}) with no started({ident}) before it",
                )
            if previous != ("started", ident):
                foreign_guard(run, f"something came between started({ident}) and its entry")
                raise BatchViolation(
                    f"{previous} came between started({ident}) and call {ident}'s entry",
                    expected=f"started({ident}) immediately before enter({ident})",
                    actual=f"... started({ident}) ... {previous}, enter({ident})",
                )
    if not stopped and not run.hung and run.raised is None:
        for ident in asked:
            if ident not in run.entered() and run.first("started", ident) is not None:
                raise BatchViolation(
                    f"started({ident}) was recorded but call {ident} was never entered",
                    expected="started(i) immediately before the handler is entered",
                    actual=f"started({ident}), no enter({ident})",
                )


def check_B18(trial: Trial, case: Any) -> None:
    """Concurrent batches neither order nor limit each other, and give the outcomes of the
    same batches run one after the other."""
    together, alone = trial.run_together(case)
    for index, (mine, theirs) in enumerate(zip(together, alone, strict=True)):
        if mine.steps != theirs.steps:
            foreign_guard(theirs.run, "concurrent batches were scheduled differently")
            raise BatchViolation(
                f"batch {index} was scheduled differently while other batches ran on the same "
                "executor",
                expected=f"entered per own step as alone: {theirs.steps}",
                actual=f"entered per own step alongside the others: {mine.steps}",
            )
        if mine.entered != theirs.entered:
            foreign_guard(theirs.run, "concurrent batches entered different calls")
            raise BatchViolation(
                f"batch {index} entered other calls alongside other batches than alone",
                expected=f"entered {sorted(theirs.entered)}",
                actual=f"entered {sorted(mine.entered)}",
            )
        if _timeless(mine.outcomes) != _timeless(theirs.outcomes):
            raise BatchViolation(
                f"batch {index} gave other outcomes alongside other batches than alone",
                expected=show(theirs.outcomes),
                actual=show(mine.outcomes),
            )


def _timeless(outcomes: Any) -> Any:
    """Outcomes with times taken out of synthetic texts (those are B5's)."""
    if not isinstance(outcomes, tuple):
        return outcomes
    return tuple(
        dataclasses.replace(o, observation=without_time(o.observation))
        if isinstance(o, ActionOutcome) and o.observation_is_synthetic
        else o
        for o in outcomes
    )
