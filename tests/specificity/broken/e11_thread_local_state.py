"""Per-call state lives in a `threading.local`, believed to isolate calls, across a yield.

All asyncio tasks share one thread, so concurrent calls overwrite each other's state (E11).
"""

from __future__ import annotations

import asyncio
import threading

from polyloop import Action, ActionOutcome, ActionStatus, ToolRegistry

from ._base import Base

CLAUSE = "E11"


class ThreadLocalState(Base):
    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._state = threading.local()

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return self.refuse_code(action)
        self._state.call = action.tool_call
        await asyncio.sleep(0)  # let other work run before a possibly long tool
        call = self._state.call
        rejection = self.reject(call)
        if rejection is not None:
            return self.outcome(ActionStatus.NOT_EXECUTED, rejection, True)
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        return await self.call_handler(spec, call)


make_executor = ThreadLocalState
