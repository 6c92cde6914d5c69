"""Re-raises a cancellation as TimeoutError "so callers only have to catch Exception".

Cancellation must propagate unchanged (E6), not as another exception.
"""

from __future__ import annotations

import asyncio

from polyloop import ActionOutcome, ToolCall, ToolSpec

from ._base import Base

CLAUSE = "E6"


class CancelToTimeout(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        try:
            return await super().call_handler(spec, call)
        except asyncio.CancelledError:
            raise TimeoutError(f"tool {call.name!r} was cancelled") from None


make_executor = CancelToTimeout
