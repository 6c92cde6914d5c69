"""The verdicts of section 12, each from what one schedule's lifetimes showed.

Evidence is only what the contract lets a black box prove: the ledger (which handler was
entered in which lifetime, and what it returned: every kit observation ends in ``@<lifetime>``,
so an outcome says which lifetime's handler produced it), what each lifetime returned or
raised, and the schedule. The kit never sees the journal, so a check fails only on evidence no
conforming runtime can produce; an in-doubt call is one the ledger shows entered in a lifetime
that died, whose final outcome is not that lifetime's own result. Sentences are the runtime's
own words: only statuses, flags and the kit's own observations are compared.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from conformance._core.text import names_call
from conformance.recovery.lifetimes import Life, Observation
from conformance.recovery.schedules import TOOLS, Schedule

__all__ = ["CHECKS", "Unusable", "Violation", "judge"]


@dataclass
class Violation(Exception):
    """A clause broken by this schedule."""

    message: str
    expected: str
    actual: str


class Unusable(Exception):
    """The schedule could not be run to a verdict (a lifetime hung or the child failed)."""


def _kit_life(observation: str) -> int | None:
    match = re.search(r"@(\d+)$", observation) if isinstance(observation, str) else None
    return int(match.group(1)) if match else None


def _names(text: Any, index: int) -> bool:
    return isinstance(text, str) and names_call(text, index)


def _short(outcome: Any) -> str:
    if not isinstance(outcome, list) or len(outcome) != 5:
        return repr(outcome)
    status, text, synthetic = outcome[0], outcome[1], outcome[2]
    flags = ""
    if not _e7_flags(outcome):
        flags = f" completion={outcome[3]!r} truncated={outcome[4]!r}"
    return f"{status} {text!r}" + (" (synthetic)" if synthetic else "") + flags


def _e7_flags(outcome: list[Any]) -> bool:
    """E7's flags, which every stop outcome of section 10 carries: no completion reported,
    nothing truncated."""
    return outcome[3] is False and outcome[4] == 0


def _interrupted(outcome: Any) -> bool:
    """B14's outcome: ENV_ERROR, synthetic, with E7's flags (the sentence is the runtime's)."""
    return (
        isinstance(outcome, list)
        and outcome[0] == "ENV_ERROR"
        and outcome[2] is True
        and _e7_flags(outcome)
    )


_INTERRUPTED = "interrupted: ENV_ERROR, synthetic, no completion reported, nothing truncated"


_PROBES = ("other-batch", "damaged")


class _Facts:
    """What the lifetimes of one schedule showed, indexed for the checks."""

    def __init__(self, observation: Observation) -> None:
        self.schedule: Schedule = observation.schedule
        self.all_lives = observation.lives
        # The J9 probe and the damaged resume are judged by J9 and J10 alone.
        self.lives = [life for life in observation.lives if life.purpose not in _PROBES]
        self.n = len(self.schedule.calls)
        self.bound = observation.max_attempts()
        final = observation.final()
        self.final: list[Any] | None = None
        if final is not None and _well_formed(final.outcomes, self.n):
            self.final = final.outcomes
        self.final_life = final.number if final is not None else None

    def entries(self, call: int) -> list[int]:
        """The lifetimes in which handler `call` was entered, one per entry, until the first
        lifetime that returned: entries after it, of committed calls, are J3's alone."""
        seen = self.committed_seen()
        last = seen.number if seen is not None else len(self.all_lives)
        return [
            life.number
            for life in self.lives
            if life.number <= last
            for c in life.entered()
            if c == call
        ]

    def returned(self, call: int) -> dict[str, int]:
        """Each observation handler `call` returned (or raised as ENV_ERROR) -> its lifetime,
        in any lifetime, the J9 probe's included: a runtime that ran the recorded batch there
        (J9's failure) produced that result with the call's own handler."""
        found = {}
        for life in self.all_lives:
            for line in life.lines:
                if line["call"] == call and line["event"] == "return":
                    found[line["obs"]] = life.number
        return found

    def policies(self, call: int) -> tuple[str, set[str]]:
        """The recorded policy of the call's tool and the policies of later lifetimes."""
        tool = self.schedule.calls[call].tool
        if tool is None or tool not in TOOLS:
            return "NEVER", {"NEVER"}
        later = {self.schedule.policy(tool, life.number) for life in self.lives[1:]}
        return self.schedule.policy(tool, 0), later

    def in_doubt(self, call: int) -> int | None:
        """The lifetime that died with `call` in doubt: it entered the call (or the runtime
        reported its `started` record durable there) and the final outcome is not a result
        that lifetime's handler produced."""
        assert self.final is not None
        own = _kit_life(self.final[call][1]) if self.final[call][0] != "NOT_EXECUTED" else None
        for life in self.lives:
            if life.ended == "killed" and own != life.number and _attempted(life, call):
                return life.number
        return None

    def attempts(self, call: int) -> int:
        """The lifetimes, until the first that returned, that entered `call` or reported its
        `started` record durable: J13 counts attempts from durable `started` records."""
        seen = self.committed_seen()
        last = seen.number if seen is not None else len(self.all_lives)
        return sum(1 for life in self.lives if life.number <= last and _attempted(life, call))

    def acknowledged(self, call: int) -> Life | None:
        """The first lifetime in which the runtime reported `call`'s commit durable."""
        return next((life for life in self.lives if call in life.events("committed")), None)

    def committed_seen(self) -> Life | None:
        """The first lifetime that returned outcomes: every call was committed by then."""
        return next((life for life in self.lives if life.ended == "returned"), None)


def _ever_entered(facts: _Facts, call: int) -> bool:
    return any(call in life.entered() for life in facts.all_lives)


def _attempted(life: Life, call: int) -> bool:
    return call in life.entered() or call in life.events("started")


def _well_formed(outcomes: Any, n: int) -> bool:
    return (
        isinstance(outcomes, list)
        and len(outcomes) == n
        and all(isinstance(o, list) and len(o) == 5 for o in outcomes)
    )


def _j1(facts: _Facts) -> None:
    for life in facts.lives:
        if life.purpose in ("crash", "resume", "noop") and life.ended == "raised":
            raise Violation(
                f"lifetime {life.number} raised {life.error} running or resuming the batch it "
                "journaled itself (same calls, an undamaged directory)",
                "the batch resumes from its own durable header and records",
                f"{life.error}: {life.message}",
            )


def _j2(facts: _Facts) -> None:
    if facts.final is None:
        return
    for call in range(facts.n):
        entered = facts.entries(call)
        if entered and facts.final[call][0] == "NOT_EXECUTED":
            raise Violation(
                f"call {call} was entered in lifetime {entered[0]} (the ledger shows its "
                "handler ran), yet the batch answers it as never started",
                "a call that was entered has a durable started record: after a crash it is in "
                "doubt (interrupted or re-run), never NOT_EXECUTED",
                _short(facts.final[call]),
            )


def _j3(facts: _Facts) -> None:
    seen = facts.committed_seen()
    if seen is not None:
        for life in facts.lives:
            if life.number > seen.number and life.entered():
                raise Violation(
                    f"lifetime {seen.number} returned every outcome (all committed), yet "
                    f"lifetime {life.number} entered call {life.entered()[0]} again",
                    "a committed call is never entered again",
                    f"calls {life.entered()} entered in lifetime {life.number}",
                )
    for call in range(facts.n):
        done = facts.acknowledged(call)
        if done is None:
            continue
        again = [n for n in facts.entries(call) if n > done.number]
        if again:
            raise Violation(
                f"the runtime reported call {call}'s commit durable in lifetime {done.number}, "
                f"yet call {call} was entered again in lifetime {again[0]}",
                "a committed call is never entered again",
                f"entered in lifetimes {facts.entries(call)}",
            )
        returned = [
            line["obs"] for line in done.lines if line["call"] == call and line["event"] == "return"
        ]
        if facts.final is not None and returned and facts.final[call][1] != returned[-1]:
            raise Violation(
                f"the runtime reported call {call}'s commit durable in lifetime {done.number}, "
                f"after its handler returned {returned[-1]!r}",
                "resuming returns the recorded outcome exactly",
                _short(facts.final[call]),
            )
    if facts.final is None:
        return
    for call in range(facts.n):
        own = _kit_life(facts.final[call][1])
        if own is None or facts.final[call][2]:
            continue
        later = [
            life.number for life in facts.lives if life.number > own and call in life.entered()
        ]
        if later:
            raise Violation(
                f"call {call}'s outcome came from lifetime {own}'s handler, so it was committed "
                f"there, yet it was entered again in lifetime {later[0]}",
                "a committed call is never entered again",
                f"entered in lifetimes {facts.entries(call)}; answered {_short(facts.final[call])}",
            )


def _invented(facts: _Facts, call: int) -> bool:
    """The final outcome claims a handler result no handler of this call produced."""
    assert facts.final is not None
    outcome = facts.final[call]
    if outcome[2] or outcome[0] == "NOT_EXECUTED":
        return False
    return outcome[1] not in facts.returned(call)


def _j4(facts: _Facts) -> None:
    if facts.final is None:
        return
    for call in range(facts.n):
        recorded, later = facts.policies(call)
        if recorded != "SAFE" or later - {"SAFE"} or facts.in_doubt(call) is None:
            continue
        outcome = facts.final[call]
        if outcome[0] == "NOT_EXECUTED" and not _ever_entered(facts, call):
            raise Violation(
                f"SAFE call {call}'s started record was durable in lifetime "
                f"{facts.in_doubt(call)}, which died before its handler was entered",
                'in doubt: its own result from a later entry, or interrupted; never "not '
                'run", since it may have run (J4)',
                _short(outcome),
            )
        if _invented(facts, call):  # NOT_EXECUTED after an entry ("never started") is J2's
            raise Violation(
                f"SAFE call {call} was in doubt after lifetime {facts.in_doubt(call)} died",
                "its own result from a later entry, or interrupted (ENV_ERROR, synthetic)",
                _short(outcome),
            )
        if outcome[2] and outcome[0] != "NOT_EXECUTED" and not _interrupted(outcome):
            raise Violation(
                f"SAFE call {call} was in doubt after lifetime {facts.in_doubt(call)} died",
                f"its own result from a later entry, or {_INTERRUPTED}",
                _short(outcome),
            )
        stopped = any(o[0] == "ENV_ERROR" for i, o in enumerate(facts.final) if i != call) or any(
            o[0] == "NOT_EXECUTED" and facts.schedule.calls[i].accepted()
            for i, o in enumerate(facts.final)
        )
        if _interrupted(outcome) and not stopped and facts.attempts(call) < facts.bound:
            raise Violation(
                f"SAFE call {call} was in doubt, attempted {facts.attempts(call)} time(s) "
                f"(bound {facts.bound}), nothing stopped the batch, yet it was not entered again",
                "an in-doubt SAFE call is entered again as a fresh start",
                _short(outcome),
            )


def _never_checks(facts: _Facts, clause: str) -> None:
    """J5 (recorded and current policy NEVER) and J6 (they differ, one of them NEVER)."""
    if facts.final is None:
        return
    for call in range(facts.n):
        recorded, later = facts.policies(call)
        policies = {recorded} | later
        if "NEVER" not in policies and "absent" not in policies:
            continue
        j6 = policies != {"NEVER"}
        if (clause == "J6") != j6:
            continue
        died = facts.in_doubt(call)
        if died is None:
            continue
        again = [life for life in facts.entries(call) if life > died]
        outcome = facts.final[call]
        where = f"call {call} ({'recorded ' + recorded}, later {'/'.join(sorted(later))})"
        if again:
            raise Violation(
                f"{where} was in doubt after lifetime {died} died, yet entered again in "
                f"lifetime {again[0]}",
                "an in-doubt NEVER call is never entered again",
                f"entered in lifetimes {facts.entries(call)}",
            )
        entered = _ever_entered(facts, call)
        if not _interrupted(outcome) and (outcome[0] != "NOT_EXECUTED" or not entered):
            raise Violation(
                f"{where} was in doubt after lifetime {died} died",
                _INTERRUPTED,
                _short(outcome),
            )
        seen = facts.committed_seen()
        last = seen.number if seen is not None else len(facts.all_lives)
        after = [
            (life.number, c)
            for life in facts.lives
            if died < life.number <= last
            for c in life.entered()
        ]
        if after and clause == "J5":
            raise Violation(
                f"{where} was in doubt after lifetime {died} died, yet the resume entered "
                f"call {after[0][1]} in lifetime {after[0][0]}",
                "a resume with an in-doubt NEVER call enters nothing",
                f"entered {[c for _, c in after]}",
            )


def _j5(facts: _Facts) -> None:
    _never_checks(facts, "J5")
    if facts.final is not None:
        _stopped_calls(facts, "J5")


def _stop_owner(facts: _Facts, k: int) -> str:
    """Which clause answers for the calls B13 stops after call `k`: J13 when `k` is the call
    that kept killing its process, J5 when `k`'s ENV_ERROR was there before the last lifetime
    began (in doubt and interrupted, or committed by a lifetime that died), J7 otherwise (a
    live stop, as a crash-free batch has it)."""
    assert facts.final is not None
    if facts.schedule.calls[k].tool == "bomb":
        return "J13"
    own = _kit_life(facts.final[k][1])
    killed = {life.number for life in facts.lives if life.ended == "killed"}
    return "J5" if _interrupted(facts.final[k]) or own in killed else "J7"


def _stopped_calls(facts: _Facts, clause: str) -> None:
    """B13 through section 12 (J5's "other calls not started NOT_EXECUTED as B13 says"): every
    accepted call after the lowest-indexed ENV_ERROR call `k` that was not entered is
    NOT_EXECUTED, synthetic, with E7's flags, in a sentence naming `k`; a rejected call keeps
    its E1/E2 outcome (`_j7`). The wording is the runtime's own."""
    final = facts.final
    assert final is not None
    k = next((i for i, outcome in enumerate(final) if outcome[0] == "ENV_ERROR"), None)
    if k is None or _stop_owner(facts, k) != clause:
        return
    for call in range(k + 1, facts.n):
        outcome = final[call]
        if outcome[0] != "NOT_EXECUTED" or not facts.schedule.calls[call].accepted():
            continue
        if "absent" in facts.policies(call)[1]:
            continue  # rejected (E2) where a resume commits it
        if _ever_entered(facts, call) or facts.in_doubt(call) is not None:
            continue  # entered, yet answered as never started (J2's), or in doubt (J4-J6)
        if not (outcome[2] is True and _e7_flags(outcome) and _names(outcome[1], k)):
            raise Violation(
                f"call {call} was not run after call {k} reported an environment error",
                f"NOT_EXECUTED, synthetic, no completion reported, nothing truncated, in a "
                f"sentence naming call {k} (B13; the words are the runtime's)",
                _short(outcome),
            )


def _j7(facts: _Facts) -> None:
    final = facts.final
    if final is None:
        return
    calls = facts.schedule.calls
    stop = next((i for i, o in enumerate(final) if o[0] == "ENV_ERROR"), facts.n)
    for call, outcome in enumerate(final):
        if not calls[call].accepted():
            if outcome[0] != "NOT_EXECUTED" or not outcome[2] or not _e7_flags(outcome):
                why = "code" if calls[call].tool is None else "unknown tool"
                raise Violation(
                    f"call {call} is rejected ({why})",
                    "NOT_EXECUTED, synthetic, no completion reported, nothing truncated (E1, "
                    "E2, E7)",
                    _short(outcome),
                )
            continue
        if facts.in_doubt(call) is not None:
            continue  # J4, J5, J6 judge it
        if _invented(facts, call):
            raise Violation(
                f"call {call}'s outcome is no result its handler produced",
                "what section 10 gives: the handler's own result",
                _short(outcome),
            )
        _, later = facts.policies(call)
        if "absent" in later:
            continue  # rejected (E2) wherever a resume commits it: NOT_EXECUTED is right
        if call < stop and outcome[0] == "NOT_EXECUTED" and not facts.entries(call):
            raise Violation(
                f"call {call} was not run although no call before it reported an ENV_ERROR",
                "its handler's result (B13 stops only the calls after an ENV_ERROR)",
                _short(outcome),
            )
    _stopped_calls(facts, "J7")


def _j8(facts: _Facts) -> None:
    for life in facts.lives:
        if life.ended == "returned" and not _well_formed(life.outcomes, facts.n):
            raise Violation(
                f"lifetime {life.number} returned something other than {facts.n} outcomes",
                f"a tuple of {facts.n} ActionOutcome, one per call",
                repr(life.outcomes)[:300],
            )
    if facts.final is None and not facts.schedule.has_bomb():
        if any(life.ended == "raised" for life in facts.lives):
            return  # J1 (or J9, J10) judges a raising resume
        raise Violation(
            "no clean resume returned the batch's outcomes",
            f"{facts.n} outcomes once the crashes stop",
            ", ".join(f"lifetime {life.number} {life.ended}" for life in facts.lives),
        )


def _j9(facts: _Facts) -> None:
    index = facts.schedule.other_batch
    probe = next((life for life in facts.all_lives if life.purpose == "other-batch"), None)
    if index is None or probe is None:
        return
    named = probe.message is not None and re.search(rf"(?<!\d){index}(?!\d)", probe.message)
    if probe.ended != "raised" or not probe.value_error or not named or probe.entered():
        raise Violation(
            f"the batch id was resumed with other calls (first difference at index {index})",
            f"ValueError naming index {index}, nothing entered",
            f"{probe.ended} {probe.error or ''} {probe.message or _short(probe.outcomes)}; "
            f"entered {probe.entered()}",
        )


def _j10(facts: _Facts) -> None:
    damaged = next((life for life in facts.all_lives if life.purpose == "damaged"), None)
    if damaged is None or facts.final is None:
        return
    if damaged.entered():
        raise Violation(
            f"after a flipped byte ({damaged.damaged_at}) the resume entered calls "
            f"{damaged.entered()}",
            "a damaged journal raises and enters nothing (or, if the damage missed every "
            "record, the recorded outcomes)",
            f"{damaged.ended}: entered {damaged.entered()}",
        )
    if damaged.ended == "returned" and damaged.outcomes != facts.final:
        raise Violation(
            f"after a flipped byte ({damaged.damaged_at}) the resume returned other outcomes",
            "an error naming the damage, or the recorded outcomes exactly",
            repr(damaged.outcomes)[:400],
        )


def _j11(facts: _Facts) -> None:
    noop = next((life for life in facts.lives if life.purpose == "noop"), None)
    if noop is None or facts.final is None or not _well_formed(noop.outcomes, facts.n):
        return  # J8 judges a malformed answer
    if noop.outcomes != facts.final:
        raise Violation(
            f"resuming the complete batch again (lifetime {noop.number}) returned other outcomes",
            "the recorded outcomes, exactly",
            repr(noop.outcomes)[:400],
        )


def _j13(facts: _Facts) -> None:
    bombs = [i for i, call in enumerate(facts.schedule.calls) if call.tool == "bomb"]
    for call in bombs:
        entered = facts.entries(call)
        if len(entered) > facts.bound:
            raise Violation(
                f"SAFE call {call} kills its process on every entry; it was entered "
                f"{len(entered)} times",
                f"at most max_attempts ({facts.bound}) entries, then interrupted",
                f"entered in lifetimes {entered}",
            )
        if facts.final is None:
            if any(life.ended in ("returned", "raised") for life in facts.lives):
                return  # J8 or J1 judges what that resume answered
            raise Violation(
                f"SAFE call {call} kills its process on every entry; no resume returned",
                "after max_attempts entries the resume resolves it interrupted",
                ", ".join(f"lifetime {life.number} {life.ended}" for life in facts.lives),
            )
        if entered and not _interrupted(facts.final[call]):
            raise Violation(
                f"SAFE call {call} kills its process on every entry",
                f"{_INTERRUPTED}, once max_attempts is reached",
                _short(facts.final[call]),
            )
    if facts.final is not None:
        _stopped_calls(facts, "J13")


CHECKS: Mapping[str, Callable[[_Facts], None]] = MappingProxyType(
    {
        "J1": _j1,
        "J2": _j2,
        "J3": _j3,
        "J4": _j4,
        "J5": _j5,
        "J6": lambda facts: _never_checks(facts, "J6"),
        "J7": _j7,
        "J8": _j8,
        "J9": _j9,
        "J10": _j10,
        "J11": _j11,
        "J13": _j13,
    }
)
"""The checked clauses; J12 (power-loss durability) is not checkable with kill -9."""


def judge(observation: Observation, clause: str) -> None:
    """Raise `Violation` if the schedule's lifetimes break `clause`; `Unusable` if no verdict."""
    for life in observation.lives:
        if life.ended == "timeout":
            raise Unusable(f"lifetime {life.number} did not end within the kit's time box")
        if life.ended == "failed":
            raise Unusable(
                f"lifetime {life.number}'s process failed outside the target's run: "
                f"{life.stderr.strip()[-600:]}"
            )
        if life.ended == "raised" and life.in_factory and life.purpose != "damaged":
            raise Unusable(
                f"the factory raised {life.error} building the runtime for lifetime "
                f"{life.number}: {life.message}"
            )
    CHECKS[clause](_Facts(observation))
