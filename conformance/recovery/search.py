"""One recovery clause's Hypothesis run over crash schedules, sharing lifetimes between clauses.

Process starts dominate the cost, so every clause draws the same schedules (the same traps,
then the same generated ones: the search is keyed by the run, not the clause) and the trial
keeps what each schedule's lifetimes showed: thirteen clauses cost one set of lifetimes, plus
the schedules a failing clause shrinks through. A failure shrinks to the shortest crash
schedule (fewer calls, fewer crashes), and the same ``--seed`` replays it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import hypothesis
import hypothesis.errors
from hypothesis import example, given
from hypothesis import strategies as st

from conformance._core import hypo
from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus, Counterexample
from conformance._core.search import case_counterexample
from conformance.recovery.clauses import Unusable, Violation, judge
from conformance.recovery.lifetimes import LIFETIME_LIMIT, Observation, run_schedule
from conformance.recovery.schedules import CRASH_EVENTS, GHOST, TOOL_SCHEMA, TOOLS, Call, Schedule

__all__ = ["TRAPS", "RecoveryTrial", "examples_for", "schedules", "search_recovery_clause"]

_PLAIN = ("safe_par", "safe_seq", "never_par", "never_seq")
_RARE = ("env_safe", "env_never", GHOST, None)


def examples_for(max_examples: int) -> int:
    """Generated schedules per run: each costs a few process starts (ci: 6)."""
    return max(2, max_examples // 8)


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    """A batch of 1-4 calls (both policies and classifications, ENV_ERROR handlers, rejected
    calls), up to three crash points, and rarely a registry change, a resume with a changed
    batch (J9) or damage to the store (J10)."""
    size = draw(st.integers(1, 4))
    tools = draw(
        st.lists(
            st.sampled_from(_PLAIN) | st.sampled_from(_RARE).filter(lambda _: draw(st.booleans())),
            min_size=size,
            max_size=size,
        )
    )
    calls = tuple(Call(tool, draw(st.integers(0, 3))) for tool in tools)
    crashes = draw(
        st.lists(st.tuples(st.sampled_from(CRASH_EVENTS), st.integers(0, size - 1)), max_size=3)
    )
    change: tuple[tuple[str, str], ...] = ()
    if draw(st.integers(0, 5)) == 0:
        policy = draw(st.sampled_from(("SAFE", "NEVER", "absent", "exclusive")))
        change = ((draw(st.sampled_from(_PLAIN)), policy),)
    other = draw(st.integers(0, size)) if draw(st.integers(0, 5)) == 0 else None
    damage = size >= 2 and draw(st.integers(0, 5)) == 0  # call 0's commit is then not the last
    return Schedule(
        calls=calls, crashes=tuple(crashes), change=change, other_batch=other, damage=damage
    )


_LONG_PAYLOAD = 10**120
"""A code action's payload: its code, ``print(1000…)``, is 127 characters long."""


def _c(*tools: str | None) -> tuple[Call, ...]:
    return tuple(Call(tool, index) for index, tool in enumerate(tools))


TRAPS: tuple[Schedule, ...] = (
    Schedule(_c("never_seq"), crashes=(("enter", 0),)),
    Schedule(_c("safe_seq", "never_seq", "safe_par"), crashes=(("effect", 1),)),
    Schedule(_c("never_par", "safe_par", "never_par"), crashes=(("enter", 2),)),
    Schedule(_c("safe_seq", "safe_seq"), crashes=(("effect", 1),)),
    Schedule(_c("safe_par", "safe_seq", "never_seq"), crashes=(("return", 1), ("enter", 1))),
    Schedule(_c("safe_seq"), crashes=(("effect", 0),), change=(("safe_seq", "NEVER"),)),
    Schedule(_c("never_seq"), crashes=(("effect", 0),), change=(("never_seq", "SAFE"),)),
    Schedule(
        _c("safe_par", "safe_par"), crashes=(("effect", 0),), change=(("safe_par", "absent"),)
    ),
    Schedule(_c("safe_seq", "env_safe", "safe_seq", GHOST, None), crashes=(("return", 0),)),
    Schedule(_c("safe_seq", "never_seq"), crashes=(("effect", 1),), other_batch=0),
    Schedule(_c("safe_seq"), other_batch=1),
    Schedule(_c("safe_seq", "never_par", "safe_par"), damage=True),
    Schedule(_c("safe_seq", "bomb", "safe_seq")),
    Schedule(  # J4: both in flight; on resume call 1 waits for call 0, whose ENV_ERROR stops
        _c("env_safe", "safe_par"), crashes=(("enter", 1),), change=(("safe_par", "exclusive"),)
    ),
    Schedule(  # J5: an in-doubt NEVER call stops the resume; after it a valid, an unknown and a
        # code call, answered without being entered (B13 naming call 1, E2, E1)
        _c("safe_seq", "never_seq", "safe_par", GHOST, None),
        crashes=(("effect", 1),),
    ),
    # Journal crash points (a runtime that reports its journal; others crash in the handler):
    # J5, a NEVER call whose started record is durable and whose handler never ran; J3, a SAFE
    # call killed just after its commit was reported durable, then one crash later.
    Schedule(_c("safe_seq", "never_seq", "safe_par"), crashes=(("started", 1),)),
    Schedule(_c("safe_seq", "safe_seq"), crashes=(("committed", 0), ("enter", 1))),
    # J9 both ways round: a resume given fewer calls than the journal records, and one whose
    # differing call is a recorded code action longer than a message quotes whole, whose text
    # sorts after the given tool call's (the generated changes only add or raise a payload).
    Schedule(_c("safe_seq", "safe_par"), other_batch=1, cut=True),
    Schedule((Call("safe_seq", 0), Call(None, _LONG_PAYLOAD)), other_batch=1),
)
"""Hand-picked schedules every clause replays first: each clause's classic crash."""


