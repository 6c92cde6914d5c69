"""Specificity (issue 18 item 3): every correct executor certifies, and every broken one in
the independent set is caught on its clause.

The executors under ``tests/specificity/`` were written from ``docs/contract.md`` and
polyloop's public API only, by someone who had not read ``conformance/`` or the zoo:
``correct/*.py`` (each exports ``make_executor(registry)``; the issue's witness is one of them)
and ``broken/*.py`` (each also names the clause it violates, ``CLAUSE = "E6"``). A correct
executor that fails is the kit's worst failure (a false verdict), so each is certified on the
whole strict level under the ``ci`` profile: at seed 0 on every Python, and at five more fixed
seeds on one Python (3.11), in-process and one test per executor and seed so xdist spreads
them. The kit's own unusual-but-correct zoo entries are certified in ``test_zoo.py``.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.engine import CERTIFIED_CLAUSES, certify

ROOT = Path(__file__).resolve().parent.parent / "specificity"
EXTRA_SEEDS = (1, 2, 3, 5, 8)
"""The five other fixed seeds, run on one Python only (CI time)."""
EXTRA_SEEDS_PYTHON = (3, 11)
EXTRA_SEEDS_SWITCH = "POLYLOOP_SPECIFICITY_SEEDS"
"""85 more whole-level certifications (about 10 minutes on 2 cores): their own tox env,
``specificity-seeds``, which ``.ci/run`` runs when its time allows."""
EXCLUDED: dict[str, str] = {}
"""``correct/<name>.py`` or ``broken/<name>.py`` -> why it is left out (told to the lead)."""

CAUGHT_ON: dict[str, str] = {
    "v5_ignores_pattern_properties": "V1",
}
"""Broken executors whose bug the contract files under another clause than their ``CLAUSE``:
rejecting a key that matches ``patternProperties`` is a false rejection (V1); V5 only says its
own check is skipped there, and E14 allows rejecting a key that matches no pattern."""

CONFORMS_FROM: dict[str, tuple[int, int]] = {
    "e6_wait_for_race": (3, 12),
}
"""Executors whose correctness depends on the Python: ``asyncio.wait_for`` swallows a
cancellation that arrives as the handler finishes before 3.12. From this version on a broken
one conforms (not asserted caught) and a correct one must certify; before it, a correct one is
expected to fail exactly E6 (a true verdict)."""


def _files(kind: str) -> list[Path]:
    return sorted(path for path in (ROOT / kind).glob("*.py") if not path.name.startswith("_"))


def _load(path: Path) -> ModuleType:
    """The module, imported as part of its package (``specificity.correct.plain``): the
    executors share helpers through relative imports."""
    return importlib.import_module(f"specificity.{path.parent.name}.{path.stem}")


def _params(kind: str, seeds: tuple[int, ...] = (0,)) -> list[Any]:
    params = []
    for path in _files(kind):
        key = f"{kind}/{path.name}"
        marks = [pytest.mark.skip(reason=EXCLUDED[key])] if key in EXCLUDED else []
        params += [
            pytest.param(path, seed, id=f"{path.stem}-seed{seed}", marks=marks) for seed in seeds
        ]
    return params


def test_the_independent_sets_are_there() -> None:
    """Fails loudly rather than passing on nothing: the harness must find its executors."""
    correct, broken = _files("correct"), _files("broken")
    assert len(correct) >= 15, f"{len(correct)} correct executors under {ROOT / 'correct'}"
    assert broken, f"no broken executors under {ROOT / 'broken'}"
    for path in [*correct, *broken]:
        assert callable(getattr(_load(path), "make_executor", None)), f"{path} has no make_executor"
    for path in broken:
        clause = getattr(_load(path), "CLAUSE", None)
        assert clause in CERTIFIED_CLAUSES, f"{path}: CLAUSE is {clause!r}"
    assert any("witness" in path.stem.lower() for path in correct), "the issue's witness is missing"


@pytest.mark.parametrize(("path", "seed"), _params("correct"))
def test_specificity_correct_executor_certifies_at_strict(path: Path, seed: int) -> None:
    _certifies(path, seed)


@pytest.mark.skipif(
    sys.version_info[:2] != EXTRA_SEEDS_PYTHON or os.environ.get(EXTRA_SEEDS_SWITCH) != "1",
    reason=f"the extra seeds run on 3.11 with {EXTRA_SEEDS_SWITCH}=1 (tox -e specificity-seeds)",
)
@pytest.mark.parametrize(("path", "seed"), _params("correct", EXTRA_SEEDS))
def test_specificity_correct_executor_certifies_at_other_seeds(path: Path, seed: int) -> None:
    _certifies(path, seed)


def _certifies(path: Path, seed: int) -> None:
    factory = _load(path).make_executor
    report = certify(
        factory, level="strict", profile="ci", seed=seed, target_name=f"{path.name}:make_executor"
    )
    assert {r.id for r in report.results} == set(CERTIFIED_CLAUSES)
    since = CONFORMS_FROM.get(path.stem)
    if since is not None and sys.version_info[:2] < since:
        assert report.failed_ids() == ("E6",), report.to_text()
        return
    assert report.passed, report.to_text()


@pytest.mark.parametrize(("path", "seed"), _params("broken"))
def test_specificity_broken_executor_is_caught_on_its_clause(path: Path, seed: int) -> None:
    module = _load(path)
    since = CONFORMS_FROM.get(path.stem)
    if since is not None and sys.version_info[:2] >= since:
        pytest.skip(f"{path.stem} conforms on Python {since[0]}.{since[1]}+")
    clause = CAUGHT_ON.get(path.stem, module.CLAUSE)
    report = certify(
        module.make_executor,
        level="strict",
        profile="ci",
        seed=seed,
        only=[clause],
        target_name=f"{path.name}:make_executor",
    )
    assert report.result(clause).status == "fail", report.to_text()
