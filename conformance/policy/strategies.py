"""Hypothesis strategies for listener stacks, answers, release orders and cancellation points.

Everything shrinks towards the smallest case: fewer listeners, the first kind of each list,
short reasons, the FIFO release order, the earliest cancellation point. A failing example
therefore shrinks to the smallest stack and the shortest schedule that still fail, and
replays exactly from the seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.policy.checks_decide import Case
from conformance.policy.harness import Schedule, Stack

__all__ = ["cases", "schedules"]

VALID = ("abstain", "allow", "ask", "deny")
DEFAULTS = ("ALLOW", "ASK", "DENY")
WORDS = ("no-prod", "needs-review", "pii", "rate-limit", "shell")


def schedules(cancel: bool = False) -> st.SearchStrategy[Schedule]:
    ranks = st.lists(st.integers(0, 7), max_size=8).map(tuple)
    if not cancel:
        return st.builds(Schedule, ranks)
    return st.builds(
        Schedule, ranks, st.integers(0, 6), st.booleans(), st.booleans(), st.sampled_from((0, 1))
    )


@st.composite
def _reasons(draw: Any, count: int, long: bool) -> tuple[str, ...]:
    found = []
    for i in range(count):
        word = draw(st.sampled_from(WORDS))
        pad = draw(st.one_of(st.just(0), st.integers(600, 900))) if long else 0
        found.append(f"{word}-{i}" + "x" * pad)
    return tuple(found)


@st.composite
def stacks(
    draw: Any,
    deciders: Sequence[str] = VALID,
    *,
    sizes: tuple[int, int] = (0, 3),
    must: Sequence[str] = (),
    approvers: Sequence[str] = ("true",),
    wrappers: Sequence[str] = (),
    wrapper_max: int = 2,
    posts: Sequence[str] = (),
    post_sizes: tuple[int, int] = (0, 2),
    handlers: Sequence[str] = ("return",),
    calls: Sequence[str] = ("valid",),
    defaults: Sequence[str] = DEFAULTS,
    long: bool = False,
) -> Stack:
    kinds = (
        draw(st.lists(st.sampled_from(tuple(deciders)), min_size=sizes[0], max_size=sizes[1]))
        if deciders
        else []
    )
    for kind in must:
        kinds.insert(draw(st.integers(0, len(kinds))), kind)
    chain = (
        draw(st.lists(st.sampled_from(tuple(wrappers)), max_size=wrapper_max)) if wrappers else []
    )
    after = (
        draw(
            st.lists(st.sampled_from(tuple(posts)), min_size=post_sizes[0], max_size=post_sizes[1])
        )
        if posts
        else []
    )
    handler = draw(st.sampled_from(tuple(handlers)))
    if handler == "nonstr" and chain:
        handler = "return"  # what proceed() gives a wrapper for a non-str is not fixed
    return Stack(
        deciders=tuple(kinds),
        reasons=draw(_reasons(len(kinds), long)),
        approver=draw(st.sampled_from(tuple(approvers))),
        wrappers=tuple(chain),
        post=tuple(after),
        default=draw(st.sampled_from(tuple(defaults))),
        handler=handler,
        call=draw(st.sampled_from(tuple(calls))),
        ident=draw(st.integers(1, 50)),
    )


def cases(
    stack: st.SearchStrategy[Stack], *, cancel: bool = False, reorder: bool = False
) -> st.SearchStrategy[Case]:
    if not reorder:
        return st.builds(Case, stack, schedules(cancel))
    order = st.permutations(range(5)).map(tuple)
    return st.builds(Case, stack, schedules(), schedules(), order)
