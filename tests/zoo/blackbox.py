"""A registry served by real (not kit-scripted) handlers, for certifying zoo executors black-box.

Its schemas give every black-box clause something to aim at: required keys (V4), a closed
schema (V5), typed properties including an integer (V6, and 3.0 for V1). Its handlers sleep
briefly, so the kit can catch a call suspended and cancel it (E6).
"""

from __future__ import annotations

import asyncio
from typing import Any

from conformance.executor.properties import black_box_clauses
from polyloop import ToolRegistry, ToolSpec

from .base import ZooExecutor
from .broken import (
    AcceptsBoolForInteger,
    DispatchesNonMappingArguments,
    EchoesArgumentValues,
    IgnoresAdditionalPropertiesFalse,
    IgnoresRequired,
    NoToolCallExecuted,
    RejectionNotSynthetic,
    RejectsIntegralFloat,
    ReportsCompletion,
    SwallowsCancellation,
    UnknownToolMessageOmitsTools,
)

BLACK_BOX_CLAUSES = frozenset(black_box_clauses())
"""The clauses `certify` checks black-box (the others need the kit's scripted handlers), read
from the property table rather than restated."""


async def _search(arguments: dict[str, Any]) -> str:
    await asyncio.sleep(0.002)
    return f"{len(arguments)} results"


async def _fetch(arguments: dict[str, Any]) -> str:
    await asyncio.sleep(0.002)
    return "<html></html>"


def black_box_registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolSpec(
                name="search",
                description="Search the index.",
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "minLength": 1},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "sort": {"enum": ["relevance", "date"]},
                        "exact": {"type": "boolean"},
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
                handler=_search,
            ),
            ToolSpec(
                name="fetch",
                description="Fetch a URL.",
                parameters={
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "url": {"type": "string"},
                        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                        "method": {"type": "string", "enum": ["GET", "HEAD"]},
                        "retries": {"type": ["integer", "null"]},
                    },
                    "required": ["url"],
                },
                handler=_fetch,
            ),
        ]
    )


BLACK_BOX_VISIBLE: tuple[type[ZooExecutor], ...] = (
    NoToolCallExecuted,
    RejectionNotSynthetic,
    ReportsCompletion,
    SwallowsCancellation,
    UnknownToolMessageOmitsTools,
    DispatchesNonMappingArguments,
    IgnoresRequired,
    IgnoresAdditionalPropertiesFalse,
    AcceptsBoolForInteger,
    RejectsIntegralFloat,
    EchoesArgumentValues,
)
"""Broken executors whose bug shows without the kit's handlers, on `black_box_registry()`."""
