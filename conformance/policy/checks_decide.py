"""The checks of the deciding side: P1-P6 (rejected calls, stage order, combination, failing
deciders, asking, denial)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from conformance._core.text import clip, safe_repr
from conformance.policy.harness import DENYING, SECRET, Played, Recorder, Schedule, Stack
from conformance.policy.judge import (
    Kit,
    PolicyViolation,
    fail_first,
    names_position,
    outcome_of,
    show,
    status_problem,
)
from conformance.policy.oracle import expect
from polyloop import ActionOutcome

__all__ = ["Case", "check_P1", "check_P2", "check_P3", "check_P4", "check_P5", "check_P6"]


@dataclass(frozen=True)
class Case:
    """One example: a stack, the schedule it is played with, and for the clauses that compare
    two runs, the second schedule and an order of the deciders."""

    stack: Stack
    schedule: Schedule = field(default_factory=Schedule)
    second: Schedule = field(default_factory=Schedule)
    order: tuple[int, ...] = ()

    def describe(self) -> str:
        text = f"{self.stack.describe()}; {self.schedule.describe()}"
        if self.order:
            text += f"; then deciders reordered as {list(self.order)}, {self.second.describe()}"
        return text

    def reordered(self) -> Stack:
        stack = self.stack
        order = [i for i in self.order if i < len(stack.deciders)]
        order += [i for i in range(len(stack.deciders)) if i not in order]
        return replace(
            stack,
            deciders=tuple(stack.deciders[i] for i in order),
            reasons=tuple(stack.reason(i) for i in order),
        )


def _first(recorder: Recorder, event: str, stage: str) -> int | None:
    return next(
        (i for i, (e, s, _) in enumerate(recorder.trace) if e == event and s == stage), None
    )


def _last(recorder: Recorder, event: str, stages: tuple[str, ...]) -> int:
    found = [i for i, (e, s, _) in enumerate(recorder.trace) if e == event and s in stages]
    return max(found, default=-1)


async def check_P1(kit: Kit, case: Case) -> None:
    """P1: a rejected call reaches no listener and keeps its E1/E2 outcome."""
    recorder, played = await kit.run(case.stack)
    _, plain = await kit.run(Stack(call=case.stack.call, ident=case.stack.ident))
    listeners = [event for event in recorder.trace if event[0] == "call"]
    fail_first(
        (
            bool(listeners),
            f"a rejected call ({case.stack.call}) reached the policy: "
            f"{listeners[0] if listeners else ''}",
            "no listener is called for a rejected call",
            f"trace {recorder.trace[:6]}",
        ),
    )
    if plain.raised is None and played.raised is None:
        got, want = played.returned, plain.returned
        fail_first(
            (
                got != want,
                "a rejected call's outcome differs from the one without a policy",
                f"the E1/E2 outcome {show(plain)}",
                show(played),
            ),
        )


async def check_P2(kit: Kit, case: Case) -> None:
    """P2: deciders, then the approver (only on ASK), then wrappers and handler (only when
    allowed), then post-processors in order on EXECUTED; nothing after the outcome."""
    recorder, played = await kit.run(case.stack, case.schedule)
    want = expect(case.stack)
    trace = recorder.trace
    decided = _last(recorder, "end", ("decide",))
    asked = _first(recorder, "call", "approve")
    asked_end = _last(recorder, "end", ("approve",))
    chained = [i for i, (e, s, _) in enumerate(trace) if e == "call" and s in ("wrap", "handler")]
    late = [trace[i] for i in range(played.end_mark, len(trace)) if trace[i][0] == "call"]
    fail_first(
        (
            asked is not None and asked < decided,
            "the approver was called before every decider had answered",
            "deciders first",
            f"trace {trace}",
        ),
        (
            asked is not None and want.decision != "ASK",
            f"the approver was called though the combined decision is {want.decision}",
            "the approver only on ASK",
            f"trace {trace}",
        ),
        (
            bool(chained) and chained[0] < max(decided, asked_end),
            "a wrapper or the handler started before the deciding stages ended",
            "chain after deciding",
            f"trace {trace}",
        ),
        (
            bool(late),
            f"{late[0] if late else ''} was called after execute returned",
            "no listener after the outcome",
            f"trace {trace}",
        ),
    )
    ran = expect(replace(case.stack, deciders=(), default="ALLOW"))  # the chain, if it ran
    _check_post_order(recorder, played, ran.posts if chained else 0)


def _check_post_order(recorder: Recorder, played: Played, posts: int) -> None:
    trace = recorder.trace
    calls = [(i, p) for i, (e, s, p) in enumerate(trace) if e == "call" and s == "post"]
    chain_end = _last(recorder, "end", ("wrap", "handler"))
    if posts == 0:
        fail_first(
            (
                bool(calls),
                "a post-processor ran on an outcome that is not EXECUTED",
                "no post-processing",
                f"trace {trace}",
            )
        )
        return
    positions = [p for _, p in calls]
    fail_first(
        (
            positions != list(range(posts)),
            f"post-processors ran as {positions}",
            f"each of {list(range(posts))} exactly once, in order",
            f"trace {trace}",
        ),
    )
    for k, (index, position) in enumerate(calls):
        before = calls[k - 1][1] if k else None
        ended = (
            chain_end
            if before is None
            else next(i for i, e in enumerate(trace) if e == ("end", "post", before))
        )
        fail_first(
            (
                index < ended,
                f"post-processor {position} started before "
                + (
                    "the handler chain ended"
                    if before is None
                    else f"post-processor {before} ended"
                ),
                "post-processors one after another, after the chain",
                f"trace {trace}",
            ),
        )


def _allowed_problem(stack: Stack, recorder: Recorder, played: Played, clause: str) -> str | None:
    want = expect(stack)
    outcome = outcome_of(played, clause)
    entered = recorder.count("call", "handler") > 0
    if entered != want.chain_ran:
        verb = "ran" if entered else "did not run"
        return f"the handler {verb} though the combined decision is {want.decision}"
    return status_problem(outcome, replace(want, observation=None))


async def check_P3(kit: Kit, case: Case) -> None:
    """P3: strictest wins; each decider called once (or a fixed order stopping at the first
    DENY), none cancelled; the same result for every order of deciders and of finishing."""
    for stack, schedule in ((case.stack, case.schedule), (case.reordered(), case.second)):
        recorder, played = await kit.run(stack, schedule)
        if "raise" in stack.deciders and not isinstance(played.returned, ActionOutcome):
            return  # a raising decider that is not fail-closed is P4's finding, not P3's
        problem = _allowed_problem(stack, recorder, played, "P3")
        fail_first((problem is not None, f"P3: {problem}", _decision_text(stack), show(played)))
        _check_each_once(stack, recorder)


def _decision_text(stack: Stack) -> str:
    want = expect(stack)
    ran = "the handler runs" if want.chain_ran else "the handler does not run"
    return f"combined decision {want.decision}: {ran}"


def _check_each_once(stack: Stack, recorder: Recorder) -> None:
    order = [p for e, s, p in recorder.trace if e == "call" and s == "decide"]
    cancelled = [p for e, s, p in recorder.trace if e == "cancelled" and s == "decide"]
    twice = sorted({p for p in order if order.count(p) > 1})
    missing = [p for p in range(len(stack.deciders)) if p not in order]
    stopped_right = (
        bool(order)
        and stack.deciders[order[-1]] in DENYING
        and not any(stack.deciders[p] in DENYING for p in order[:-1])
    )
    fail_first(
        (
            bool(twice),
            f"decider {twice[0] if twice else ''} was called more than once",
            "each decider exactly once",
            f"deciders called in the order {order}",
        ),
        (
            bool(cancelled),
            f"decider {cancelled[0] if cancelled else ''} was cancelled",
            "every decider awaited to its answer",
            f"trace {recorder.trace}",
        ),
        (
            bool(missing) and not stopped_right,
            f"decider {missing[0] if missing else ''} was "
            "never called, and the deciders did not stop right after the first DENY",
            "every decider called, or a fixed order stopping at the first DENY",
            f"deciders called in the order {order}",
        ),
    )


async def check_P4(kit: Kit, case: Case) -> None:
    """P4: garbage answers and exceptions deny, naming the position and the class."""
    stack = case.stack
    recorder, played = await kit.run(stack, case.schedule)
    want = expect(stack)
    entered = recorder.count("call", "handler")
    if want.kind == "halt":
        fail_first(
            (
                played.raised is not recorder.halt,
                "a decider's BaseException did not propagate unchanged",
                "execute raises the decider's DeciderHalt object",
                show(played),
            ),
            (
                entered > 0,
                "the handler ran after a decider raised a BaseException",
                "the handler not entered",
                f"{entered} handler entries",
            ),
        )
        return
    outcome = outcome_of(played, "P4")
    text = outcome.observation if isinstance(outcome.observation, str) else ""
    position, name = want.fault, want.fault_class
    fail_first(
        (
            entered > 0,
            "the handler ran though a decider failed",
            "a failing decider denies",
            show(played),
        ),
        (
            status_problem(outcome, want) is not None,
            f"P4: {status_problem(outcome, want)}",
            "NOT_EXECUTED, synthetic",
            show(played),
        ),
        (
            position is not None and not names_position(text, position),
            f"the sentence does not name decider position {position}",
            f"the position {position} in the sentence",
            show(played),
        ),
        (
            name is not None and name not in text,
            f"the sentence does not name {name}",
            f"the class {name} in the sentence",
            show(played),
        ),
        (
            SECRET in text,
            "the sentence holds the exception's message",
            "never the message",
            show(played),
        ),
    )


_REFUSALS = ("false", "missing", "none", "one", "yes", "raise")


async def check_P5(kit: Kit, case: Case) -> None:
    """P5: asked exactly once with the ASK reasons; only True grants; fixed refusals; no
    cached approval."""
    stack = case.stack
    recorder, played = await kit.run(stack, case.schedule)
    want = expect(stack)
    asked = recorder.count("call", "approve")
    seen = recorder.reasons_seen
    call = stack.action().tool_call
    calls = [c for s, _, c in recorder.seen if s == "approve"]
    fail_first(
        (
            stack.approver != "missing" and asked != 1,
            f"the approver was called {asked} times",
            "exactly once",
            f"trace {recorder.trace}",
        ),
        (
            bool(seen) and not (isinstance(seen[0], tuple) and seen[0] == want.asks),
            "the approver got other reasons",
            f"reasons {want.asks!r}",
            f"reasons {clip(safe_repr(seen[0] if seen else None), 200)}",
        ),
        (
            bool(calls) and calls[0] != call,
            "the approver got another call",
            repr(call),
            clip(safe_repr(calls[0] if calls else None), 200),
        ),
    )
    problem = _allowed_problem(stack, recorder, played, "P5")
    fail_first(
        (
            problem is not None,
            f"P5: {problem}",
            f"approver answer {stack.approver}: " + _decision_text(stack),
            show(played),
        )
    )
    await _check_refusals(kit, case)
    await _check_not_cached(kit, case)


async def _refusal(kit: Kit, stack: Stack) -> str:
    recorder, played = await kit.run(stack)
    outcome = outcome_of(played, "P5")
    fail_first(
        (
            recorder.count("call", "handler") > 0 or recorder.count("call", "wrap") > 0,
            f"a call refused ({stack.approver}) ran",
            "not executed",
            show(played),
        ),
        (
            status_problem(outcome, expect(stack)) is not None,
            f"a refusal ({stack.approver}): {status_problem(outcome, expect(stack))}",
            "NOT_EXECUTED, synthetic",
            show(played),
        ),
        (
            SECRET in str(outcome.observation),
            "a refusal holds the approver's exception message",
            "never the message",
            show(played),
        ),
    )
    return str(outcome.observation)


async def _check_refusals(kit: Kit, case: Case) -> None:
    base = case.stack
    texts = {kind: await _refusal(kit, replace(base, approver=kind)) for kind in _REFUSALS}
    other = replace(
        base,
        approver="false",
        ident=base.ident + 1,
        reasons=tuple(f"{base.reason(i)}-x" for i in range(len(base.deciders))),
    )
    again = await _refusal(kit, other)
    four = {
        "false": texts["false"],
        "missing": texts["missing"],
        "other": texts["none"],
        "raise": texts["raise"],
    }
    same = [(a, b) for a in four for b in four if a < b and four[a] == four[b]]
    fail_first(
        (
            texts["none"] != texts["one"] or texts["none"] != texts["yes"],
            "the approver's None, 1 and 'yes' gave different sentences",
            "one sentence for any other value",
            f"{texts['none']!r} / {texts['one']!r} / {texts['yes']!r}",
        ),
        (
            bool(same),
            f"the refusals {same[0] if same else ''} share one sentence",
            "four sentences of their own",
            repr(four),
        ),
        (
            "ApproverFault" not in texts["raise"],
            "the exception refusal does not name its class",
            "the class ApproverFault named",
            repr(texts["raise"]),
        ),
        (
            again != texts["false"],
            "the refusal sentence for False is not fixed",
            repr(texts["false"]),
            repr(again),
        ),
    )


async def _check_not_cached(kit: Kit, case: Case) -> None:
    stack = replace(case.stack, approver="true")
    executor, recorder = kit.build(stack)
    await kit.again(executor, recorder, stack)
    await kit.again(executor, recorder, stack)
    asked = recorder.count("call", "approve")
    fail_first(
        (
            asked != 1,
            f"the second identical call was asked {asked} times",
            "asked again (approvals are never cached)",
            f"trace {recorder.trace}",
        )
    )


async def check_P6(kit: Kit, case: Case) -> None:
    """P6: a denial is the executor's fixed sentence plus the DENY reasons in decider order,
    under 2,000 characters, nothing runs, and it is no stop."""
    stack = case.stack
    executor, recorder = kit.build(stack, case.schedule)
    played = await kit.again(executor, recorder, stack)
    outcome = outcome_of(played, "P6")
    want = expect(stack)
    text = outcome.observation if isinstance(outcome.observation, str) else ""
    ran = [e for e in recorder.trace if e[0] == "call" and e[1] in ("wrap", "handler", "post")]
    fail_first(
        (
            bool(ran),
            f"{ran[0] if ran else ''} was called for a denied call",
            "nothing runs",
            f"trace {recorder.trace}",
        ),
        (
            status_problem(outcome, want) is not None,
            f"P6: {status_problem(outcome, want)}",
            "NOT_EXECUTED, synthetic",
            show(played),
        ),
        (
            len(text) >= 2000,
            f"a denial of {len(text)} characters",
            "under 2,000 characters",
            show(played),
        ),
    )
    called = {p for e, s, p in recorder.trace if e == "call" and s == "decide"}
    received = tuple(
        stack.reason(i) for i, k in enumerate(stack.deciders) if k == "deny" and i in called
    )
    if received and sum(len(r) for r in received) < 1000:
        _check_reasons(text, received, played)
        alt = replace(
            stack, reasons=tuple(f"alt-{stack.reason(i)}" for i in range(len(stack.deciders)))
        )
        _, other = await kit.run(alt)
        prefix = text[: text.find(received[0])]
        alt_text = str(outcome_of(other, "P6").observation)
        fail_first(
            (
                alt_text[: alt_text.find("alt-" + received[0])] != prefix,
                "the sentence before the reasons is not fixed",
                repr(prefix),
                repr(alt_text),
            )
        )
    recorder.lenient = True
    later = replace(stack, ident=999)
    followed = await kit.again(executor, recorder, later)
    fail_first(
        (
            recorder.count("call", "handler") == 0,
            "a later allowed call did not run after a denial",
            "a denial is no stop",
            show(followed),
        )
    )


def _check_reasons(text: str, reasons: tuple[str, ...], played: Played) -> None:
    at = 0
    for reason in reasons:
        found = text.find(reason, at)
        if found < 0:
            raise PolicyViolation(
                f"the denial does not list the reason {reason!r} in decider order",
                expected=f"the reasons {list(reasons)} in order",
                actual=show(played),
            )
        at = found + len(reason)
