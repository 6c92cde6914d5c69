"""An own implementation of the contract's validation subset (V2-V8), shared by the executors that
do not call `registry.validate`.

It rejects only what is certainly wrong under the dialect the schema declares: up to draft-07 a
`$ref` makes its siblings inert, so those checks are skipped there; an unrecognised `$schema` is
treated the same way (skipping is always sound, V1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import ToolRegistry, ToolSpec

_SHORT = 60
_MAX_NAMES = 12
_LIMIT = 1990
_JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_REF_SHADOWS = frozenset(f"json-schema.org/draft-0{n}/schema" for n in (3, 4, 5, 6, 7))
_REF_APPLIES = frozenset(
    {"json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema"}
)


def short(name: str) -> str:
    """A name cut to a readable length, so a message stays under V8's limit."""
    return name if len(name) <= _SHORT else name[: _SHORT - 1] + "…"


def names_list(names: Sequence[str]) -> str:
    shown = ", ".join(f"'{short(n)}'" for n in names[:_MAX_NAMES])
    rest = len(names) - _MAX_NAMES
    return shown + (f" and {rest} more" if rest > 0 else "")


def ref_is_inert(schema: Mapping[str, Any]) -> bool:
    """True when the root's dialect lets `$ref` switch off its sibling keywords (or is unknown)."""
    uri = schema.get("$schema")
    if uri is None:
        return False
    if not isinstance(uri, str):
        return True
    key = uri.split("://", 1)[-1].rstrip("#")
    return key not in _REF_APPLIES


def json_types(value: object) -> frozenset[str]:
    """The JSON types `value` belongs to; empty for a non-JSON value (which is never judged)."""
    if value is None:
        return frozenset({"null"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int):
        return frozenset({"integer", "number"})
    if isinstance(value, float):
        return frozenset({"integer", "number"} if value.is_integer() else {"number"})
    if isinstance(value, str):
        return frozenset({"string"})
    if isinstance(value, Mapping):
        return frozenset({"object"})
    if isinstance(value, (list, tuple)):
        return frozenset({"array"})
    return frozenset()


def type_name(value: object) -> str:
    kinds = json_types(value)
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if kind in kinds:
            return kind
    return type(value).__name__


def declared_types(prop: object) -> list[str] | None:
    """The type names a property schema insists on, or None when it accepts any type."""
    if not isinstance(prop, Mapping) or "type" not in prop:
        return None
    declared = prop["type"]
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, (list, tuple)) or not names:
        return None
    if not all(isinstance(n, str) and n in _JSON_TYPES for n in names):
        return None
    return list(names)


def unknown_tool(registry: ToolRegistry, name: object) -> str:
    visible = list(registry.names())
    shown = ", ".join(short(n) for n in visible[:20])
    rest = len(visible) - 20
    more = f" and {rest} more" if rest > 0 else ""
    label = short(name) if isinstance(name, str) else type(name).__name__
    return f"unknown tool '{label}'; available tools: {shown or 'none'}{more}"


def problems(spec: ToolSpec, arguments: object) -> list[str]:
    """Every subset violation of `arguments` against `spec.parameters`, as message parts."""
    if not isinstance(arguments, Mapping):
        return [f"arguments must be a JSON object, got {type_name(arguments)}"]
    schema = spec.parameters
    inert = ref_is_inert(schema)
    if inert and "$ref" in schema:
        return []
    found: list[str] = []
    required = schema.get("required")
    if isinstance(required, (list, tuple)):
        missing = [k for k in required if isinstance(k, str) and k not in arguments]
        if missing:
            found.append(f"missing required keys: {names_list(missing)}")
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    if schema.get("additionalProperties") is False and "patternProperties" not in schema:
        extra = [k for k in arguments if k not in props]
        if extra:
            found.append(f"keys not allowed (additionalProperties is false): {names_list(extra)}")
    mistyped = []
    for key, value in arguments.items():
        prop = props.get(key)
        if inert and isinstance(prop, Mapping) and "$ref" in prop:
            continue
        wanted = declared_types(prop)
        kinds = json_types(value)
        if wanted is None or not kinds or kinds.intersection(wanted):
            continue
        mistyped.append(f"'{short(key)}' must be {'/'.join(wanted)} (got {type_name(value)})")
    if mistyped:
        found.append("wrong types: " + "; ".join(mistyped[:_MAX_NAMES]))
    return found


def message(tool: str, parts: Sequence[str]) -> str:
    text = f"invalid arguments for tool '{short(tool)}': " + "; ".join(parts)
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


def check(registry: ToolRegistry, name: str, arguments: object) -> str | None:
    """The rejection message for this call, or None when the subset accepts it."""
    spec = registry.spec_for(name)
    if spec is None:
        return unknown_tool(registry, name)
    parts = problems(spec, arguments)
    return message(name, parts) if parts else None
