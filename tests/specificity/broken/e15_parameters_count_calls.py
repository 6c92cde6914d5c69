"""parameters() also reports how many calls the executor has served, as a handy statistic.

Reproducibility parameters must be the same on every call (E15).
"""

from __future__ import annotations

from collections.abc import Mapping

from polyloop import Action, ActionOutcome

from ._base import Base

CLAUSE = "E15"


class ParametersCountCalls(Base):
    calls = 0

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names()), "calls": str(self.calls)}

    async def execute(self, action: Action) -> ActionOutcome:
        self.calls += 1
        return await super().execute(action)


make_executor = ParametersCountCalls
