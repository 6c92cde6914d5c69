"""One property per batch clause (B1-B18): its cases, its check, and the hand-picked traps
that every run tries first.

`PROPERTIES` maps each clause ID to its `BatchProperty`, as `conformance.executor.properties`
does for V and E: the catalog row, the report line, the `BatchExecutorContract` test and the
check are found by one ID. Adding a B clause is one row here plus its check (in `checks` or
`checks_stop`) and its traps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.batch import checks, checks_stop
from conformance.batch.drive import Schedule
from conformance.batch.harness import KINDS, Call
from conformance.batch.strategies import schedules, together
from conformance.batch.together import Together

__all__ = ["BLACK_BOX", "PROPERTIES", "BatchProperty"]


@dataclass(frozen=True, kw_only=True)
class BatchProperty:
    clause: str
    cases: Callable[[], st.SearchStrategy[Any]]
    check: Callable[[Any, Any], None]
    traps: Sequence[Any] = field(default_factory=tuple)


C = Call
ALL = KINDS
PLAIN = ("safe", "excl", "ask_true", "bad")
OVERLAP = ("safe", "safe", "ask_true", "excl")


def _s(*calls: Call, **kw: Any) -> Schedule:
    return Schedule(calls=tuple(calls), **kw)


_TRAPS: dict[str, list[Any]] = {
    "B1": [
        _s(),
        _s(C("safe"), C("safe"), cap=2, order=(1,)),
        _s(C("excl"), C("bad"), C("safe")),
        # past 256 calls, where CPython stops caching ints: a count compared with `is` never ends
        _s(*(C("safe"),) * 300, cap=4),
    ],
    "B2": [
        _s(C("safe"), C("safe"), cap=2, journal="fast", order=(1,)),
        _s(C("safe"), C("safe"), C("safe"), cap=3, journal="fast", order=(0, 2)),
        _s(C("safe"), C("safe"), journal="fast", cap=2, order=(1,), cancel_at=1),
    ],
    "B3": [
        _s(C("safe"), C("safe"), C("safe"), cap=3),
        # call 1's journal record is released first: a runtime that starts every call's task
        # at once (and awaits started inside it) enters call 1 before call 0
        _s(C("safe"), C("safe"), cap=2, journal="slow", order=(1,)),
    ],
    "B4": [
        _s(C("safe", "raise"), C("safe", "env"), C("bad"), C("code"), C("unknown"), cap=2),
        _s(C("excl", "raise"), C("ask_raise"), C("finish")),
    ],
    "B5": [
        _s(C("safe"), C("safe"), cap=1, journal="fast", cancel_at=0),
        _s(C("safe", "env"), C("safe"), cap=1, journal="fast"),
        _s(C("safe", "base"), C("safe"), cap=1, journal="fast"),
    ],
    "B6": [
        _s(C("safe"), C("excl"), C("safe"), cap=4),
        _s(C("excl"), C("safe"), cap=4),
        _s(C("safe"), C("finish"), cap=4),
    ],
    "B7": [
        _s(C("safe"), C("safe"), C("safe"), cap=2),
        _s(C("safe"), C("safe"), cap=1),
        # past 256, where CPython stops caching ints: `len(running) is cap` never holds
        _s(*(C("safe"),) * 300, cap=257),
    ],
    "B8": [
        _s(C("safe"), C("safe"), C("safe"), cap=2, order=(0,)),
        _s(C("safe"), C("safe"), C("safe"), C("safe"), cap=2, order=(1, 0)),
        _s(C("safe"), C("safe"), cap=2),
    ],
    "B9": [
        _s(C("safe"), C("ask_truthy"), cap=4),
        _s(C("ask_raise"), C("safe"), cap=4),
        _s(C("ask_true"), C("ask_true"), C("bad"), cap=4, journal="fast"),
    ],
    "B10": [
        _s(C("safe"), C("bad"), C("safe"), cap=2),
        _s(C("safe"), C("code"), C("unknown"), C("safe"), cap=2),
        _s(C("safe"), C("bad"), C("safe"), C("safe"), cap=2, order=(0,)),
    ],
    "B11": [
        _s(C("safe"), C("safe"), cap=2, mutate=True),
        _s(C("excl"), C("excl"), mutate=True),
        _s(C("safe"), C("safe", twin=True), cap=2, mutate=True),
    ],
    "B12": [
        _s(C("safe", "raise"), C("safe"), C("safe"), cap=2, order=(0,)),
        _s(C("excl", "raise"), C("safe")),
    ],
    "B13": [
        _s(C("safe", "env"), C("safe"), C("safe"), cap=2, order=(0,), journal="fast"),
        _s(C("safe"), C("safe", "env"), C("excl"), cap=2, order=(1,), journal="fast"),
        # two ENV_ERRORs finishing out of model order while a later call waits: k is call 0
        _s(C("safe", "env"), C("safe", "env"), C("excl"), cap=2, order=(1,)),
    ],
    "B14": [
        _s(C("safe"), C("safe"), C("safe"), cap=2, journal="fast", cancel_at=0),
        _s(C("safe"), C("safe"), cap=2, journal="fast", order=(0,), cancel_at=1),
        _s(C("safe", "ignore_cancel"), C("safe"), cap=1, journal="fast", cancel_at=0),
        _s(C("safe"), C("safe"), cap=2, cancel_at=0, cancel_twice=True),
        # a lone call, no journal, whose handler swallows the cancellation: still raised
        _s(C("safe", "ignore_cancel"), cancel_at=0),
    ],
    "B15": [
        _s(C("safe", "base"), C("safe"), C("safe"), cap=2, journal="fast", order=(0,)),
        _s(C("safe", "cancel_self"), C("safe"), cap=2, journal="fast", order=(0,)),
    ],
    "B16": [
        _s(C("safe", "nonstr"), C("safe"), C("safe"), cap=2, journal="fast", order=(0,)),
        _s(
            C("safe"),
            C("safe"),
            C("safe"),
            cap=2,
            journal="fast",
            fault=("committed", 0),
            order=(0,),
        ),
        _s(C("safe"), C("safe"), cap=2, journal="fast", fault=("started", 1)),
    ],
    "B17": [
        _s(C("safe"), C("safe"), C("bad"), cap=2, journal="fast"),
        _s(C("safe"), C("safe"), cap=2, journal="slow", order=(1, 0)),
    ],
    "B18": [
        Together(batches=((C("excl"),), (C("excl"),)), cap=1),
        Together(batches=((C("safe"), C("safe")), (C("safe"),)), cap=2),
        Together(batches=((C("safe"),), (C("safe"),)), cap=1, order=((1, 0),)),
    ],
}


def _row(clause: str, cases: Callable[[], st.SearchStrategy[Any]], module: Any) -> BatchProperty:
    return BatchProperty(
        clause=clause,
        cases=cases,
        check=getattr(module, f"check_{clause}"),
        traps=tuple(_TRAPS.get(clause, ())),
    )


A, K = checks, checks_stop
PROPERTIES: Mapping[str, BatchProperty] = {
    row.clause: row
    for row in (
        _row("B1", lambda: schedules(ALL, ("return", "raise", "env")), A),
        _row(
            "B2",
            lambda: schedules(
                ALL,
                ("return", "raise", "env", "ignore_cancel"),
                journals=("fast", "slow"),
                cancel="maybe",
            ),
            A,
        ),
        _row(
            "B3",
            lambda: schedules(("safe", "safe", "ask_true", "excl", "bad"), ("return", "raise")),
            A,
        ),
        _row(
            "B4",
            lambda: schedules(ALL, ("return", "raise", "env", "ignore_cancel"), cancel="maybe"),
            A,
        ),
        _row(
            "B5",
            lambda: schedules(
                PLAIN,
                ("return", "env", "base", "ignore_cancel"),
                journals=("fast",),
                cancel="maybe",
            ),
            A,
        ),
        _row(
            "B6",
            lambda: schedules(
                ("safe", "excl", "ask_true", "ask_false", "finish"), journals=("none", "fast")
            ),
            A,
        ),
        _row("B7", lambda: schedules(OVERLAP, caps=(1, 3)), A),
        _row(
            "B8",
            lambda: schedules(
                ("safe", "safe", "safe", "ask_true", "excl"),
                ("return", "return", "raise"),
                caps=(1, 3),
                journals=("none", "fast"),
            ),
            A,
        ),
        _row(
            "B9",
            lambda: schedules(("ask_true", "ask_false", "ask_raise", "ask_truthy", "safe", "bad")),
            A,
        ),
        _row(
            "B10",
            lambda: schedules(
                ("safe", "safe", "excl", "bad", "unknown", "code"),
                min_size=2,
                caps=(1, 3),
                journals=("none", "fast"),
            ),
            K,
        ),
        _row(
            "B11",
            lambda: schedules(
                ("safe", "ask_true", "excl"),
                min_size=1,
                max_size=4,
                journals=("none", "fast"),
                mutate=True,
            ),
            K,
        ),
        _row(
            "B12",
            lambda: schedules(
                ("safe", "safe", "excl", "ask_true"),
                ("return", "raise"),
                min_size=2,
                journals=("none", "fast"),
            ),
            K,
        ),
        _row("B13", lambda: schedules(PLAIN, ("return", "env", "env", "raise")), K),
        _row(
            "B14",
            lambda: schedules(
                PLAIN,
                ("return", "raise", "ignore_cancel"),
                journals=("fast", "fast", "slow", "none"),
                cancel="always",
            ),
            K,
        ),
        _row(
            "B15",
            lambda: schedules(PLAIN, ("return", "base", "cancel_self"), journals=("fast", "none")),
            K,
        ),
        _row(
            "B16",
            lambda: schedules(
                PLAIN, ("return", "return", "nonstr"), journals=("fast", "slow", "none"), fault=True
            ),
            K,
        ),
        _row(
            "B17",
            lambda: schedules(
                ALL, ("return", "raise", "env"), journals=("fast", "slow"), cancel="maybe"
            ),
            K,
        ),
        _row("B18", together, K),
    )
}
"""Clause ID -> its property, in contract order."""

BLACK_BOX = ("B1", "B2")
"""What a black-box run (an executor over real handlers) can judge from outcomes and the
journal alone."""
