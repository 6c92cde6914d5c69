"""Shields the handler and, when cancelled, waits for it to finish and returns its outcome anyway.

Meant to avoid abandoning a half-done side effect, it swallows the cancellation (E6).
"""

from __future__ import annotations

import asyncio

from polyloop import ActionOutcome, ToolCall, ToolSpec

from ._base import Base

CLAUSE = "E6"


class FinishAfterCancel(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        task = asyncio.ensure_future(super().call_handler(spec, call))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            return await task


make_executor = FinishAfterCancel
