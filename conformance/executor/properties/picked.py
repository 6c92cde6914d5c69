"""Hand-picked tools, calls and values of the validation traps: numbers and formats at the
edges of what a schema accepts (V1), and tool sets and calls with many names to list (V2, V4,
V5, V8), where a rejection must name enough of them and still stay under 2,000 characters."""

from __future__ import annotations

from typing import Any

from conformance.executor.properties.scenarios import call, object_tool
from conformance.executor.strategies import ToolDef

__all__ = [
    "BIG_NUMBERS",
    "CROWDED",
    "D4_EXCLUSIVE",
    "EDGES",
    "EDGE_VALUES",
    "EXTRAS",
    "NUMBERS",
    "VAST",
    "VAST_CALL",
    "VAST_KEYS",
    "WIDE",
    "WIDE_KEYS",
]


def _one_tool(name: str, properties: dict[str, Any], **schema: Any) -> tuple[ToolDef, ...]:
    return (object_tool(name, properties, **schema),)


CROWDED = tuple(
    ToolDef(name=f"{index:02d}_" + "long_tool_name_" * 14, description="", parameters={})
    for index in range(25)
)


WIDE_KEYS = [f"k{index:02d}_req" for index in range(12)]
WIDE = _one_tool(
    "wide",
    {key: {"type": "string"} for key in WIDE_KEYS},
    required=WIDE_KEYS,
    additionalProperties=False,
)
"""Twelve required string keys and a closed schema: a call may lack more keys, bring more
extra ones or mistype more of them than a message must list in full (`validation.MUST_NAME`)."""
EXTRAS = {f"x{index:02d}_extra": "v" for index in range(12)}
VAST_KEYS = [f"v{index:02d}_" + "property_name_" * 4 for index in range(22)]
VAST = _one_tool(
    "vast",
    {key: {"type": "string"} for key in VAST_KEYS},
    required=VAST_KEYS,
    additionalProperties=False,
)
VAST_CALL = call(
    "vast",
    {
        **{key: index for index, key in enumerate(VAST_KEYS[:10])},
        **{f"x{index:02d}_" + "extra_argument_" * 4: "v" for index in range(12)},
    },
)
"""Ten keys of the wrong type, twelve missing and twelve unexpected, all with long names: a
message that lists each problem runs past 2,000 characters unless it is cut (V8), and what it
keeps must still name the missing keys (V4)."""


EDGES = _one_tool(
    "edges",
    {
        "lo": {"type": "integer", "minimum": 1, "maximum": 10},
        "f": {"type": "number", "minimum": 0.5, "maximum": 100.5},
        "ex": {"type": "number", "exclusiveMinimum": 2, "exclusiveMaximum": 5},
        "s": {"type": "string", "maxLength": 8},
        "when": {"type": "string", "format": "date-time"},
        "email": {"type": "string", "format": "email"},
        "uri": {"type": "string", "format": "uri"},
    },
)
D4_EXCLUSIVE = _one_tool(
    "edges",
    {"x": {"type": "number", "minimum": 2, "exclusiveMinimum": True}},
    **{"$schema": "http://json-schema.org/draft-04/schema#"},
)
NUMBERS = _one_tool("count", {"n": {"type": "integer"}, "x": {"type": "number"}})
EDGE_VALUES: tuple[dict[str, Any], ...] = (
    {"lo": 1},
    {"lo": 10},
    {"f": 0.5},
    {"f": 100.5},
    {"ex": 2.5},
    {"ex": 4.5},
    {"s": "日本語のテキスト"},
    {"s": "\U0001f600" * 8},
    {"s": "e\u0301" * 4},
    {"when": "1996-12-19T16:39:57-08:00"},
    {"when": "1985-04-12T23:20:50.52Z"},
    {"when": "1985-04-12t23:20:50.52z"},
    {"when": "1990-12-31T23:59:60Z"},
    {"email": "user+tag@example.co.uk"},
    {"uri": "urn:isbn:0451450523"},
)
BIG_NUMBERS: tuple[Any, ...] = (1e16, 1e300, -0.0, 2**63, 2**64, -(2**63) - 1, 2**64 + 1, 10**400)

UNLISTED_REQUIRED = _one_tool("unlisted", {"a": {"type": "string"}}, required=["a", "b"])
"""V4: a required key that ``properties`` does not list is required all the same."""

CLOSED_BARE = (
    ToolDef(
        name="closed", description="", parameters={"type": "object", "additionalProperties": False}
    ),
    object_tool("closed_empty", {}, additionalProperties=False),
)
"""V5: ``additionalProperties: false`` with no (or empty) ``properties`` allows no key."""


ANNOTATED = (
    ToolDef(
        name="annotated",
        description="",
        parameters={
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "day": {"type": "string", "format": "date"},
                "mail": {"type": "string", "format": "email"},
                "link": {"type": "string", "format": "uri"},
                "id": {"type": "string", "format": "uuid"},
                "pair": {"enum": [[1, 2], {"k": 1}, "x"]},
                "fixed": {"const": ["a", "b"]},
                "name": {"type": "string", "pattern": "[a-z]"},
                "file": {"type": "string", "pattern": "\\.py$"},
            },
        },
    ),
)
"""V1: keywords full JSON Schema judges more loosely than a hand-written check does."""
LAX: tuple[dict[str, Any], ...] = (
    {"when": "yesterday", "day": "2024-13-45", "mail": "no at sign", "link": "not a uri"},
    {"id": "not-a-uuid"},
    {"when": "1985-04-12T23:20:50.52+01:00"},
    {"pair": [1, 2]},
    {"pair": {"k": 1}},
    {"fixed": ["a", "b"]},
    {"name": "Ab-1"},
    {"file": "src/app.py"},
    {"name": "x!", "file": "a.py.bak.py"},
)
"""Arguments JSON Schema accepts for `ANNOTATED` (formats are annotations; enum and const
compare JSON values; patterns are unanchored)."""
