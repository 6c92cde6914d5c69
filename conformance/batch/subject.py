"""Telling a batch executor from an action executor, and checking V/E through one-call batches.

A white-box target is a batch factory when the object it builds has ``execute_batch``. The kit
calls it ``factory(registry, max_concurrency=N)``: a class is recognised by its attribute, any
other callable by building one executor over a one-tool registry. A factory whose executor has
``execute_batch`` but that cannot take the ``max_concurrency`` keyword is a set-up error
naming the keyword (the kit must choose the cap each schedule is played with, B7/B8).

B4 makes a batch of one equivalent to ``execute``: same outcome (or the same exception), same
handler calls. So the V and E clauses are certified on `OneCallBatch`, whose ``execute(a)`` is
``(await executor.execute_batch([a]))[0]``, and the report says so.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from conformance._core.one_call import OneCallBatch
from conformance._core.outcome import ClauseOutcome
from conformance._core.subject import (
    RunSpec,
    Subject,
    SubjectDefaults,
    Unwatched,
    Watched,
)
from conformance._core.wording import ReportWords
from conformance.batch import BATCH_CLAUSES
from conformance.batch.rows import ROWS
from polyloop import ToolRegistry, ToolSpec

__all__ = [
    "CAP_FOR_ONE_CALL",
    "SUBJECT",
    "BatchSubject",
    "OneCallBatch",
    "check_batch_factory",
    "executes",
    "is_batch_target",
    "one_call_factory",
]

CAP_FOR_ONE_CALL = 4
"""The max_concurrency a factory is given for the V/E clauses (one call: it changes nothing)."""

KEYWORD = "max_concurrency"


async def _probe_handler(arguments: Any) -> str:
    return "ok"


def _probe_registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolSpec(
                name="probe",
                description="Answers ok.",
                parameters={"type": "object"},
                handler=_probe_handler,
            )
        ]
    )


def executes(found: object) -> bool:
    """An executor instance: it has ``execute`` (or, a batch executor, ``execute_batch``)."""
    return callable(getattr(found, "execute", None)) or callable(
        getattr(found, "execute_batch", None)
    )


def takes_cap(factory: Callable[..., Any]) -> bool | None:
    """Whether ``factory(registry, max_concurrency=N)`` binds (None: no signature to read)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(None, **{KEYWORD: 1})
    except TypeError:
        return False
    return True


def is_batch_target(target: Any, registry: ToolRegistry | None) -> bool:
    """Whether `target` is certified as a batch executor: an instance (black-box) or a
    factory's product (white-box) with ``execute_batch``. A factory that fails here is left to
    the V/E path, which reports its failure."""
    if registry is not None:
        return callable(getattr(target, "execute_batch", None))
    if isinstance(target, type):
        return callable(getattr(target, "execute_batch", None))
    if not callable(target):
        return False
    cap = takes_cap(target)
    try:
        built = target(_probe_registry(), **{KEYWORD: 1}) if cap else target(_probe_registry())
    except KeyboardInterrupt:
        raise
    except BaseException:  # SystemExit too: the V/E path reports it, clause by clause
        if cap is not None:
            return False
        try:
            built = target(_probe_registry())
        except KeyboardInterrupt:
            raise
        except BaseException:
            return False
    return callable(getattr(built, "execute_batch", None))


def check_batch_factory(target: Any) -> str | None:
    """Why a batch factory cannot be certified (it does not take ``max_concurrency=``)."""
    if takes_cap(target) is False:
        name = getattr(target, "__qualname__", type(target).__name__)
        return (
            f"{name} builds a batch executor but cannot be called as "
            f"factory(registry, {KEYWORD}=N); the kit gives every batch the cap it checks "
            f"(B7, B8): add a {KEYWORD} keyword parameter"
        )
    return None


def one_call_factory(factory: Callable[..., Any]) -> Callable[[ToolRegistry], Any]:
    """The action-executor factory the V/E clauses certify."""

    def make(registry: ToolRegistry) -> Any:
        built = factory(registry, **{KEYWORD: CAP_FOR_ONE_CALL})
        if not callable(getattr(built, "execute_batch", None)):
            return built  # judged by the V/E path as it is
        return OneCallBatch(built)

    make.cancelled_by_class = True  # type: ignore[attr-defined]  # as OneCallBatch's
    make.__qualname__ = getattr(factory, "__qualname__", "factory")
    make.__module__ = getattr(factory, "__module__", __name__)
    return make


class BatchSubject(SubjectDefaults):
    """B1-B18 for a batch executor, and V/E through one-call batches (B4)."""

    name: str = "batch"
    rows = ROWS
    clauses = BATCH_CLAUSES
    headings: Mapping[str, str] = MappingProxyType({"batch": "10. Batch dispatch"})
    entry_points: Mapping[str, str] = MappingProxyType(
        {
            "certify": "`certify(...)` and `polyloop-conformance certify`: certifies an executor",
            "BatchExecutorContract": "the pytest base class for a batch executor's own test suite",
        }
    )
    checked_by: tuple[str, ...] = ("certify", "BatchExecutorContract")
    contract_classes: tuple[str, ...] = ("BatchExecutorContract",)
    through: str | None = "executor"
    wrong_target: str = (
        "a batch clause: the target is not a batch executor (its executor has no execute_batch)"
    )
    words: ReportWords = ReportWords(
        kind="a batch executor",
        own_fields=True,
        through_label="batch",
        through_text="checked through one-call batches (B4: a batch of one is execute)",
        through_suffix="through one-call batches",
        through_detail=(
            "checked through a batch of one: B4 makes execute_batch([a])[0] equivalent to "
            "execute(a)"
        ),
    )

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        """More specific than an action executor: what the factory builds has execute_batch."""
        return 2 if is_batch_target(target, registry) else 0

    def is_instance(self, found: object) -> bool:
        return callable(getattr(found, "execute_batch", None))

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        if registry is None:
            return "white-box"
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
        return "black-box"

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        return check_batch_factory(target) if registry is None else None

    def adapt(self, target: Any, mode: str) -> Any:
        """The action executor (factory) the V/E clauses certify: each call a batch of one."""
        return one_call_factory(target) if mode == "white-box" else OneCallBatch(target)

    def trial(self, spec: RunSpec) -> Any:
        from conformance.batch.trial import BatchTrial

        white = spec.mode == "white-box"
        return BatchTrial(
            spec.target if white else None,
            executor=None if white else spec.target,
            deadline=spec.deadline,
            runner=spec.runner,
        )

    def watch(self, trial: Any) -> Watched:
        """Nothing to watch between clauses: a schedule that never gives its loop back is
        reported by the clause it ran in (`conformance.batch.trial.Stuck`), and a batch
        executor is always checked through the executor subject, whose trial the engine
        watches."""
        return Unwatched()

    def search(self, spec: RunSpec, trial: Any, clause_id: str) -> ClauseOutcome:
        from conformance.batch.run import batch_outcome

        return batch_outcome(spec.mode, trial, spec.settings, spec.seed, spec.name, clause_id)


SUBJECT: Subject = BatchSubject()
"""This subject, as the registry (`conformance.subjects`) loads it."""