_SEEN: dict[tuple[str, Schedule], Observation] = {}
"""What each schedule showed, per target, kept for the process: the pytest base class runs
each clause as its own `certify`, and the clauses share their lifetimes all the same."""
_KEPT = 4000


@dataclass
class RecoveryTrial:
    """The target (as an importable ``module:attr``) and what each schedule showed."""

    target: str
    limit: float = LIFETIME_LIMIT
    lifetimes: int = 0

    def observe(self, schedule: Schedule) -> Observation:
        key = (self.target, schedule)
        found = _SEEN.get(key)
        if found is None:
            found = run_schedule(self.target, schedule, limit=self.limit)
            self.lifetimes += len(found.lives)
            if len(_SEEN) >= _KEPT:
                _SEEN.clear()
            _SEEN[key] = found
        return found


@dataclass
class _State:
    examples: int = 0
    failure: tuple[Schedule, Violation] | None = None
    unusable: str | None = None
    damaged: int = 0
    """Schedules whose store the kit damaged (a J10 resume ran)."""
    missed: int = 0
    """Schedules that asked for damage where no file held the observation as plain text."""


_NOT_DAMAGED = (
    "not checked: the kit damages a store by changing a letter of call 0's recorded "
    "observation where the target's files hold it as plain text, and in {missed} schedule(s) "
    "that asked for it none did (an encoded, compressed or encrypted store), so no damaged "
    "resume ran; check J10 by hand or with a store that keeps its records readable"
)


def _counterexample(schedule: Schedule, found: Violation) -> Counterexample:
    return case_counterexample(TOOL_SCHEMA, schedule.as_json(), schedule, found, tuple(TOOLS))


def search_recovery_clause(
    trial: RecoveryTrial, clause: str, settings: hypothesis.settings, seed: int, label: str
) -> ClauseOutcome:
    """Run one clause's search: the traps, then generated schedules, shrunk on failure."""
    state = _State()

    def test(schedule: Schedule) -> None:
        if state.failure is None:
            state.examples += 1
        observation = trial.observe(schedule)
        state.missed += observation.damage_missed
        state.damaged += any(life.purpose == "damaged" for life in observation.lives)
        try:
            judge(observation, clause)
        except Unusable as why:
            state.unusable = state.unusable or str(why)
        except Violation as found:
            state.failure = (schedule, found)
            raise

    hypo.add_digest(test, f"recovery:{label}".encode())  # one key for every clause: shared draws
    wrapped: Any = test
    for trap in reversed(TRAPS):
        wrapped = example(trap)(wrapped)
    wrapped = given(schedules())(wrapped)
    more = type(settings)(settings, max_examples=examples_for(settings.max_examples))
    wrapped = more(hypothesis.seed(seed)(wrapped))
    try:
        wrapped()
    except (Violation, hypothesis.errors.Flaky) as exc:
        if state.failure is None:
            return ClauseOutcome(
                verdict=ClauseStatus.ERROR, examples=state.examples, message=str(exc)
            )
        schedule, found = state.failure
        note = ""
        if isinstance(exc, hypothesis.errors.Flaky):
            note = " (flaky: replaying this schedule did not fail the same way)"
        return ClauseOutcome(
            verdict=ClauseStatus.FAIL,
            examples=state.examples,
            message=found.message + note,
            counterexample=_counterexample(schedule, found),
        )
    except hypothesis.errors.FailedHealthCheck as exc:
        return ClauseOutcome(
            verdict=ClauseStatus.ERROR, examples=state.examples, message=f"health check: {exc}"
        )
    if state.unusable is not None:
        return ClauseOutcome(
            verdict=ClauseStatus.ERROR, examples=state.examples, message=state.unusable
        )
    if clause == "J10" and state.damaged == 0 and state.missed:
        message = _NOT_DAMAGED.format(missed=state.missed)
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=state.examples, message=message)
    return ClauseOutcome(verdict=ClauseStatus.PASS, examples=state.examples)
