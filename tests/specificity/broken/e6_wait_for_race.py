"""Runs the handler under a plain `asyncio.wait_for` deadline, trusting it with cancellation.

Before Python 3.12 wait_for returns the result when a cancellation arrives as the handler
finishes, so that cancellation is lost (E6).
"""

from __future__ import annotations

import asyncio

from polyloop import ActionOutcome, ToolCall, ToolSpec

from ._base import Base

CLAUSE = "E6"


class WaitForRace(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        return await asyncio.wait_for(super().call_handler(spec, call), timeout=600)


make_executor = WaitForRace
