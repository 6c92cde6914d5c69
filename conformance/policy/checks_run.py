"""The checks of the running side: P7-P10 and P12 (one snapshot, wrappers, cancellation,
post-processing, timing)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from conformance.policy import judge
from conformance.policy.checks_decide import Case
from conformance.policy.harness import SECRET, TOOL, Played, Recorder
from conformance.policy.oracle import expect
from polyloop import ActionOutcome, ToolCall

__all__ = ["check_P7", "check_P8", "check_P9", "check_P10", "check_P12"]


async def check_P7(kit: judge.Kit, case: Case) -> None:
    """P7: every listener gets the action's own ToolCall; each handler entry its own plain
    copy of the arguments; only the call's own tool runs."""
    stack = case.stack
    action = stack.action()
    executor, recorder = kit.build(stack, case.schedule)
    from conformance.policy.harness import play

    await play(executor, recorder, action, kit.touch, kit.deadline)
    call = action.tool_call
    other = [(s, p) for s, p, c in recorder.seen if c is not call]
    wanted = stack.arguments()
    wrong = [a for a in recorder.handler_args if type(a) is not dict or a != wanted]
    judge.fail_first(
        (
            bool(other),
            f"the {other[0][0] if other else ''} listener at position "
            f"{other[0][1] if other else ''} did not receive the action's own ToolCall",
            "the action's ToolCall object itself",
            "another object",
        ),
        (
            bool(wrong),
            "a handler entry did not receive a plain dict equal to the arguments",
            repr(wanted),
            repr(wrong[0] if wrong else None),
        ),
        (
            bool(recorder.handler_problems),
            f"the handler {recorder.handler_problems[:1]}",
            "its own plain copy",
            "a read-only or shared mapping",
        ),
        (
            call != ToolCall(name=TOOL, arguments=wanted),
            "what the handler mutated reached the recorded ToolCall",
            repr(wanted),
            repr(call),
        ),
        (
            recorder.other_entered > 0,
            "another tool's handler ran",
            f"only {TOOL}",
            "other_tool entered",
        ),
    )


async def check_P8(kit: judge.Kit, case: Case) -> None:
    """P8: wrappers nest (wrappers[0] outermost), proceed() enters the handler once each, and
    the chain's result maps as a handler's."""
    stack = case.stack
    recorder, played = await kit.run(stack, case.schedule)
    want = expect(stack)
    entries = recorder.count("call", "handler")
    if want.kind == "nonstr":
        raised = played.raised
        judge.fail_first(
            (
                not isinstance(raised, TypeError) or TOOL not in str(raised),
                "a non-str chain result did not raise TypeError naming the tool",
                f"TypeError naming {TOOL} (E9)",
                judge.show(played),
            )
        )
    else:
        outcome = judge.outcome_of(played, "P8")
        problem = judge.status_problem(outcome, want)
        judge.fail_first(
            (
                problem is not None,
                f"P8: {problem}",
                f"{want.status.name if want.status else ''} {want.observation!r}",
                judge.show(played),
            )
        )
    judge.fail_first(
        (
            entries != want.entries,
            f"the handler was entered {entries} times",
            f"{want.entries} (once per proceed() that reaches it)",
            f"trace {recorder.trace}",
        )
    )
    trace = recorder.trace
    firsts = {
        p: trace.index(("call", "wrap", p))
        for p in range(len(stack.wrappers))
        if ("call", "wrap", p) in trace
    }
    ends = {
        p: max(i for i, e in enumerate(trace) if e == ("end", "wrap", p))
        for p in firsts
        if ("end", "wrap", p) in trace
    }
    for outer in firsts:
        for inner in firsts:
            if outer < inner and (
                firsts[inner] < firsts[outer]
                or (outer in ends and inner in ends and ends[inner] > ends[outer])
            ):
                raise judge.PolicyViolation(
                    f"wrapper {inner} is not nested inside wrapper {outer}",
                    expected="wrappers[0] outermost: it starts first and ends last",
                    actual=f"trace {trace}",
                )


async def check_P9(kit: judge.Kit, case: Case) -> None:
    """P9: cancelled at any stage, the running listener is sent the cancellation and awaited,
    nothing runs afterwards, and execute raises CancelledError. Cancellations the caller's task
    swallowed before it called execute are not this call's: the call then runs as the stack says,
    and a cancellation while it runs still counts."""
    recorder, played = await kit.run(case.stack, case.schedule)
    mark = played.cancel_mark
    if mark is None:
        if case.schedule.stale:
            _check_not_cancelled(case, recorder, played)
        return  # the call ended before the chosen gate: nothing cancelled, nothing to judge
    trace = recorder.trace
    stage, position = played.cancelled_gate or ("", 0)
    after = trace[mark:]
    got = ("cancelled", stage, position) in after
    ended = ("end", stage, position) in trace[mark : played.end_mark]
    late = [e for e in after if e[0] == "call" and e[1] in ("handler", "post")]
    judge.fail_first(
        (
            not isinstance(played.raised, asyncio.CancelledError),
            "execute did not raise CancelledError after it was cancelled",
            "CancelledError",
            judge.show(played),
        ),
        (
            bool(late),
            f"{late[0] if late else ''} was called after the cancellation",
            "no handler entered, no post-processor called afterwards",
            f"trace {trace}",
        ),
        (
            not got,
            f"the {stage} at position {position} was not sent the cancellation",
            "the running listener is sent the cancellation",
            f"trace {trace}",
        ),
        (
            not ended,
            f"execute ended before the {stage} at position {position} did",
            "the running listener awaited until it ends",
            f"trace {trace}",
        ),
    )


