"""The kit runs a clause's traps itself, before Hypothesis's generated examples
(`conformance._core.hypo.run_traps`), as Hypothesis's explicit phase would."""

from __future__ import annotations

import random

import pytest
from hypothesis import Phase, settings

from conformance._core.hypo import run_traps


def test_traps_run_in_order_with_random_seeded_to_zero_and_restored() -> None:
    seen: list[tuple[str, float]] = []
    run_traps(lambda trap: seen.append((trap, random.random())), ["a", "b"], settings())
    random.seed(0)
    first = random.random()
    assert seen == [("a", first), ("b", first)]
    random.seed(12345)
    expected = random.random()
    random.seed(12345)
    run_traps(lambda trap: None, ["a"], settings())
    assert random.random() == expected


def test_the_first_failing_trap_stops_the_rest() -> None:
    ran: list[int] = []

    def check(trap: int) -> None:
        ran.append(trap)
        if trap == 2:
            raise AssertionError("trap 2")

    with pytest.raises(AssertionError, match="trap 2"):
        run_traps(check, [1, 2, 3], settings())
    assert ran == [1, 2]


def test_no_trap_runs_when_the_explicit_phase_is_off() -> None:
    ran: list[int] = []
    run_traps(ran.append, [1, 2], settings(phases=[Phase.generate]))
    assert ran == []
