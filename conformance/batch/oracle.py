"""What the contract says each call's outcome is, given what the trace shows happened.

The sequential oracle (`drive.sequential_oracle`) gives what ``execute`` returns for each call
run alone (the E table, B4). `expected` combines it with the run's trace: a call never entered
gets the "not run" outcome of the stop (B13-B15), a call ended by a cancellation the
"interrupted" one (B14), a handler's own BaseException makes its call "interrupted" (B15), and
every other entered call keeps exactly what ``execute`` gives.

The texts of those stop outcomes are the executor's own fixed sentences (contract section 10);
`expected` words them as polyloop does, to show one example, and `stop_text_problem` judges an
executor's sentence by what the contract requires of it: the "not run" sentence of B13 names
call k, that of B15 names call k and the exception class. A call is named by its index, the
number the contract gives it (``actions[k]``, counted from 0), written as a number that stands
alone: "call 2", "#2", "index 2", "actions[2]" all name call 2; "the third call" does not, and
neither does "call 12".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance._core.text import has_time, names_call, without_time
from conformance.batch.drive import Run
from conformance.batch.judge import synthetic_problem
from polyloop import ActionOutcome, ActionStatus

__all__ = [
    "INTERRUPTED",
    "NOT_RUN_CANCELLED",
    "Expected",
    "expected",
    "has_time",
    "names_call",
    "names_class",
    "rejection_problem",
    "stop_text_problem",
    "without_time",
]

INTERRUPTED = "interrupted while running; its effects are unknown"
NOT_RUN_CANCELLED = "not run: the batch was cancelled"


def names_class(text: str, name: str) -> bool:
    """Whether `text` names the exception class `name` (alone or qualified, as in
    ``asyncio.CancelledError``), not merely a word that begins with it."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def stop_text_problem(text: object, situation: tuple[object, ...]) -> str | None:
    """What the contract finds wrong with a stop sentence, or None. `situation`:
    ``("cancel",)`` or ``("interrupted",)`` (any sentence of the executor's own),
    ``("env", k)`` (B13: names call k), ``("raised", k, Class)`` (B15: names k and Class)."""
    if not isinstance(text, str) or not text.strip():
        return "an empty sentence"
    kind = situation[0]
    if kind in ("env", "raised"):
        index = situation[1]
        assert isinstance(index, int)
        if not names_call(text, index):
            return f"the sentence does not name call {index}"
        if kind == "raised" and not names_class(text, str(situation[2])):
            return f"the sentence does not name the exception class {situation[2]}"
    return None


_MUST_NAME = {"bad": ("do", "string"), "unknown": ("nope", "safe", "excl", "ask", "finish")}
"""What a rejection of the harness's rejected calls must name (V6: the key and its declared
type; V2: the unknown tool and the visible tools). A code action's E1 sentence is free."""


def rejection_problem(kind: str, outcome: ActionOutcome) -> str | None:
    """What E1/E2 find wrong with a rejected call's outcome: status, flags, an empty text, or
    a name V2/V6 require; never polyloop's wording (B4 judges them as E1 and E2 do)."""
    problem = synthetic_problem(outcome, ActionStatus.NOT_EXECUTED)
    missing = [name for name in _MUST_NAME.get(kind, ()) if name not in outcome.observation]
    if problem is None and missing:
        problem = f"the rejection does not name {', '.join(map(repr, missing))}"
    return problem


@dataclass(frozen=True)
class Expected:
    """Each call's outcome by the contract and why, the stop's kind and what must be raised."""

    outcomes: tuple[ActionOutcome | None, ...]
    why: tuple[str, ...]
    """Per call: ``rejected``, ``finished`` (ran to its end), ``not_entered``, ``interrupted``
    (ended by a cancellation or its own BaseException), ``survived`` (ignored a cancellation
    and returned), ``fault`` (returned a non-str: no outcome is invented)."""
    stops: frozenset[str]
    """``env``, ``cancel``, ``raised``, ``fault`` (non-str result or journal fault)."""
    not_run: str | None
    """polyloop's text for a call not entered (None: nothing stopped)."""
    raises: str | None
    """``fault``, ``raised`` or ``cancel``: what execute_batch must raise (None: return)."""
    situation: tuple[object, ...] | None = None
    """Which stop words the calls not entered: ``("env", k)``, ``("raised", k, Class)`` or
    ``("cancel",)`` (`stop_text_problem`); None: nothing stopped."""


def _trusted(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def expected(run: Run) -> Expected:
    calls = run.schedule.calls
    entered = run.entered()
    stops: set[str] = set()
    outcomes: list[ActionOutcome | None] = []
    why: list[str] = []
    raised: list[tuple[int, str]] = []
    if run.cancelled:
        stops.add("cancel")
    if run.journal_error is not None and run.first("fault") is not None:
        stops.add("fault")
    for index, call in enumerate(calls):
        if call.rejected:
            outcomes.append(run.oracle[index])
            why.append("rejected")
        elif index not in entered:
            outcomes.append(None)
            why.append("not_entered")
        elif index in run.cancels_seen:
            if call.do == "ignore_cancel" and run.first("survived", index) is not None:
                outcomes.append(_trusted(ActionStatus.EXECUTED, f"survived {index}", False))
                why.append("survived")
            else:
                outcomes.append(_trusted(ActionStatus.ENV_ERROR, INTERRUPTED, True))
                why.append("interrupted")
        elif call.do == "nonstr" and run.first("stop", index) is not None:
            stops.add("fault")
            outcomes.append(None)
            why.append("fault")
        elif call.do in ("base", "cancel_self") and run.first("stop", index) is not None:
            stops.add("raised")
            raised.append((index, "Stop" if call.do == "base" else "CancelledError"))
            outcomes.append(_trusted(ActionStatus.ENV_ERROR, INTERRUPTED, True))
            why.append("interrupted")
        elif run.first("exit", index) is None:
            outcomes.append(None)  # still running when the run ended (it hung)
            why.append("unfinished")
        else:
            outcome = run.oracle[index]
            outcomes.append(outcome)
            why.append("finished")
            if outcome is not None and outcome.status is ActionStatus.ENV_ERROR:
                stops.add("env")
    not_run: str | None = None
    raises: str | None = None
    situation: tuple[object, ...] | None = None
    if raised:
        first, name = min(raised)
        not_run = f"not run: call {first} raised {name}"
        raises, situation = "raised", ("raised", first, name)
    elif run.cancelled:
        not_run, raises, situation = NOT_RUN_CANCELLED, "cancel", ("cancel",)
    else:
        env = [
            i
            for i, outcome in enumerate(outcomes)
            if why[i] == "finished"
            and outcome is not None
            and outcome.status is ActionStatus.ENV_ERROR
        ]
        if env:
            not_run = f"not run: call {env[0]} reported an environment error"
            situation = ("env", env[0])
    if "fault" in stops:
        raises = "fault"
    if not_run is not None:
        outcomes = [
            _trusted(ActionStatus.NOT_EXECUTED, not_run, True) if w == "not_entered" else o
            for o, w in zip(outcomes, why, strict=True)
        ]
    return Expected(
        outcomes=tuple(outcomes),
        why=tuple(why),
        stops=frozenset(stops),
        not_run=not_run,
        raises=raises,
        situation=situation,
    )
