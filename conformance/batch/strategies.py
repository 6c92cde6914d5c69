"""Hypothesis strategies for batches, caps, release orders, cancellation points and faults.

Everything shrinks towards the smallest case: fewer calls, the first kinds and behaviours of
each list, a cap of 1, no journal, a release order of no steps (every gate then opens at the
end), no cancellation. A failing schedule therefore shrinks to the smallest batch and the
shortest schedule that still fail, and replays exactly from the seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from conformance.batch.drive import Schedule
from conformance.batch.harness import Call
from conformance.batch.together import Together

__all__ = ["batches", "schedules", "together"]


def batches(
    kinds: Sequence[str], behaviours: Sequence[str], min_size: int = 0, max_size: int = 6
) -> st.SearchStrategy[tuple[Call, ...]]:
    return _batches(tuple(kinds), tuple(behaviours), min_size, max_size)


@lru_cache(maxsize=128)
def _batches(
    kinds: tuple[str, ...], behaviours: tuple[str, ...], min_size: int, max_size: int
) -> st.SearchStrategy[tuple[Call, ...]]:
    # One strategy object per shape: `schedules` draws a batch every example, and a new
    # strategy object is validated again each time it is built.
    call = st.builds(Call, st.sampled_from(kinds), st.sampled_from(behaviours))
    return st.lists(call, min_size=min_size, max_size=max_size).map(tuple)


@st.composite
def schedules(
    draw: Any,
    kinds: Sequence[str],
    behaviours: Sequence[str] = ("return",),
    *,
    min_size: int = 0,
    max_size: int = 6,
    caps: tuple[int, int] = (1, 4),
    journals: Sequence[str] = ("none", "fast", "slow"),
    cancel: str = "never",
    fault: bool = False,
    mutate: bool = False,
) -> Schedule:
    """A batch and its schedule. `cancel`: ``never``, ``maybe`` or ``always``."""
    calls = draw(batches(kinds, behaviours, min_size, max_size))
    if mutate and len(calls) > 1 and draw(st.booleans()):
        # Identical calls (same tool, same arguments): each still gets its own copy (B11).
        twins = draw(st.lists(st.booleans(), min_size=len(calls) - 1, max_size=len(calls) - 1))
        made = [calls[0]]
        for twin, call in zip(twins, calls[1:], strict=True):
            before = made[-1]
            again = Call(before.kind, before.do, twin=True)
            made.append(again if twin and not before.twin else call)
        calls = tuple(made)
    cap = draw(st.integers(*caps))
    journal = draw(st.sampled_from(tuple(journals)))
    accepted = [i for i, call in enumerate(calls) if not call.rejected]
    steps = draw(st.integers(0, len(accepted)))
    # Half the time the gates open last call first: calls then finish against model order
    # while earlier ones still run (two ENV_ERRORs out of order, B13), as a shuffle rarely does.
    backwards = draw(st.booleans())
    shuffled = draw(st.permutations(accepted)) if accepted and not backwards else accepted[::-1]
    order = tuple(shuffled[:steps])
    cancel_at: int | None = None
    twice = False
    if cancel == "always" or (cancel == "maybe" and draw(st.booleans())):
        cancel_at = draw(st.integers(0, len(order)))
        twice = draw(st.booleans())
    failing: tuple[str, int] | None = None
    if fault and journal != "none" and calls and draw(st.booleans()):
        failing = (
            draw(st.sampled_from(("started", "committed"))),
            draw(st.integers(0, len(calls) - 1)),
        )
    return Schedule(
        calls=calls,
        cap=cap,
        journal=journal,
        order=order,
        cancel_at=cancel_at,
        cancel_twice=twice,
        fault=failing,
        mutate=mutate,
    )


@st.composite
def together(
    draw: Any,
    kinds: Sequence[str] = ("safe", "excl", "ask_true", "bad"),
    behaviours: Sequence[str] = ("return", "raise", "env"),
) -> Together:
    """Two or three batches of one to three calls, and an interleaved release order."""
    groups = draw(st.lists(batches(kinds, behaviours, 1, 3), min_size=2, max_size=3))
    cap = draw(st.integers(1, 3))
    journal = draw(st.booleans())
    slots = [
        (b, i)
        for b, calls in enumerate(groups)
        for i, call in enumerate(calls)
        if not call.rejected
    ]
    steps = draw(st.integers(0, len(slots)))
    order = tuple(draw(st.permutations(slots))[:steps]) if slots else ()
    return Together(batches=tuple(groups), cap=cap, journal=journal, order=order)
