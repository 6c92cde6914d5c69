"""An action executor over a batch executor, each call a batch of one (contract B4): how the
batch and policy subjects certify a batch factory on the clauses of one call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polyloop import Action

__all__ = ["OneCallBatch"]


class OneCallBatch:
    """An action executor over a batch executor: each call is a batch of one (B4)."""

    cancelled_by_class = True
    """B4/B14: a batch cancelled from outside raises a CancelledError, not necessarily the
    handler's object or the kit's (E6 then judges the class; a handler's own BaseException
    must still come back as that object, B15)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def execute(self, action: Action) -> Any:
        answer = await self.inner.execute_batch([action])
        if isinstance(answer, tuple) and len(answer) == 1:
            return answer[0]
        return answer  # not one outcome: judged as what execute returned (E15)

    def parameters(self) -> Mapping[str, str]:
        parameters = getattr(self.inner, "parameters", None)
        found: Mapping[str, str] = parameters() if callable(parameters) else {}
        return found

    def __repr__(self) -> str:
        return f"OneCallBatch({self.inner!r})"
