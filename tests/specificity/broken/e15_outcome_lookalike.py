"""Returns its own frozen `Outcome` dataclass mirroring ActionOutcome's fields, to avoid the import.

E15 wants ActionOutcome instances; a look-alike with the same fields is not one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from polyloop import ActionStatus

from ._base import Base

CLAUSE = "E15"


@dataclass(frozen=True, kw_only=True)
class Outcome:
    status: ActionStatus
    observation: str
    observation_is_synthetic: bool
    env_reported_completion: bool
    observation_truncated_chars: int


class OutcomeLookalike(Base):
    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> Any:
        return Outcome(
            status=status,
            observation=observation,
            observation_is_synthetic=synthetic,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )


make_executor = OutcomeLookalike
