"""Coalesces in-flight calls, keyed by tool name only: a second call joins the running one's result.

Concurrent calls of one tool with different arguments then share the first call's outcome (E11).
"""

from __future__ import annotations

import asyncio

from polyloop import ActionOutcome, ToolCall, ToolRegistry, ToolSpec

from ._base import Base

CLAUSE = "E11"


class CoalesceByName(Base):
    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._in_flight: dict[str, asyncio.Future[ActionOutcome]] = {}

    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        running = self._in_flight.get(call.name)
        if running is not None:
            return await asyncio.shield(running)
        task = asyncio.ensure_future(super().call_handler(spec, call))
        self._in_flight[call.name] = task
        try:
            return await task
        finally:
            del self._in_flight[call.name]


make_executor = CoalesceByName
