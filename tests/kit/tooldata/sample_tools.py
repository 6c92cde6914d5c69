"""Tools for the check-tools CLI tests: `registry` holds one correct and one broken tool."""

from __future__ import annotations

from typing import Any

from polyloop import ReplayPolicy, ToolRegistry, ToolSpec

_TABLE = {"a": "alpha", "b": "beta"}


async def lookup(arguments: dict[str, Any]) -> str:
    return _TABLE[arguments["key"]]  # KeyError for other keys: an ordinary observation


async def count_words(arguments: dict[str, Any]) -> str:
    return len(arguments["text"].split())  # type: ignore[return-value]  # the bug under test


registry = ToolRegistry(
    [
        ToolSpec(
            name="lookup",
            description="Look a key up.",
            parameters={
                "type": "object",
                "properties": {"key": {"type": "string"}},
                "required": ["key"],
            },
            replay_policy=ReplayPolicy.SAFE,
            handler=lookup,
        ),
        ToolSpec(
            name="count_words",
            description="Count the words of a text.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string", "pattern": "^[a-z]+ [a-z]+$"}},
                "required": ["text"],
            },
            handler=count_words,
        ),
    ]
)

not_tools = 42
