"""Keeps the call being served in `self._call` while validation runs in a worker thread.

A concurrent call overwrites the attribute during that await, so one call runs another's
arguments (E11).
"""

from __future__ import annotations

import asyncio

from polyloop import Action, ActionOutcome, ActionStatus, ToolCall

from ._base import Base

CLAUSE = "E11"


class CurrentCallAttribute(Base):
    _call: ToolCall

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return self.refuse_code(action)
        self._call = action.tool_call
        rejection = await asyncio.to_thread(self.reject, action.tool_call)
        if rejection is not None:
            return self.outcome(ActionStatus.NOT_EXECUTED, rejection, True)
        spec = self.registry.spec_for(self._call.name)
        assert spec is not None
        return await self.call_handler(spec, self._call)


make_executor = CurrentCallAttribute
