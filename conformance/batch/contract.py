"""`BatchExecutorContract`: the batch clauses as a pytest base class, one test per clause.

Subclass it in a test module and provide the batch executor factory::

    from conformance import BatchExecutorContract

    class TestMyScheduler(BatchExecutorContract):
        level = "strict"

        @staticmethod
        def make_executor(registry, *, max_concurrency):
            return MyScheduler(registry, max_concurrency=max_concurrency)

The kit calls ``make_executor(registry, max_concurrency=N)`` with the cap each schedule is
played with. Every clause a batch certification checks becomes its own test: B1–B18, and the
V and E clauses through one-call batches (B4), named ``test_<ID>_<title>`` as in
`ExecutorContract`, with the same options and the same failure text.
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance._core.clause_tests import add_clause_tests
from conformance.batch import BATCH_CLAUSES
from conformance.contract import (
    _BASES,
    _RECEIVES,
    _SIGNATURE,
    ExecutorContract,
    _clause_test,
    _test_name,
)
from conformance.engine import CERTIFIED_CLAUSES
from polyloop import BatchExecutor, ToolRegistry

__all__ = ["BatchExecutorContract"]

_ALL = CERTIFIED_CLAUSES + BATCH_CLAUSES


class BatchExecutorContract(ExecutorContract):
    """Base class for a pytest test class certifying a batch executor (white-box)."""

    _CLAUSES: ClassVar[tuple[str, ...]] = _ALL

    @staticmethod
    def make_executor(registry: ToolRegistry, **kwargs: Any) -> BatchExecutor:  # type: ignore[override]
        """Return a fresh batch executor serving `registry` with ``max_concurrency`` (a
        keyword argument) as its cap (override this)."""
        raise NotImplementedError


_BASES.append(BatchExecutorContract)
_SIGNATURE[_ALL] = "registry, *, max_concurrency"
_RECEIVES[_ALL] = "the registry and max_concurrency="

add_clause_tests(
    BatchExecutorContract,
    BATCH_CLAUSES,
    _clause_test,
    name=_test_name,
    doc=lambda clause: f"{clause.id} ({clause.level}): {clause.title}.\n\n{clause.summary}",
)
