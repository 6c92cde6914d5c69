"""The batch zoo (issue 20): certify catches every planted batch bug exactly on its clause, and
certifies every correct batch executor.

Broken ones (`zoo.batch`) are certified on their own clauses under ``ci`` at seed 0. Correct
ones (polyloop's `RegistryBatchExecutor`, `zoo.batch_unusual`, and the independently written
``specificity/correct_batch/``) are certified on B1-B18 at seed 0 with ten examples per
clause (twenty schedules: the B clauses run twice the count) in the default suite; with
``POLYLOOP_SPECIFICITY_SEEDS=1`` (tox -e specificity-seeds, on 3.11) under the full ``ci``
profile at seeds 0, 1, 2, 3, 5 and 8. A correct executor that fails is the kit's worst failure
(a false verdict); one that offloads handlers to threads, or busy-polls, may see clauses
reported skipped (inconclusive), never failed.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _verdicts import assert_fails_exactly
from zoo.batch import BROKEN_BATCH, REALISTIC, NeverEndsABatch
from zoo.batch_base import ZooBatch
from zoo.batch_unusual import UNUSUAL_BATCH, BusyPolls, ThreadOffloading

from conformance.batch import BATCH_CLAUSES
from conformance.engine import _certify, certify
from polyloop import Action, RegistryBatchExecutor, ToolCall, ToolRegistry, ToolSpec

SEED = 0
EXTRA_SEEDS = (1, 2, 3, 5, 8)
SEEDS_SWITCH = "POLYLOOP_SPECIFICITY_SEEDS"
SEEDS_ON = os.environ.get(SEEDS_SWITCH) == "1" and sys.version_info[:2] == (3, 11)
INDEPENDENT = Path(__file__).resolve().parent.parent / "specificity" / "correct_batch"


def _independent() -> list[Any]:
    found = []
    for path in sorted(INDEPENDENT.glob("*.py")):
        if path.name.startswith("_"):
            continue
        marks = []
        if path.stem.startswith("anyio"):
            try:
                import anyio  # noqa: F401
            except ImportError:
                marks.append(pytest.mark.skip(reason="anyio is not installed"))
        found.append(
            pytest.param(f"specificity.correct_batch.{path.stem}", id=path.stem, marks=marks)
        )
    return found


def _factory(target: Any) -> Any:
    if isinstance(target, str):
        return importlib.import_module(target).make_executor
    return target


NEVER_QUIET = (ThreadOffloading, BusyPolls, "specificity.correct_batch.indep_busy_poller")
"""Correct executors whose loop is not quiet while a handler waits (threads, busy polling): the
kit may find their schedules inconclusive (clauses skipped), never failed."""

CORRECT: list[Any] = [
    pytest.param(RegistryBatchExecutor, id="RegistryBatchExecutor"),
    *(pytest.param(cls, id=cls.__name__) for cls in UNUSUAL_BATCH),
    *_independent(),
]


def zoo_id(broken: type[ZooBatch]) -> str:
    return "-".join([*broken.VIOLATES, broken.__name__])


def test_B1_to_B18_each_have_a_broken_batch_executor_that_breaks_only_it() -> None:
    """A clause nobody has seen fail is a check nobody has seen work."""
    alone = {cls.VIOLATES[0] for cls in BROKEN_BATCH if len(cls.VIOLATES) == 1}
    assert sorted(set(BATCH_CLAUSES) - alone) == []


def test_the_realistic_batch_zoo_is_big_enough_and_says_where_each_bug_comes_from() -> None:
    assert len(REALISTIC) >= 15
    names = [cls.__name__ for cls in BROKEN_BATCH]
    assert len(set(names)) == len(names)
    for cls in BROKEN_BATCH:
        assert cls.__doc__ and cls.VIOLATES, cls.__name__
        assert set(cls.VIOLATES) <= set(BATCH_CLAUSES), cls.__name__


def test_the_independent_batch_executors_are_there() -> None:
    assert len(_independent()) >= 11  # 3 before issue 30, 6 written for it, 2 that poll or tick


@pytest.mark.parametrize("broken", BROKEN_BATCH, ids=zoo_id)
def test_batch_zoo_certify_catches_exactly_the_planted_bug(broken: type[ZooBatch]) -> None:
    report = certify(broken, level="strict", profile="ci", seed=SEED, only=broken.VIOLATES)
    assert_fails_exactly(report, broken.__name__, broken.VIOLATES)
    assert {r.id for r in report.results} == set(broken.VIOLATES)
    for clause in broken.VIOLATES:
        example = report.result(clause).counterexample
        assert example is not None and "max_concurrency" in example.behaviour


def _report(target: Any, seed: int, examples: int | None, only: Any = BATCH_CLAUSES) -> Any:
    """Certify `target` at ``ci`` with `examples` per clause (None: the profile's)."""
    return _certify(
        _factory(target),
        registry=None,
        level="strict",
        profile="ci",
        seed=seed,
        only=only,
        expected_failures=None,
        deadline=5.0,
        progress=None,
        target_name=None,
        database=None,
        fail_fast=False,
        examples=examples,
    )


def _certifies(target: Any, seed: int, examples: int | None) -> None:
    report = _report(target, seed, examples)
    assert report.subject == "batch"
    assert {r.id for r in report.results} == set(BATCH_CLAUSES)
    assert report.passed, report.to_text()
    skipped = [r for r in report.results if r.status == "skipped"]
    if target not in NEVER_QUIET:
        assert not skipped, report.to_text()
    for result in skipped:
        assert (result.message or "").startswith("inconclusive: "), result.message


@pytest.mark.parametrize("target", CORRECT)
def test_correct_batch_executor_certifies_B1_to_B18_at_seed_0(target: Any) -> None:
    _certifies(target, SEED, 10)


@pytest.mark.skipif(not SEEDS_ON, reason=f"{SEEDS_SWITCH}=1 on 3.11 (tox -e specificity-seeds)")
@pytest.mark.parametrize("seed", (SEED, *EXTRA_SEEDS))
@pytest.mark.parametrize("target", CORRECT)
def test_correct_batch_executor_certifies_B1_to_B18_under_ci_at_six_seeds(
    target: Any, seed: int
) -> None:
    _certifies(target, seed, None)


async def _echo(arguments: dict[str, Any]) -> str:
    return "ok"


def test_B1_a_batch_that_never_ends_is_live_without_the_kit() -> None:
    """`NeverEndsABatch`'s bug is real: a one-call batch returns, a batch of two never does
    (its loop stays busy, so the kit must tell it from a busy-polling executor)."""
    registry = ToolRegistry(
        [ToolSpec(name="t", description="d", parameters={"type": "object"}, handler=_echo)]
    )
    call = Action(tool_call=ToolCall(name="t", arguments={}))

    async def run() -> None:
        executor = NeverEndsABatch(registry, max_concurrency=2)
        assert len(await executor.execute_batch([call])) == 1
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(executor.execute_batch([call, call]), 0.5)

    asyncio.run(run())


def test_B10_B12_do_not_compare_a_schedule_cut_short_by_a_livelock() -> None:
    """A livelocked run's settled points stop where its loop stopped going quiet: comparing
    them with a run that ended would blame the rejected calls (B10) or a failure (B12) for
    what is B1's."""
    report = _report(NeverEndsABatch, SEED, 10, only=("B10", "B12"))
    assert report.passed, report.to_text()
