"""Telling a policy factory from other targets, and checking it on P1-P12.

A white-box target is a policy factory when its signature has a parameter named ``policy``
that is required or can be passed by position (``factory(registry, policy)``, with or without
a default): the kit calls it ``factory(registry, policy=ToolPolicy(...))`` with a fresh
registry and policy for every example. A keyword-only ``policy`` with a default
(`RegistryExecutor` and `RegistryBatchExecutor` themselves, an option of a plain factory)
leaves the target what it was: certifying them keeps checking V/E and B with no policy. A
policy factory that cannot be called that way (``policy`` positional-only, or another required
parameter) is a one-line set-up error. A policy runtime is always
certified white-box: the clauses need the kit's own listeners.

A batch policy factory, ``factory(registry, max_concurrency=N, policy=...)`` (recognised by
its ``max_concurrency`` parameter beside ``policy``), is checked on P11 with batches, and on
P1-P10 and P12 through one-call batches (B4: a batch of one is ``execute``). P11 is a clause
of batches: a policy factory of action executors reports it skipped, naming what to certify
instead.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus
from conformance._core.subject import (
    RunSpec,
    Subject,
    SubjectDefaults,
    Unwatched,
    Watched,
)
from conformance._core.text import describe_exception
from conformance._core.wording import ReportWords
from conformance.policy import POLICY_CLAUSES
from conformance.policy.rows import ROWS
from polyloop import ToolRegistry

__all__ = ["SUBJECT", "PolicySubject", "policy_parameter"]

KEYWORD = "policy"
BATCH_ONLY = frozenset({"P11"})


def policy_parameter(target: Any) -> inspect.Parameter | None:
    """The target's ``policy`` parameter when it makes the target a policy factory (required,
    or positional), else None."""
    if not callable(target):
        return None
    try:
        found = inspect.signature(target).parameters.get(KEYWORD)
    except (TypeError, ValueError):
        return None
    if found is None:
        return None
    if found.default is not inspect.Parameter.empty and found.kind is found.KEYWORD_ONLY:
        return None  # an option of a plain factory (RegistryExecutor's own policy=None)
    return found


def takes_cap(target: Any) -> bool:
    """Whether a policy factory is a batch policy factory (it takes ``max_concurrency``)."""
    try:
        return "max_concurrency" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


class PolicySubject(SubjectDefaults):
    """P1-P12 for a runtime's tool-call policy, through ``factory(registry, policy)``."""

    name: str = "policy"
    rows = ROWS
    clauses = POLICY_CLAUSES
    headings: Mapping[str, str] = MappingProxyType({"policy": "11. Tool-call policy"})
    entry_points: Mapping[str, str] = MappingProxyType(
        {
            "certify": "`certify(...)` and `polyloop-conformance certify`: certifies an executor",
            "PolicyContract": "the pytest base class for a policy runtime's own test suite",
        }
    )
    checked_by: tuple[str, ...] = ("certify", "PolicyContract")
    contract_classes: tuple[str, ...] = ("PolicyContract",)
    wrong_target: str = (
        "a policy clause: the target is not a policy factory (it has no required policy parameter)"
    )
    words: ReportWords = ReportWords(kind="a tool-call policy", own_fields=True)

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        """More specific than any executor: a factory taking ``policy`` (`policy_parameter`)."""
        return 3 if registry is None and policy_parameter(target) is not None else 0

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        if registry is not None:
            raise TypeError(
                "a policy runtime is certified through its factory: pass "
                "factory(registry, policy) -> ActionExecutor and no registry"
            )
        return "white-box"

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        found = policy_parameter(target)
        name = getattr(target, "__qualname__", type(target).__name__)
        fits = f"{name} cannot be called as factory(registry, policy=ToolPolicy(...))"
        if found is None:
            return None
        if found.kind is inspect.Parameter.POSITIONAL_ONLY:
            return f"{fits}: its policy parameter is positional-only; make it a keyword"
        batch = takes_cap(target)
        keywords: dict[str, Any] = {"max_concurrency": 1} if batch else {}
        try:
            inspect.signature(target).bind(None, policy=None, **keywords)
        except TypeError as exc:
            shape = "registry, max_concurrency=N, policy=..." if batch else "registry, policy"
            return (
                f"{name} cannot be called as factory({shape}) ({exc}); the kit gives each "
                "example its own registry and policy"
            )
        return None

    def trial(self, spec: RunSpec) -> Any:
        from conformance.policy.batch import one_call_factory
        from conformance.policy.search import PolicyTrial

        factory: Callable[..., Any] = spec.target
        if takes_cap(factory):
            return PolicyTrial(
                one_call_factory(factory),
                deadline=spec.deadline,
                runner=spec.runner,
                batch=factory,
            )
        return PolicyTrial(factory, deadline=spec.deadline, runner=spec.runner)

    def watch(self, trial: Any) -> Watched:
        """Nothing to watch between clauses: an example whose executor never gives its loop
        back is reported by the clause it ran in."""
        return Unwatched()

    def search(self, spec: RunSpec, trial: Any, clause_id: str) -> ClauseOutcome:
        from conformance.policy.properties import PROPERTIES
        from conformance.policy.search import search_policy_clause

        if clause_id in BATCH_ONLY and getattr(trial, "batch", None) is None:
            return ClauseOutcome(
                verdict=ClauseStatus.SKIPPED,
                examples=0,
                message=(
                    f"{clause_id} is a clause of batches: certify a batch policy factory "
                    "factory(registry, max_concurrency=N, policy=...) to check it"
                ),
            )
        try:
            return search_policy_clause(
                PROPERTIES[clause_id], trial, spec.settings, spec.seed, spec.name
            )
        except Exception as exc:  # a defect in the kit itself: report, don't crash
            message = f"the kit failed while checking this clause: {describe_exception(exc)}"
            return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)


SUBJECT: Subject = PolicySubject()
"""This subject, as the registry (`conformance.subjects`) loads it."""
