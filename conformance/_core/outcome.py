"""What every subject's clause search shares: the conclusion of one clause's run
(`ClauseOutcome`) and the error that says the target itself could not be built
(`TargetError`). The executor and batch subjects both produce them; the engine turns them into
report rows."""

from __future__ import annotations

from dataclasses import dataclass

from conformance._core.report import ClauseStatus, Counterexample

__all__ = ["ClauseOutcome", "TargetError"]


class TargetError(Exception):
    """The factory (or the executor's construction) failed: an ``error``, not a ``fail``."""


@dataclass(frozen=True, kw_only=True)
class ClauseOutcome:
    """What one clause's Hypothesis run concluded."""

    verdict: ClauseStatus
    examples: int
    message: str | None = None
    counterexample: Counterexample | None = None