def _check_not_cancelled(case: Case, recorder: Recorder, played: Played) -> None:
    """A call made after its task swallowed earlier cancellations, and not cancelled while it
    ran, ends as the same stack ends in a fresh task (P9 starts once the task awaiting execute
    is cancelled; before that, E5/E8 and P2-P8, P10 decide)."""
    want = expect(case.stack)
    stale = case.schedule.stale
    if isinstance(played.raised, asyncio.CancelledError):
        raise judge.PolicyViolation(
            f"execute raised CancelledError though nothing cancelled the task while it ran "
            f"(the task had swallowed {stale} cancellation{'s' if stale > 1 else ''} before it "
            "called execute)",
            expected=f"{_wanted(want)}, as in a fresh task",
            actual=f"{judge.show(played)}; trace {recorder.trace}",
        )
    outcome = judge.outcome_of(played, "P9")
    problem = judge.status_problem(outcome, want)
    entries = recorder.count("call", "handler")
    judge.fail_first(
        (
            problem is not None or entries != want.entries,
            f"a call made after its task swallowed an earlier cancellation ended otherwise: "
            f"{problem or f'the handler was entered {entries} times'}",
            f"{_wanted(want)}, handler entered {want.entries} times, as in a fresh task",
            f"{judge.show(played)}; trace {recorder.trace}",
        )
    )


async def check_P10(kit: judge.Kit, case: Case) -> None:
    """P10: post-processors reshape EXECUTED outcomes in order; a failing one withholds the
    observation behind a fixed sentence naming its position (and class)."""
    stack = case.stack
    recorder, played = await kit.run(stack, case.schedule)
    want = expect(stack)
    outcome = judge.outcome_of(played, "P10")
    inputs = tuple(text for _, text in recorder.post_inputs)
    problem = judge.status_problem(outcome, want)
    called = [p for e, s, p in recorder.trace if e == "call" and s == "post"]
    judge.fail_first(
        (problem is not None, f"P10: {problem}", _wanted(want), judge.show(played)),
        (
            len(called) != want.posts,
            f"post-processors called: {called}",
            f"the first {want.posts}",
            f"trace {recorder.trace}",
        ),
        (
            inputs != want.post_inputs,
            "a post-processor got another observation",
            repr(want.post_inputs),
            repr(inputs),
        ),
    )
    if want.kind != "withheld" or want.fault is None:
        return
    text = str(outcome.observation)
    leaked = [i for i in want.post_inputs if i and i in text]
    judge.fail_first(
        (
            not judge.names_position(text, want.fault),
            f"the sentence does not name post-processor position {want.fault}",
            f"the position {want.fault}",
            judge.show(played),
        ),
        (
            want.fault_class is not None and want.fault_class not in text,
            f"the sentence does not name {want.fault_class}",
            f"the class {want.fault_class}",
            judge.show(played),
        ),
        (
            SECRET in text,
            "the sentence holds the exception's message",
            "never the message",
            judge.show(played),
        ),
        (
            bool(leaked),
            "the withheld sentence holds an unprocessed observation",
            "never the observation it was to reshape",
            judge.show(played),
        ),
    )
    _, other = await kit.run(replace(stack, ident=stack.ident + 1))
    again = other.returned
    judge.fail_first(
        (
            isinstance(again, ActionOutcome) and again.observation != text,
            "the withheld sentence is not fixed",
            repr(text),
            judge.show(other),
        )
    )


def _wanted(want: object) -> str:
    status = getattr(want, "status", None)
    observation = getattr(want, "observation", None)
    return f"{status.name if status else ''} {observation!r}" + (
        " (synthetic)" if getattr(want, "synthetic", False) else ""
    )


async def check_P12(kit: judge.Kit, case: Case) -> None:
    """P12: the same stack gives the same outcome whatever order its listeners finish in."""
    _, first = await kit.run(case.stack, case.schedule)
    _, second = await kit.run(case.stack, case.second)
    one, two = first.returned, second.returned
    if first.raised is not None or second.raised is not None:
        same = type(first.raised) is type(second.raised)
    else:
        same = one == two
    judge.fail_first(
        (
            not same,
            "the outcome depends on the order in which listeners finished",
            f"{judge.show(first)} (with {case.schedule.describe()})",
            f"{judge.show(second)} (with {case.second.describe()})",
        )
    )
