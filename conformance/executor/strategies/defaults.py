"""Schemas with ``default`` values, for the clauses about what a handler receives (E8, E13).

In JSON Schema ``default`` is an annotation: validation ignores it, and the arguments a handler
gets are exactly the call's (E8), keys the call omits stay omitted. Runtimes built on model
classes (pydantic, and jsonschema's "extend with default" recipe) fill them in; a call that
omits a defaulted key is where that shows, so E8 and E13 draw their tools from schemas where
every property that can have one has a realistic default (argument pools omit an optional key
about half the time)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from conformance.executor.strategies.schemas import ToolDef, tool_set_pool

_TYPED_DEFAULTS: dict[str, Any] = {
    "string": "auto",
    "integer": 10,
    "number": 0.5,
    "boolean": False,
    "null": None,
    "array": [],
    "object": {},
}
_NESTED = ("properties", "$defs", "definitions", "patternProperties")


def _default_for(node: Mapping[str, Any]) -> tuple[bool, Any]:
    """Whether a realistic default exists for a property schema, and which: its first enum
    member, its const, or a value of its (first known) type within its lower bound."""
    if "$ref" in node:
        return False, None  # a sibling of $ref is inert up to draft-07: keep the schema as is
    if "const" in node:
        return True, node["const"]
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        return True, enum[0]
    declared = node.get("type")
    names = [declared] if isinstance(declared, str) else declared
    known = [n for n in names if n in _TYPED_DEFAULTS] if isinstance(names, list) else []
    if not known:
        return False, None
    value = _TYPED_DEFAULTS[known[0]]
    low = node.get("minimum")
    if known[0] in ("integer", "number") and isinstance(low, int) and not isinstance(low, bool):
        value = max(value, low)
    return True, value


def with_defaults(node: Any) -> Any:
    """`node` (a ``parameters`` schema) with a ``default`` on every property that can have
    one, at every depth (nested objects, array items, ``anyOf`` branches, ``$defs``)."""
    if isinstance(node, list):
        return [with_defaults(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NESTED and isinstance(value, Mapping):
            out[key] = {name: _property(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = with_defaults(value)
        else:
            out[key] = value
    return out


def _property(sub: Any) -> Any:
    changed = with_defaults(sub)
    if isinstance(changed, dict) and "default" not in changed:
        has, value = _default_for(changed)
        if has:
            changed["default"] = copy.deepcopy(value)  # no object shared between schemas
    return changed


@lru_cache(maxsize=8)
def defaulted_tool_set_pool(seed: int, size: int = 300) -> tuple[tuple[ToolDef, ...], ...]:
    """`tool_set_pool(seed, size)` with every schema passed through `with_defaults`."""
    return tuple(
        tuple(
            dataclasses.replace(tool, parameters=with_defaults(tool.parameters)) for tool in tools
        )
        for tools in tool_set_pool(seed, size)
    )
