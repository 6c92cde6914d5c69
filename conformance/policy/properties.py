"""One property per P clause: the examples it draws, its check and its traps (examples run
first on every seed: the smallest stacks each clause's commonest bugs show on)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.policy import checks_decide as d
from conformance.policy import checks_run as r
from conformance.policy.batch import BatchCase, Plan, batch_cases, check_P11
from conformance.policy.checks_decide import Case
from conformance.policy.harness import Schedule, Stack
from conformance.policy.judge import Kit
from conformance.policy.strategies import VALID, cases, stacks

__all__ = ["PROPERTIES", "PolicyProperty"]

Check = Callable[[Kit, Any], Awaitable[None]]


@dataclass(frozen=True)
class PolicyProperty:
    clause: str
    cases: Callable[[], st.SearchStrategy[Any]]
    check: Check
    traps: tuple[Any, ...] = ()


def _p(clause: str, strategy: Callable[[], Any], check: Check, *traps: Any) -> PolicyProperty:
    return PolicyProperty(clause=clause, cases=strategy, check=check, traps=traps)


def _one_fault(stack: Stack) -> st.SearchStrategy[Stack]:
    from dataclasses import replace

    def put(kind: str, at: int) -> Stack:
        kinds = list(stack.deciders)
        kinds.insert(at, kind)
        reasons = list(stack.reasons)
        reasons.insert(at, "fault")
        return replace(stack, deciders=tuple(kinds), reasons=tuple(reasons))

    return st.builds(
        put,
        st.sampled_from(("raise", "bool", "str", "bare", "halt")),
        st.integers(0, len(stack.deciders)),
    )


def _same_order(case: Case) -> Case:
    return Case(case.stack, case.schedule, case.second)


def _cancel_traps() -> tuple[Case, ...]:
    wrapped = Stack(deciders=("allow", "ask"), approver="true", wrappers=("pass",), post=("tag",))
    bare = Stack(deciders=("ask",), approver="true", post=("tag",))  # no wrapper to check
    fresh = tuple(
        Case(stack, Schedule(cancel_at=at, swallow=swallow, convert=convert))
        for stack, gates in ((wrapped, 6), (bare, 4))
        for swallow, convert in ((True, False), (False, False), (False, True))
        for at in range(gates)
    )
    # The caller's task swallowed a cancellation before it called execute: not this call's.
    chain_only = Stack(wrappers=("pass",), post=("tag",))
    stale = (
        Case(wrapped, Schedule(stale=1)),
        Case(chain_only, Schedule(stale=1)),
        Case(wrapped, Schedule(cancel_at=0, swallow=True, stale=1)),
        Case(wrapped, Schedule(cancel_at=3, swallow=True, stale=1)),
    )
    return fresh + stale


_LATE = Schedule(ranks=(3, 2, 1, 0))
"""Later arrivals first: concurrent listeners finish in the reverse of their start order."""

PROPERTIES: dict[str, PolicyProperty] = {
    p.clause: p
    for p in (
        _p(
            "P1",
            lambda: cases(
                stacks(
                    (*VALID, "raise", "bool"),
                    approvers=("true", "false", "missing"),
                    wrappers=("pass",),
                    posts=("tag",),
                    calls=("nocall", "unknown", "invalid"),
                )
            ),
            d.check_P1,
            Case(Stack(deciders=("allow",), call="invalid")),
            Case(Stack(deciders=("ask",), approver="true", call="nocall")),
        ),
        _p(
            "P2",
            lambda: cases(
                stacks(
                    VALID,
                    approvers=("true", "false", "missing"),
                    wrappers=("pass", "retry", "short"),
                    posts=("tag",),
                    post_sizes=(0, 3),
                    handlers=("return", "raise", "env"),
                )
            ),
            d.check_P2,
            Case(Stack(deciders=("allow", "ask"), approver="true", post=("tag", "tag")), _LATE),
            Case(Stack(deciders=("allow",), post=("tag", "tag", "tag"))),
        ),
        _p(
            "P3",
            lambda: cases(stacks(VALID, sizes=(0, 4), approvers=("true", "false")), reorder=True),
            d.check_P3,
            Case(Stack(deciders=("deny", "allow")), Schedule(), _LATE, (1, 0)),
            Case(Stack(deciders=("allow", "deny", "allow")), _LATE, Schedule(), (2, 1, 0)),
            Case(Stack(deciders=("ask", "allow"), approver="false"), _LATE, Schedule(), (1, 0)),
            Case(Stack(deciders=("allow",), default="DENY"), Schedule(), Schedule(), (0,)),
            Case(Stack(deciders=("abstain",), default="DENY"), Schedule(), Schedule(), (0,)),
            Case(Stack(default="DENY"), Schedule(), Schedule(), ()),
            Case(Stack(default="ASK", approver="false"), Schedule(), Schedule(), ()),
            # A raise counts as DENY (P4): deciding may stop right after the first DENY, or
            # else every decider is called, so not at a raise that follows a DENY.
            Case(Stack(deciders=("deny", "raise", "allow")), Schedule(), Schedule(), (2, 1, 0)),
        ),
        _p(
            "P4",
            lambda: cases(
                stacks(("abstain", "allow", "ask"), must=(), sizes=(0, 3)).flatmap(_one_fault)
            ),
            d.check_P4,
            Case(Stack(deciders=("raise", "allow"))),
            Case(Stack(deciders=("allow", "bool"))),
            Case(Stack(deciders=("allow", "halt"))),
        ),
        _p(
            "P5",
            lambda: cases(
                stacks(
                    ("abstain",),
                    must=("ask",),
                    sizes=(0, 2),
                    approvers=("true", "false", "missing", "none", "one", "yes", "raise"),
                    wrappers=("pass",),
                    wrapper_max=1,
                    posts=("tag",),
                    post_sizes=(0, 1),
                )
            ),
            d.check_P5,
            Case(Stack(deciders=("ask",), approver="none")),
            Case(Stack(deciders=("ask", "ask"), approver="true")),
        ),
        _p(
            "P6",
            lambda: cases(
                stacks(
                    VALID,
                    must=("deny",),
                    approvers=("true", "false", "missing"),
                    wrappers=("pass",),
                    posts=("tag",),
                    long=True,
                )
            ),
            d.check_P6,
            Case(Stack(deciders=("deny", "allow", "deny"), reasons=("pii-0", "x-1", "shell-2"))),
            Case(
                Stack(
                    deciders=("deny",) * 3,
                    reasons=tuple(f"long-{i}" + "x" * 900 for i in range(3)),
                )
            ),
            Case(Stack(deciders=("deny",), post=("tag",))),
        ),
        _p(
            "P7",
            lambda: cases(
                stacks(
                    ("abstain", "allow", "ask"),
                    wrappers=("pass", "retry", "twice"),
                    posts=("tag",),
                    handlers=("return", "raise"),
                )
            ),
            r.check_P7,
            Case(Stack(deciders=("ask",), approver="true", wrappers=("twice",), post=("tag",))),
        ),
        _p(
            "P8",
            lambda: cases(
                stacks(
                    ("allow",),
                    sizes=(0, 1),
                    wrappers=("pass", "retry", "twice", "short", "shortnonstr", "raise"),
                    wrapper_max=3,
                    handlers=("return", "raise", "env", "nonstr"),
                    defaults=("ALLOW",),
                )
            ),
            r.check_P8,
            Case(Stack(wrappers=("retry",), handler="raise")),
            Case(Stack(wrappers=("pass", "pass"), handler="env")),
            Case(Stack(wrappers=("pass", "short"))),
        ),
        _p(
            "P9",
            lambda: cases(
                stacks(
                    ("abstain", "allow", "ask"),
                    sizes=(0, 2),
                    wrappers=("pass", "retry"),
                    posts=("tag",),
                    defaults=("ALLOW",),
                ),
                cancel=True,
            ),
            r.check_P9,
            *_cancel_traps(),
        ),
        _p(
            "P10",
            lambda: cases(
                stacks(
                    (),
                    sizes=(0, 0),
                    wrappers=("pass",),
                    wrapper_max=1,
                    posts=("tag", "raise", "nonstr"),
                    post_sizes=(1, 3),
                    handlers=("return", "raise", "env"),
                    defaults=("ALLOW",),
                )
            ),
            r.check_P10,
            Case(Stack(post=("tag", "raise", "tag"))),
            Case(Stack(post=("nonstr",), handler="raise")),
            Case(Stack(post=("tag",), handler="env")),
        ),
        _p(
            "P11",
            batch_cases,
            check_P11,
            BatchCase((Plan(answers=("ask",)), Plan(answers=("allow",))), 1, 2, _LATE),
            BatchCase((Plan(answers=("deny",)), Plan(valid=False), Plan(answers=("allow",))), 1, 3),
        ),
        _p(
            "P12",
            lambda: cases(
                stacks(
                    (*VALID, "raise", "bool"),
                    sizes=(0, 4),
                    approvers=("true", "false", "raise"),
                    wrappers=("pass", "retry"),
                    posts=("tag", "raise"),
                    handlers=("return", "raise", "env"),
                ),
                reorder=True,
            ).map(_same_order),
            r.check_P12,
            Case(Stack(deciders=("deny", "deny"), reasons=("a-0", "b-1")), Schedule(), _LATE),
            Case(Stack(deciders=("raise", "bool")), Schedule(), _LATE),
        ),
    )
}
