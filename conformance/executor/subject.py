"""The executor subject (`conformance._core.subject.Subject`): an action executor, V1-V8 and
E1-E15.

A white-box target is a factory ``Callable[[ToolRegistry], ActionExecutor]``; a black-box one
an executor instance with ``execute`` and the registry it serves. Each clause's property
(`conformance.executor.properties`) is searched on a `Trial` over generated registries (or the
black-box registry), and a failure's counterexample is written by the search
(`conformance.executor.search`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance._core import hypo
from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus
from conformance._core.subject import RunSpec, Subject, SubjectDefaults, Watched
from conformance.executor.oracle import UnresolvedReference
from conformance.executor.rows import ROWS
from conformance.executor.runner import Trial
from conformance.executor.search import clause_settings, no_scenario, search_clause
from polyloop import ToolRegistry

if TYPE_CHECKING:
    from conformance.executor.properties import ScenarioSource

# `conformance.executor.properties` (and with it the strategies and hypothesis-jsonschema) is
# imported when a trial is built, not when this module is: the pytest plugin imports the
# package at pytest start-up, where loading Hypothesis's Unicode tables is not allowed.

__all__ = ["SUBJECT", "ExecutorSubject", "ExecutorTrial"]


@dataclass(kw_only=True, eq=False)
class ExecutorTrial:
    """The executor subject's trial: the target's runner and where scenarios come from."""

    trial: Trial
    source: ScenarioSource


class ExecutorSubject(SubjectDefaults):
    """V1-V8 and E1-E15 for any action executor."""

    name: str = "executor"
    rows = ROWS
    clauses: tuple[str, ...] = tuple(row.id for row in ROWS)
    headings: Mapping[str, str] = MappingProxyType(
        {"validation": "5. Validation", "dispatch": "6. Dispatch"}
    )
    entry_points: Mapping[str, str] = MappingProxyType(
        {
            "certify": "`certify(...)` and `polyloop-conformance certify`: certifies an executor",
            "ExecutorContract": "the pytest base class for an executor's own test suite",
        }
    )
    checked_by: tuple[str, ...] = ("certify", "ExecutorContract")
    contract_classes: tuple[str, ...] = ("ExecutorContract",)
    wrong_target: str = "a clause of action executors: the target is not an action executor"
    preload: tuple[str, ...] = ("conformance.executor.properties",)

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        """Any factory, and any instance with ``execute``: the kit's fallback subject."""
        return 1 if (callable(target) if registry is None else self.is_instance(target)) else 0

    def is_instance(self, found: object) -> bool:
        return callable(getattr(found, "execute", None))

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        if registry is None:
            if not callable(target):
                raise TypeError(
                    f"certify(target) needs a factory Callable[[ToolRegistry], "
                    f"ActionExecutor], got {type(target).__name__}; to certify an "
                    "executor instance (black-box), pass registry= too"
                )
            return "white-box"
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
        if not self.is_instance(target):
            raise TypeError(
                f"black-box certify needs an executor with an execute (or execute_batch) "
                f"method, got {type(target).__name__}"
            )
        return "black-box"

    def trial(self, spec: RunSpec) -> ExecutorTrial:
        from conformance.executor.properties import ScenarioSource

        source = replace(
            ScenarioSource.generated(spec.seed, hypo.profile(spec.profile).pool_size)
            if spec.registry is None
            else ScenarioSource.from_registry(spec.registry),
            hardened=spec.level == "hardened",
        )
        white = spec.mode == "white-box"
        trial = Trial(
            factory=spec.target if white else None,
            executor=None if white else spec.target,
            deadline=spec.deadline,
            runner=spec.runner,
        )
        return ExecutorTrial(trial=trial, source=source)

    def watch(self, trial: ExecutorTrial) -> Watched:
        return trial.trial

    def search(self, spec: RunSpec, trial: ExecutorTrial, clause_id: str) -> ClauseOutcome:
        from conformance.executor.properties import PROPERTIES

        prop = PROPERTIES[clause_id]
        black_box = spec.mode == "black-box"
        if black_box and not prop.black_box:
            message = "needs the kit's scripted handlers: certify a factory (white-box) to check it"
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=message)
        inapplicable = prop.inapplicable(trial.source)
        if inapplicable is not None:
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=inapplicable)
        stuck_since = trial.trial.stuck_since
        if black_box and stuck_since is not None:
            message = (
                f"not run: the executor has been stuck since {stuck_since} (a call never gave "
                "its event loop back, and a black-box executor cannot be rebuilt); certify "
                f"again with --only {prop.clause} to check this clause on a fresh executor"
            )
            return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)
        silent_since = trial.trial.silent_since
        if silent_since is not None:
            message = (
                f"not judged: the executor stopped answering during {silent_since} (a fresh "
                "executor did not answer one plain call); certify again with "
                f"--only {prop.clause} to judge this clause on its own"
            )
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=message)
        if black_box:
            missing = no_scenario(prop, trial.source, spec.seed)
            if missing is not None:
                return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=missing)
        trial.trial.cancellations = trial.trial.judged = 0
        settings = clause_settings(spec.settings)
        try:
            return search_clause(prop, trial.source, trial.trial, settings, spec.seed, spec.name)
        except UnresolvedReference as exc:  # a schema the kit refuses to resolve: not a kit bug
            return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=str(exc))


SUBJECT: Subject = ExecutorSubject()
"""This subject, as the registry (`conformance.subjects`) loads it."""
