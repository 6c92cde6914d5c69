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

from collections.abc import Callable, Mapping
from functools import lru_cache

from hypothesis import strategies as st

from conformance.executor.properties import dispatch, edges, isolation, validation
from conformance.executor.properties.scenarios import (
    ActionKind,
    Property,
    Scenario,
    ScenarioSource,
    Violation,
    many,
    repeated,
    single,
)
from conformance.executor.properties.shared import nothing_cancelled, nothing_judged
from conformance.executor.runner import Trial

__all__ = ["PROPERTIES", "Property", "Scenario", "ScenarioSource", "Violation", "black_box_clauses"]


@lru_cache(maxsize=1)
def _traps() -> dict[str, list[Scenario]]:
    return {**validation.traps(), **dispatch.traps()}


@lru_cache(maxsize=1)
def _hostile_traps() -> dict[str, list[Scenario]]:
    return edges.hostile_traps()


Scenarios = Callable[[ScenarioSource], st.SearchStrategy[Scenario]]
Judged = Callable[[Trial], str | None]


def _row(
    clause: str,
    scenarios: Scenarios,
    black_box: bool,
    inconclusive: Judged | None = None,
    inapplicable: Callable[[ScenarioSource], str | None] | None = None,
) -> Property:
    """The property of `clause`: its check is ``check_<clause>`` of its clauses' module, its
    hand-picked scenarios that module's ``traps()[clause]``."""
    module = validation if clause.startswith("V") else dispatch
    check = getattr(module, f"check_{clause}", None) or getattr(isolation, f"check_{clause}")
    return Property(
        clause=clause,
        scenarios=scenarios,
        check=check,
        black_box=black_box,
        examples=lambda: _traps().get(clause, []),
        hostile=lambda: _hostile_traps().get(clause, []),
        inconclusive=inconclusive or (lambda _trial: None),
        inapplicable=inapplicable or (lambda _source: None),
    )


def _aimed(clause: str) -> Property:
    """The property of one of V2-V6: invalid calls aimed at it, over tools that give the aim
    a target (V2's unknown name needs none; its tool sets may list more than it names)."""
    if clause == "V2":
        return _row(clause, single([INVALID], aims=[clause], tools=ScenarioSource.padded), True)
    scenarios = single([INVALID], aims=[clause], tools=validation.aimed_tools(clause), primed=True)
    return _row(clause, scenarios, True, inapplicable=validation.nothing_to_aim_at(clause))


VALID, INVALID, BEYOND, CODE = ActionKind
_ALL_ACTIONS = (VALID, VALID, INVALID, BEYOND, CODE)
# E8's commonest bug is a handler run for a rejected call, so rejected calls are drawn as often
# as accepted ones (with one draw in five, a derandomized run on some Pythons never drew one).
# Every behaviour that reaches a handler: an executor that retries a raising handler runs it
# twice.
_E8_ACTIONS = (VALID, VALID, INVALID, INVALID, BEYOND, CODE)
_E8_BEHAVIOURS = ("text", "environment_error", "error", "error_like", "unprintable", "non_str")
_OUTCOMES = ("text", "environment_error", "error")
_NONE = nothing_judged  # a pass in which no handler's result was judged proves nothing

# One row per clause, in contract order: clause, scenarios, black-box, and the hooks.
PROPERTIES: Mapping[str, Property] = {
    row.clause: row
    for row in (
        _row("V1", single([VALID], ["text", "yield"], upstream=True, primed=True), True),
        _aimed("V2"),
        _aimed("V3"),
        _aimed("V4"),
        _aimed("V5"),
        _aimed("V6"),
        _row("V7", single([BEYOND], ["text", "error"], upstream=True), True),
        _row("V8", single([INVALID, INVALID, BEYOND], tools=ScenarioSource.padded), True),
        _row("E1", single([CODE]), True),
        _row("E2", single([INVALID]), True),
        _row("E3", single([VALID], ["environment_error"]), False, _NONE),
        _row("E4", single([VALID], ["error"]), False, _NONE),
        _row("E5", single([VALID], ["text"]), False, _NONE),
        _row("E6", single([VALID], ["suspend", "base_exception"]), True, nothing_cancelled),
        _row("E7", single(_ALL_ACTIONS, _OUTCOMES), True),
        _row("E8", single(_E8_ACTIONS, _E8_BEHAVIOURS, tools=ScenarioSource.defaulted), False),
        _row("E9", single([VALID], ["non_str"]), False, _NONE),
        _row("E10", single([VALID], ["error_like"]), False, _NONE),
        _row("E11", many([VALID, VALID, INVALID, CODE], [*_OUTCOMES, "non_str"]), False),
        _row("E12", single([VALID], ["unprintable"]), False, _NONE),
        _row("E13", repeated, False),
        _row("E14", single([BEYOND], _OUTCOMES, upstream=True), True),
        _row("E15", single([VALID, INVALID, CODE], _OUTCOMES), True),
    )
}
"""Clause ID -> its property, in contract order (V1–V8, then E1–E15)."""


def black_box_clauses() -> tuple[str, ...]:
    """The clauses a black-box run can check, read from the table."""
    return tuple(clause for clause, prop in PROPERTIES.items() if prop.black_box)
