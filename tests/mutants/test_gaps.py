"""Each kit gap of `gaps.py`: a strict xfail that `certify` catches it (it does not yet: see each
class's KNOWN_MISS), and its bug shown live on the zoo's witness calls."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gaps import GAPS
from zoo.base import ZooExecutor
from zoo.witnesses import violations


@pytest.mark.parametrize("gap", GAPS, ids=[gap.__name__ for gap in GAPS])
def test_gap_bug_is_live(gap: type[ZooExecutor]) -> None:
    found = violations(gap)
    assert set(gap.VIOLATES) <= set(found), f"{gap.__name__}: no witness shows the bug"


@pytest.mark.parametrize("gap", GAPS, ids=[gap.__name__ for gap in GAPS])
def test_kit_catches_gap(gap: type[ZooExecutor], request: pytest.FixtureRequest) -> None:
    request.applymarker(pytest.mark.xfail(strict=True, reason=f"kit gap: {gap.KNOWN_MISS}"))
    from conformance import certify

    report = certify(gap, only=list(gap.VIOLATES), level="strict", profile="ci", seed=0)
    assert not report.passed, f"certify passes {gap.__name__}: {gap.KNOWN_MISS}"


def test_gaps_carry_their_clause_and_why_the_kit_misses_them() -> None:
    for gap in GAPS:
        assert gap.VIOLATES and gap.KNOWN_MISS and gap.__doc__, gap.__name__
