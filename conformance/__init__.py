"""The polyloop conformance kit: certify an action executor against the tool contract.

Entry points: `certify` (programmatic, returns a `Report`; action executors, batch executors
and policy factories), `ExecutorContract`, `BatchExecutorContract` and `PolicyContract`
(pytest base classes, one test per clause), `check_tool`/`check_registry`/`ToolContract` (for
tool authors) and the ``polyloop-conformance`` command line. Install with the
``polyloop[conformance]`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformance import _extra  # noqa: F401  (first: without the extra, one line naming it)
from conformance._core.report import ClauseResult, Counterexample, Report
from conformance.catalog import CLAUSES, Clause
from conformance.contract import (
    BatchExecutorContract,
    ExecutorContract,
    PolicyContract,
    RecoveryContract,
)
from conformance.engine import certify

if TYPE_CHECKING:
    from conformance.tools import ToolContract, check_registry, check_tool

__all__ = [
    "CLAUSES",
    "BatchExecutorContract",
    "Clause",
    "ClauseResult",
    "Counterexample",
    "ExecutorContract",
    "PolicyContract",
    "RecoveryContract",
    "Report",
    "ToolContract",
    "certify",
    "check_registry",
    "check_tool",
]

_TOOLCHECK = frozenset({"ToolContract", "check_registry", "check_tool"})


def __getattr__(name: str) -> Any:
    # The pytest plugin imports this package while pytest starts, when hypothesis-jsonschema
    # (which the tool checks use) may not be imported yet: it loads Hypothesis's Unicode
    # tables. So the tool checks load on first use.
    if name in _TOOLCHECK:
        from conformance import tools

        value = getattr(tools, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
