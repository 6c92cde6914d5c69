"""The recovery subject (`conformance._core.subject.Subject`): durable runtimes, J1-J13.

Its target is a factory ``factory(registry, directory)`` returning an object with ``async
run(batch_id, actions)`` (contract section 12), recognised by its ``directory`` parameter. Every
lifetime is a fresh process that imports the factory, so the factory must be importable as
``module:attr`` (a module-level function or class, or a class attribute): a lambda, a nested
function or one defined in ``__main__`` is a set-up error saying so.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Mapping
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
from conformance._core.wording import ReportWords
from conformance.recovery import RECOVERY_CLAUSES
from conformance.recovery.rows import ROWS
from polyloop import ToolRegistry

__all__ = ["SUBJECT", "RecoverySubject", "importable_name", "takes_directory"]

KEYWORD = "directory"
J12_REASON = (
    "not checked: a SIGKILL never loses what the runtime wrote to the page cache, so only a "
    "power-loss simulation (a file system that drops unsynced writes) can tell fsynced records "
    "from written ones; polyloop's own store is checked by its library tests"
)


def takes_directory(target: Any) -> bool:
    """Whether `target` is a factory with a ``directory`` parameter (after the registry)."""
    if not callable(target):
        return False
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(parameters) >= 2 and any(p.name == KEYWORD for p in parameters[1:])


def importable_name(target: Any) -> str | None:
    """``module:attr`` that imports back to `target` in a fresh process, or None: its own
    module and qualified name, else a module-level name bound to it in an imported module
    (``factory = store_factory(...)``)."""
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if (
        isinstance(module, str)
        and isinstance(qualname, str)
        and "<" not in qualname
        and module != "__main__"
        and _resolves(module, qualname, target)
    ):
        return f"{module}:{qualname}"
    for name, loaded in list(sys.modules.items()):
        if name == "__main__" or name.startswith("_") or loaded is None:
            continue
        try:
            names = list(vars(loaded).items())
        except TypeError:
            continue
        for attr, value in names:
            if value is target and not attr.startswith("_"):
                return f"{name}:{attr}"
    return None


def _resolves(module: str, qualname: str, target: Any) -> bool:
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:
        return False
    return found is target or getattr(found, "__func__", None) is target


class RecoverySubject(SubjectDefaults):
    """J1-J13 for a durable runtime, through lifetimes in child processes."""

    name: str = "recovery"
    rows = ROWS
    clauses = RECOVERY_CLAUSES
    headings: Mapping[str, str] = MappingProxyType({"recovery": "12. Crash recovery"})
    entry_points: Mapping[str, str] = MappingProxyType(
        {
            "RecoveryContract": "the pytest base class for a durable runtime's own test suite",
        }
    )
    checked_by: tuple[str, ...] = ("certify", "RecoveryContract")
    contract_classes: tuple[str, ...] = ("RecoveryContract",)
    wrong_target: str = (
        "a recovery clause: the target is not a recovery factory factory(registry, directory)"
    )
    words: ReportWords = ReportWords(kind="a durable runtime", own_fields=True)

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        """A factory with a ``directory`` parameter: more specific than any executor."""
        return 3 if registry is None and takes_directory(target) else 0

    def is_instance(self, found: object) -> bool:
        return False  # a runtime instance cannot be restarted in a fresh process

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        if registry is not None:
            raise TypeError(
                "a recovery target is a factory(registry, directory), certified without "
                "registry=: the kit builds the registry in every lifetime"
            )
        return "white-box"

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        if importable_name(target) is None:
            name = getattr(target, "__qualname__", type(target).__name__)
            return (
                f"{name} cannot be imported by a fresh process: the kit runs every lifetime "
                "of a recovery target in a new process that imports the factory as "
                "module:attr, so bind it to a module-level name (a lambda or a nested function "
                "reachable from no module, or one defined in __main__, cannot be imported)"
            )
        return None

    def trial(self, spec: RunSpec) -> Any:
        from conformance.recovery.search import RecoveryTrial

        name = importable_name(spec.target)
        assert name is not None  # set_up_problem refused it otherwise
        return RecoveryTrial(target=name)

    def watch(self, trial: Any) -> Watched:
        return Unwatched()  # every lifetime is time-boxed and reported by its clause

    def search(self, spec: RunSpec, trial: Any, clause_id: str) -> ClauseOutcome:
        from conformance.recovery.search import search_recovery_clause

        if clause_id == "J12":
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=J12_REASON)
        return search_recovery_clause(trial, clause_id, spec.settings, spec.seed, spec.name)


SUBJECT: Subject = RecoverySubject()
"""This subject, as the registry (`conformance.subjects`) loads it."""
