"""Black-box certification of zoo executors: an executor instance plus the registry it serves.

Only clauses that need no scripted handlers are checked; the bugs planted in those clauses must
still be caught, exactly, and correct executors must still pass.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from _verdicts import assert_fails_exactly
from zoo.base import ZooExecutor
from zoo.blackbox import BLACK_BOX_CLAUSES, BLACK_BOX_VISIBLE, black_box_registry
from zoo.unusual import FullSchemaValidation, TaskPerCall

from conformance.engine import certify
from polyloop import RegistryExecutor

FULL = os.environ.get("POLYLOOP_ZOO_FULL") == "1"


def certify_black_box(executor_class: Any, *, profile: str = "ci", only: Any = None) -> Any:
    registry = black_box_registry()
    return certify(
        executor_class(registry),
        registry=registry,
        level="strict",
        profile=profile,
        seed=0,
        only=only,
    )


@pytest.mark.parametrize("broken", BLACK_BOX_VISIBLE, ids=lambda cls: cls.__name__)
def test_zoo_black_box_catches_visible_bug(broken: type[ZooExecutor]) -> None:
    """Each bug is checked on its own clauses (plus E1 and E7 with POLYLOOP_ZOO_FULL=1)."""
    expected = set(broken.VIOLATES)
    assert expected <= BLACK_BOX_CLAUSES, "listed as black-box visible but it is not"
    report = certify_black_box(broken, only=sorted(expected | ({"E1", "E7"} if FULL else set())))
    assert report.mode == "black-box"
    assert_fails_exactly(report, broken.__name__, expected)


def test_zoo_black_box_checks_only_black_box_clauses() -> None:
    report = certify_black_box(ZooExecutor, profile="quick")
    checked = {r.id for r in report.results if r.status != "skipped"}
    assert checked <= BLACK_BOX_CLAUSES, f"checked white-box-only clauses: {checked}"
    assert report.passed, report.to_text()


@pytest.mark.parametrize(
    "factory",
    [RegistryExecutor, *([TaskPerCall, FullSchemaValidation] if FULL else [])],
    ids=lambda f: f.__name__,
)
def test_zoo_black_box_passes_correct(factory: Any) -> None:
    report = certify_black_box(factory, profile="quick")
    assert report.passed, report.to_text()
