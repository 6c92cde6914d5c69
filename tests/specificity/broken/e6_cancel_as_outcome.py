"""A cancelled tool call is reported as a NOT_EXECUTED outcome ("the call was cancelled").

Cancellation must propagate out of execute with no outcome at all (E6).
"""

from __future__ import annotations

import asyncio

from polyloop import ActionOutcome, ActionStatus, ToolCall, ToolSpec

from ._base import Base

CLAUSE = "E6"


class CancelAsOutcome(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        try:
            return await super().call_handler(spec, call)
        except asyncio.CancelledError:
            return self.outcome(ActionStatus.NOT_EXECUTED, "the tool call was cancelled", True)


make_executor = CancelAsOutcome
