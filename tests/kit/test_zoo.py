"""The zoo: the conformance kit must catch every planted bug, and only that bug.

For each broken executor `certify` must report exactly the clauses in its `VIOLATES` as failing,
each with a counterexample and a reproduction line; every unusual but correct executor must
certify. A broken executor the kit does not catch yet carries `KNOWN_MISS` and its test is a
strict xfail, so it turns red the day the kit learns to catch it.

Runtime is bounded for CI: by default each broken executor is certified on its own clauses
(profile ci), one on the whole strict level, and the unusual executors on the clauses their
twist touches (profile quick). ``POLYLOOP_ZOO_FULL=1`` checks every broken executor against its
clauses plus the neighbouring clauses a bug could spill into, a handful against the whole strict
level, and the unusual executors on everything under ci (several minutes).
``python tests/zoo/measure.py --full`` certifies the whole zoo on the whole strict level and
prints time-to-detect.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from _verdicts import assert_fails_exactly
from zoo.base import ZooExecutor
from zoo.broken import BROKEN
from zoo.unusual import (
    UNUSUAL,
    DelegatesToRegistryExecutor,
    FullSchemaValidation,
    LoggingTimingExecutor,
    SerializedCalls,
    TaskPerCall,
)
from zoo.witnesses import WITNESSES, violations

from conformance.engine import CERTIFIED_CLAUSES, certify
from polyloop import RegistryExecutor

FULL = os.environ.get("POLYLOOP_ZOO_FULL") == "1"
SEED = 0

FULL_STRICT = frozenset(
    {"LeaksTraceback"}
    | (
        {
            "PassesFrozenArguments",
            "CatchesValueError",
            "SwallowsCancellation",
            "SharedResultSlot",
            "IgnoresRequired",
        }
        if FULL
        else set()
    )
)
"""Broken executors certified against the whole strict level, not only their clauses."""

NEIGHBOURS: dict[str, tuple[str, ...]] = {
    "E1": ("E2", "E7", "E8"),
    "E2": ("E1", "V2", "E8"),
    "E3": ("E4", "E10", "E12"),
    "E4": ("E3", "E5", "E10", "E12"),
    "E5": ("E4", "E7", "E9"),
    "E6": ("E4", "E11"),
    "E7": ("E1", "E5"),
    "E8": ("E2", "E5", "E13"),
    "E9": ("E5", "E4"),
    "E10": ("E3", "E4"),
    "E11": ("E5", "E8"),
    "E12": ("E3", "E4"),
    "E13": ("E8", "E11"),
    "V1": ("V6", "E2", "E8"),
    "V2": ("E2", "V8"),
    "V3": ("E2", "E8"),
    "V4": ("E2", "E8", "V8"),
    "V5": ("E2", "E8", "V4"),
    "V6": ("V1", "E2", "E8"),
    "V7": ("E14", "E8", "E2"),
    "V8": ("E2", "V2", "V4"),
    "E14": ("V7", "E8", "E5"),
    "E15": ("E1", "E7", "E11"),
}
"""Per clause, clauses a bug in it could plausibly spill into (checked to stay green)."""

UNUSUAL_ONLY: dict[str, tuple[str, ...]] = {
    FullSchemaValidation.__name__: ("V1", "V2", "V4", "V5", "V6", "V8", "E2", "E14"),
    TaskPerCall.__name__: ("E3", "E4", "E5", "E6", "E9", "E10", "E11", "E12", "E13"),
    LoggingTimingExecutor.__name__: ("E1", "E2", "E5", "E6", "E11"),
    SerializedCalls.__name__: ("E5", "E6", "E11"),
    DelegatesToRegistryExecutor.__name__: ("E1", "E2", "E4", "E6", "E13"),
}
"""By default (CI time) an unusual executor is certified on the clauses its twist touches; the
base `ZooExecutor` always on the whole strict level."""


def clauses_for(broken: type[ZooExecutor]) -> list[str] | None:
    """The `only=` set for a broken executor, or None for the whole strict level."""
    if broken.__name__ in FULL_STRICT:
        return None
    selected = dict.fromkeys(broken.VIOLATES)
    if FULL:
        for clause in broken.VIOLATES:
            selected.update(dict.fromkeys(NEIGHBOURS.get(clause, ())))
    return list(selected)


def zoo_param(broken: type[ZooExecutor]) -> Any:
    marks = []
    if broken.KNOWN_MISS:
        marks.append(pytest.mark.xfail(strict=True, reason=broken.KNOWN_MISS))
    return pytest.param(broken, id=zoo_id(broken), marks=marks)


def zoo_id(broken: type[ZooExecutor]) -> str:
    """``E8-CallsHandlerTwice``: the clause first, so ``pytest -k E8`` finds the evidence."""
    return "-".join([*broken.VIOLATES, broken.__name__])


def test_every_certified_clause_has_a_broken_executor_caught_on_it() -> None:
    """A clause certify checks but no zoo entry breaks is a check nobody has seen fail."""
    covered = {
        clause
        for cls in BROKEN
        if not cls.KNOWN_MISS and getattr(cls, "LEVEL", "strict") == "strict"
        for clause in cls.VIOLATES
    }
    missing = [clause for clause in CERTIFIED_CLAUSES if clause not in covered]
    assert not missing, f"no broken executor in tests/zoo/broken.py violates {missing}"


def test_zoo_is_big_enough_and_precise() -> None:
    assert len(BROKEN) >= 20
    names = [cls.__name__ for cls in BROKEN]
    assert len(set(names)) == len(names)
    for cls in BROKEN:
        assert cls.VIOLATES, f"{cls.__name__} names no clause"
        assert len(set(cls.VIOLATES)) == len(cls.VIOLATES)
        assert cls.__doc__, f"{cls.__name__} does not say what its bug is"


@pytest.mark.parametrize("factory", [RegistryExecutor, *UNUSUAL], ids=lambda f: f.__name__)
def test_zoo_witnesses_pass_correct_executors(factory: Any) -> None:
    """The hand-written witnesses agree with polyloop and with every correct zoo member."""
    assert violations(factory) == {}


@pytest.mark.parametrize("broken", BROKEN, ids=zoo_id)
def test_zoo_bug_is_live(broken: type[ZooExecutor]) -> None:
    """Independent of the kit: each planted bug shows on a hand-written witness call."""
    found = violations(broken)
    for clause in broken.VIOLATES:
        if clause in WITNESSES:
            assert clause in found, f"{broken.__name__}: the {clause} bug does not show"


@pytest.mark.parametrize("broken", [zoo_param(cls) for cls in BROKEN])
def test_zoo_certify_catches_exactly_the_planted_bug(
    broken: type[ZooExecutor], record_property: Any
) -> None:
    only = clauses_for(broken)
    profile = "quick" if only is None and not FULL else "ci"
    report = certify(
        broken, level=getattr(broken, "LEVEL", "strict"), profile=profile, seed=SEED, only=only
    )
    caught = [r.seconds for r in report.results if r.id in broken.VIOLATES and r.status == "fail"]
    if caught:
        record_property("time_to_detect_seconds", round(min(caught), 3))
    assert_fails_exactly(report, broken.__name__, broken.VIOLATES)
    if only is not None:
        assert {r.id for r in report.results} == set(only)


@pytest.mark.parametrize(
    "broken", [cls for cls in BROKEN if getattr(cls, "LEVEL", "strict") == "hardened"], ids=zoo_id
)
def test_zoo_hostile_only_bugs_pass_strict(broken: type[ZooExecutor]) -> None:
    """Issue 18: a bug only an object that lies about itself shows (a key whose ``__eq__``
    raises, a ``__class__`` claiming ``str``, a non-JSON leaf, ...) is polyloop's hardening,
    not certification's: ``strict`` passes the entry on its clauses; ``hardened`` fails it
    (`test_zoo_certify_catches_exactly_the_planted_bug`)."""
    report = certify(broken, level="strict", profile="ci", seed=SEED, only=broken.VIOLATES)
    assert report.passed, report.to_text()


def test_zoo_hardened_entries_are_few_and_named() -> None:
    """Moving an entry to the hardening level is a decision, not a way to silence a miss."""
    hardened = sorted(
        cls.__name__ for cls in BROKEN if getattr(cls, "LEVEL", "strict") == "hardened"
    )
    assert hardened == [
        "ClaimedStrAccepted",
        "ExceptionNameCrashes",
        "FlatCallsShareObjectKeys",
        "HostileKeyCrashesValidation",
        "NonJsonLeavesAsText",
        "NonJsonLeavesNeverHandedOver",
        "NonJsonLeavesShared",
        "StrSystemExitEscapes",
    ]
    assert all(getattr(cls, "LEVEL", "strict") in ("strict", "hardened") for cls in BROKEN)


@pytest.mark.parametrize("factory", UNUSUAL, ids=lambda f: f.__name__)
def test_zoo_certify_passes_unusual_but_correct(factory: Any) -> None:
    only = None if FULL else UNUSUAL_ONLY.get(factory.__name__)
    report = certify(
        factory, level="strict", profile="ci" if FULL else "quick", seed=SEED, only=only
    )
    assert report.passed, report.to_text()
