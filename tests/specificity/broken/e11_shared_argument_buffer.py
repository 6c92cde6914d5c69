"""Reuses one argument dict for every call, cleared and refilled, to avoid an allocation per call.

Concurrent handlers then read each other's arguments from the shared buffer (E11).
"""

from __future__ import annotations

from typing import Any

from polyloop import ToolCall, ToolRegistry

from ._base import Base, plain

CLAUSE = "E11"


class SharedArgumentBuffer(Base):
    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._buffer: dict[str, Any] = {}

    def arguments(self, call: ToolCall) -> Any:
        self._buffer.clear()
        self._buffer.update(plain(call.arguments))
        return self._buffer


make_executor = SharedArgumentBuffer
