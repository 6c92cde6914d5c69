"""The policy zoo (issue 33): certify catches every planted policy bug exactly on its clause,
and certifies every correct policy executor.

Broken ones (`zoo.policy`) are certified on their own clauses under ``ci`` at seed 0. Correct
ones (polyloop's ``registry.executor(policy=...)``, `zoo.policy_unusual`, and the independently
written ``specificity/correct_policy/``) are certified on P1-P12 at seed 0 (P11 is a clause of
batches: skipped for an action-executor factory, with the reason); with
``POLYLOOP_SPECIFICITY_SEEDS=1`` (tox -e policy-seeds, on 3.11) at seeds 0, 1, 2, 3, 5
and 8. A correct executor that fails is the kit's worst failure (a false verdict). The batch
form, ``factory(registry, max_concurrency=N, policy=...)``, is judged on P11 as well
(`zoo.policy_batch`; polyloop's ``registry.batch_executor(policy=...)`` certifies P1-P12).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _verdicts import assert_fails_exactly
from zoo.policy import BROKEN_POLICY, REALISTIC_POLICY
from zoo.policy_base import ZooPolicy
from zoo.policy_batch import BROKEN_BATCH_POLICY, ZooBatchPolicy
from zoo.policy_unusual import UNUSUAL_POLICY

from conformance.engine import SetUpError, certify
from conformance.policy import POLICY_CLAUSES
from polyloop import RegistryExecutor, ToolPolicy, ToolRegistry

SEED = 0
EXTRA_SEEDS = (1, 2, 3, 5, 8)
SEEDS_SWITCH = "POLYLOOP_SPECIFICITY_SEEDS"
SEEDS_ON = os.environ.get(SEEDS_SWITCH) == "1" and sys.version_info[:2] == (3, 11)
INDEPENDENT = Path(__file__).resolve().parent.parent / "specificity" / "correct_policy"
BATCH_ONLY = ("P11",)


def polyloop_reference(registry: ToolRegistry, policy: ToolPolicy) -> Any:
    return registry.executor(policy=policy)


def polyloop_batch_reference(
    registry: ToolRegistry, max_concurrency: int, policy: ToolPolicy
) -> Any:
    return registry.batch_executor(max_concurrency=max_concurrency, policy=policy)


def _independent() -> list[Any]:
    return [
        pytest.param(f"specificity.correct_policy.{path.stem}", id=path.stem)
        for path in sorted(INDEPENDENT.glob("*.py"))
        if not path.name.startswith("_")
    ]


def _factory(target: Any) -> Any:
    if isinstance(target, str):
        module = importlib.import_module(target)
        return getattr(module, "factory", None) or module.batch_factory
    return target


def _is_batch(factory: Any) -> bool:
    return "max_concurrency" in inspect.signature(factory).parameters


CORRECT: list[Any] = [
    pytest.param(polyloop_reference, id="polyloop"),
    pytest.param(ZooPolicy, id="ZooPolicy"),
    *(pytest.param(cls, id=cls.__name__) for cls in UNUSUAL_POLICY),
    pytest.param(polyloop_batch_reference, id="polyloop-batch"),
    *_independent(),
]


def zoo_id(broken: type[ZooPolicy]) -> str:
    return "-".join([*broken.VIOLATES, broken.__name__])


def test_P1_to_P12_each_have_a_broken_policy_executor_that_breaks_only_it() -> None:
    """A clause nobody has seen fail is a check nobody has seen work (P11 needs a batch)."""
    alone = {cls.VIOLATES[0] for cls in BROKEN_POLICY if len(cls.VIOLATES) == 1}
    assert sorted(set(POLICY_CLAUSES) - alone - set(BATCH_ONLY)) == []
    for cls in BROKEN_POLICY:
        assert cls.__doc__ and cls.VIOLATES, cls.__name__
        assert set(cls.VIOLATES) <= set(POLICY_CLAUSES), cls.__name__


def test_the_policy_zoo_has_its_realistic_unusual_and_independent_executors() -> None:
    assert len(REALISTIC_POLICY) >= 15
    names = [cls.__name__ for cls in BROKEN_POLICY]
    assert len(set(names)) == len(names)
    assert len(UNUSUAL_POLICY) >= 4
    assert len(_independent()) >= 7  # six factory(registry, policy), one batch_factory


@pytest.mark.parametrize("broken", BROKEN_POLICY, ids=zoo_id)
def test_policy_zoo_certify_catches_exactly_the_planted_bug(broken: type[ZooPolicy]) -> None:
    report = certify(broken, level="strict", profile="ci", seed=SEED, only=broken.VIOLATES)
    assert report.subject == "policy"
    assert_fails_exactly(report, broken.__name__, broken.VIOLATES)
    for clause in broken.VIOLATES:
        example = report.result(clause).counterexample
        assert example is not None and "ToolPolicy(" in example.behaviour


def _certifies(target: Any, seed: int) -> None:
    factory = _factory(target)
    report = certify(factory, level="strict", profile="ci", seed=seed)
    assert report.subject == "policy"
    assert [r.id for r in report.results] == list(POLICY_CLAUSES)
    assert report.passed, report.to_text()
    skipped = [r.id for r in report.results if r.status == "skipped"]
    assert skipped == ([] if _is_batch(factory) else list(BATCH_ONLY)), report.to_text()


@pytest.mark.parametrize("target", CORRECT)
def test_correct_policy_executor_certifies_P1_to_P12_at_seed_0(target: Any) -> None:
    _certifies(target, SEED)


@pytest.mark.skipif(not SEEDS_ON, reason=f"{SEEDS_SWITCH}=1 on 3.11 (tox -e policy-seeds)")
@pytest.mark.parametrize("seed", EXTRA_SEEDS)
@pytest.mark.parametrize("target", CORRECT)
def test_correct_policy_executor_certifies_P1_to_P12_at_five_more_seeds(
    target: Any, seed: int
) -> None:
    _certifies(target, seed)


# --- recognising the target -------------------------------------------------------------------


def positional_only(registry: ToolRegistry, policy: ToolPolicy, /) -> Any:
    return registry.executor(policy=policy)


def needs_more(registry: ToolRegistry, policy: ToolPolicy, tracer: object) -> Any:
    return registry.executor(policy=policy)


@pytest.mark.parametrize(
    ("factory", "words"),
    [
        (positional_only, "positional-only"),
        (needs_more, "tracer"),
    ],
)
def test_a_policy_factory_that_does_not_fit_is_a_one_line_set_up_error(
    factory: Any, words: str
) -> None:
    with pytest.raises(SetUpError) as caught:
        certify(factory, only=["P1"], profile="fast")
    message = str(caught.value)
    assert "\n" not in message and words in message and "factory(registry, policy" in message


def test_registry_executor_itself_stays_an_action_executor_target() -> None:
    """Its keyword-only policy=None is an option, not the policy factory signature."""
    report = certify(RegistryExecutor, only=["E5"], profile="fast")
    assert report.subject != "policy" and report.passed


def test_P4_counterexample_replays_with_the_reproduce_line_seed() -> None:
    first = certify(zoo_factory("ExceptionFailsOpen"), only=["P4"], profile="ci", seed=7)
    again = certify(zoo_factory("ExceptionFailsOpen"), only=["P4"], profile="ci", seed=7)
    one, two = first.result("P4"), again.result("P4")
    assert one.status == two.status == "fail"
    assert one.counterexample == two.counterexample
    assert one.reproduce is not None and "--seed 7 --only P4" in one.reproduce


def zoo_factory(name: str) -> Any:
    return next(cls for cls in BROKEN_POLICY if cls.__name__ == name)


# --- the batch form: P11 ----------------------------------------------------------------------


def test_P11_the_plain_batch_base_keeps_it() -> None:
    report = certify(ZooBatchPolicy, only=["P11"], profile="ci", seed=SEED)
    assert report.passed, report.to_text()


@pytest.mark.parametrize("broken", BROKEN_BATCH_POLICY, ids=lambda cls: cls.__name__)
def test_P11_batch_zoo_certify_catches_the_planted_bug(broken: type[ZooBatchPolicy]) -> None:
    report = certify(broken, level="strict", profile="ci", seed=SEED, only=broken.VIOLATES)
    assert_fails_exactly(report, broken.__name__, broken.VIOLATES)
    example = report.result("P11").counterexample
    assert example is not None and "a batch of" in example.behaviour


def test_PolicyContract_has_one_test_per_P_clause_and_none_of_V_or_E() -> None:
    from conformance import PolicyContract

    tests = [
        name
        for name in dir(PolicyContract)
        if name.startswith("test_") and getattr(PolicyContract, name) is not None
    ]
    assert sorted(name.split("_")[1] for name in tests) == sorted(POLICY_CLAUSES)


async def _abstains(call: Any) -> None:
    return None


async def _passes_through(call: Any, proceed: Any) -> Any:
    return await proceed()


def test_B1_to_B18_hold_for_polyloop_batch_executor_with_a_policy_in_force() -> None:
    """Issue 33: the batch with a policy is also judged on B1-B18 (the batch subject, through
    a factory that fixes the policy: an abstaining decider and a pass-through wrapper)."""
    policy = ToolPolicy(deciders=(_abstains,), wrappers=(_passes_through,))

    def factory(registry: ToolRegistry, max_concurrency: int) -> Any:
        return registry.batch_executor(max_concurrency=max_concurrency, policy=policy)

    report = certify(factory, level="strict", profile="fast", seed=SEED)
    assert report.subject == "batch" and report.passed, report.to_text()
