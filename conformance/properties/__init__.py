"""One property per contract clause, all of one shape.

A `Property` pairs a strategy for scenarios (tools, the actions sent to them, what their
handlers do) with a check that runs a scenario through a `Trial` and raises `Violation` when
the executor breaks *that* clause — and only that clause, so a report points at the rule that
was broken. `PROPERTIES` maps each clause ID to its property, like a keyword table: the
catalog row, the report line, the `ExecutorContract` test and the check are found by one ID.

Every check judges the executor through the oracle and the scripted handlers' call log, never
through the executor's own account of what it did. The checks live with their hand-picked
scenarios in `validation` (V1-V8) and `dispatch` (E1-E15); `scenarios` holds the shared types
and strategies, `shared` the pieces several checks use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from conformance.properties import dispatch, validation
from conformance.properties.scenarios import (
    ActionKind,
    Property,
    Scenario,
    ScenarioSource,
    Violation,
    many,
    repeated,
    single,
)
from conformance.properties.shared import nothing_judged

__all__ = ["PROPERTIES", "Property", "Scenario", "ScenarioSource", "Violation", "black_box_clauses"]


@lru_cache(maxsize=1)
def _traps() -> dict[str, list[Scenario]]:
    return {**validation.traps(), **dispatch.traps()}


def _examples(clause: str) -> Callable[[], Sequence[Scenario]]:
    return lambda: _traps().get(clause, [])


VALID, INVALID, BEYOND, CODE = ActionKind
_ALL_ACTIONS = (VALID, VALID, INVALID, BEYOND, CODE)
# E8's commonest bug is a handler run for a rejected call, so rejected calls are drawn as often
# as accepted ones (with one draw in five, a derandomized run on some Pythons never drew one).
_E8_ACTIONS = (VALID, VALID, INVALID, INVALID, BEYOND, CODE)
_E8_BEHAVIOURS = ("text", "environment_error", "error", "error_like", "unprintable", "non_str")

PROPERTIES: Mapping[str, Property] = {
    p.clause: p
    for p in (
        Property(
            clause="V1",
            scenarios=single([VALID], ["text", "yield"]),
            check=validation.check_V1,
            black_box=True,
            examples=_examples("V1"),
        ),
        Property(
            clause="V2",
            scenarios=single([INVALID], aims=["V2"], padded=True),
            check=validation.check_V2,
            black_box=True,
            aim="V2",
            examples=_examples("V2"),
        ),
        Property(
            clause="V3",
            scenarios=single([INVALID], aims=["V3"]),
            check=validation.check_V3,
            black_box=True,
            aim="V3",
            examples=_examples("V3"),
        ),
        Property(
            clause="V4",
            scenarios=single([INVALID], aims=["V4"], tools_aim="V4"),
            check=validation.check_V4,
            black_box=True,
            aim="V4",
        ),
        Property(
            clause="V5",
            scenarios=single([INVALID], aims=["V5"], tools_aim="V5"),
            check=validation.check_V5,
            black_box=True,
            aim="V5",
        ),
        Property(
            clause="V6",
            scenarios=single([INVALID], aims=["V6"], tools_aim="V6"),
            check=validation.check_V6,
            black_box=True,
            aim="V6",
            examples=_examples("V6"),
        ),
        Property(
            clause="V7",
            scenarios=single([BEYOND], ["text", "error"]),
            check=validation.check_V7,
            black_box=True,
        ),
        Property(
            clause="V8",
            scenarios=single([INVALID, INVALID, BEYOND], padded=True),
            check=validation.check_V8,
            black_box=True,
            examples=_examples("V8"),
        ),
        Property(
            clause="E1",
            scenarios=single([CODE]),
            check=dispatch.check_E1,
            black_box=True,
            examples=_examples("E1"),
        ),
        Property(
            clause="E2",
            scenarios=single([INVALID]),
            check=dispatch.check_E2,
            black_box=True,
            examples=_examples("E2"),
        ),
        Property(
            clause="E3",
            scenarios=single([VALID], ["environment_error"]),
            check=dispatch.check_E3,
            black_box=False,
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E4",
            scenarios=single([VALID], ["error"]),
            check=dispatch.check_E4,
            black_box=False,
            examples=_examples("E4"),
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E5",
            scenarios=single([VALID], ["text"]),
            check=dispatch.check_E5,
            black_box=False,
            examples=_examples("E5"),
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E6",
            scenarios=single([VALID], ["suspend", "base_exception"]),
            check=dispatch.check_E6,
            black_box=True,
            examples=_examples("E6"),
            inconclusive=dispatch.nothing_cancelled,
        ),
        Property(
            clause="E7",
            scenarios=single(_ALL_ACTIONS, ["text", "environment_error", "error"]),
            check=dispatch.check_E7,
            black_box=True,
            examples=_examples("E7"),
        ),
        Property(
            clause="E8",
            # Every behaviour that reaches a handler: an executor that retries a raising
            # handler runs it twice.
            scenarios=single(_E8_ACTIONS, _E8_BEHAVIOURS),
            check=dispatch.check_E8,
            black_box=False,
            examples=_examples("E8"),
        ),
        Property(
            clause="E9",
            scenarios=single([VALID], ["non_str"]),
            check=dispatch.check_E9,
            black_box=False,
            examples=_examples("E9"),
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E10",
            scenarios=single([VALID], ["error_like"]),
            check=dispatch.check_E10,
            black_box=False,
            examples=_examples("E10"),
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E11",
            scenarios=many(
                [VALID, VALID, INVALID, CODE],
                ["text", "environment_error", "error", "non_str"],
            ),
            check=dispatch.check_E11,
            black_box=False,
            examples=_examples("E11"),
        ),
        Property(
            clause="E12",
            scenarios=single([VALID], ["unprintable"]),
            check=dispatch.check_E12,
            black_box=False,
            examples=_examples("E12"),
            inconclusive=nothing_judged,
        ),
        Property(
            clause="E13",
            scenarios=repeated,
            check=dispatch.check_E13,
            black_box=False,
            examples=_examples("E13"),
        ),
        Property(
            clause="E14",
            scenarios=single([BEYOND], ["text", "environment_error", "error"]),
            check=dispatch.check_E14,
            black_box=True,
        ),
        Property(
            clause="E15",
            scenarios=single([VALID, INVALID, CODE], ["text", "environment_error", "error"]),
            check=dispatch.check_E15,
            black_box=True,
            examples=_examples("E15"),
        ),
    )
}
"""Clause ID -> its property, in contract order (V1–V8, then E1–E15)."""


def black_box_clauses() -> tuple[str, ...]:
    """The clauses a black-box run can check, read from the table."""
    return tuple(clause for clause, prop in PROPERTIES.items() if prop.black_box)
