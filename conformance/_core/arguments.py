"""The kit's one generator of arguments full JSON Schema accepts (V1), used by `certify` and the
tool checks alike."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from conformance._core.data import ints_to_floats
from conformance._core.data import thaw as plain_copy
from conformance._core.dialect import ref_siblings_inert
from conformance._core.generation import schema_strategy
from conformance._core.ground_truth import JSON_TYPES, full_validator
from conformance._core.values import json_values, property_names
from polyloop import ToolCall, ToolRegistry

# ---------------------------------------------------------------------------------------------
# Arguments that full JSON Schema accepts


class _Unsupported(Exception):
    """The schema has a reference the kit cannot inline (remote or recursive)."""


_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
_DATA_KEYWORDS = ("enum", "const", "default", "examples")
_DROPPED = ("$schema", "$defs", "definitions", "$id", "id", "$comment", "$anchor")


def _resolve(root: Any, pointer: str) -> Any:
    if not pointer.startswith("#"):
        raise _Unsupported(pointer)
    node = root
    for part in [p for p in pointer[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise _Unsupported(pointer)
    return node


def _generation_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema rewritten for generators that know only draft-07 keywords and no dialects:
    local ``$ref`` inlined with the declared dialect's sibling rule, unknown type names
    dropped (they accept anything), and the root made an object."""
    inert = ref_siblings_inert(schema)

    def walk(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [walk(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        if "$ref" in node:
            pointer = node["$ref"]
            if not isinstance(pointer, str) or pointer in seen:
                raise _Unsupported(str(pointer))
            target = walk(_resolve(schema, pointer), seen | {pointer})
            rest = walk({k: v for k, v in node.items() if k != "$ref"}, seen)
            rest = {k: v for k, v in rest.items() if k not in ("description", "title")}
            if inert or not rest:
                return target
            return {"allOf": [target, rest]}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED:
                continue
            if key in _DATA_KEYWORDS:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {name: walk(sub, seen) for name, sub in value.items()}
            else:
                out[key] = walk(value, seen)
        declared = out.get("type")
        names = [declared] if isinstance(declared, str) else declared
        if isinstance(names, list) and not all(n in JSON_TYPES for n in names):
            del out["type"]
        return out

    generated = walk(schema, frozenset())
    if not isinstance(generated, dict):
        raise _Unsupported("root")
    declared = generated.get("type")
    if declared is None or (isinstance(declared, list) and "object" in declared):
        generated["type"] = "object"
    return generated


def _own_values(node: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """A permissive generator for (generation) schemas; `valid_arguments` filters its output.
    It covers what hypothesis-jsonschema does not (e.g. 2020-12 keywords it ignores)."""
    if depth > 5 or node is True or not isinstance(node, Mapping) or not node:
        return json_values(max_leaves=4) if node is not False else st.nothing()
    if "const" in node:
        return st.just(node["const"])
    if isinstance(node.get("enum"), list) and node["enum"]:
        return st.sampled_from(node["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            return st.one_of([_own_values(sub, depth + 1) for sub in node[key]])
    if isinstance(node.get("allOf"), list) and node["allOf"]:
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for sub in node["allOf"]:
            if isinstance(sub, Mapping):
                merged.update(sub)
        return _own_values(merged, depth + 1)
    declared = node.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list):
        names = (
            ["object"]
            if any(k in node for k in ("properties", "required"))
            else ["array"]
            if "items" in node
            else []
        )
    options = [_typed_values(name, node, depth) for name in names if name in JSON_TYPES]
    return st.one_of(options) if options else json_values(max_leaves=4)


def _number(node: Mapping[str, Any], key: str) -> float | None:
    value = node.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _with_bounds(values: st.SearchStrategy[Any], bounds: Sequence[Any]) -> st.SearchStrategy[Any]:
    """`values`, and the declared bounds themselves about half the time: a validator that gets
    an inclusive bound wrong fails only exactly there (V1)."""
    return st.one_of(st.sampled_from(bounds), values) if bounds else values


def _typed_values(name: str, node: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    low, high = _number(node, "minimum"), _number(node, "maximum")
    above, below = _number(node, "exclusiveMinimum"), _number(node, "exclusiveMaximum")
    if name == "null":
        return st.none()
    if name == "boolean":
        return st.booleans()
    if name == "integer":
        least = None if low is None else math.ceil(low)
        most = None if high is None else math.floor(high)
        if above is not None:
            least = (
                max(least, math.floor(above) + 1) if least is not None else math.floor(above) + 1
            )
        if below is not None:
            most = min(most, math.ceil(below) - 1) if most is not None else math.ceil(below) - 1
        if least is not None and most is not None and least > most:
            return st.nothing()
        bounds = [b for b in (least, most) if b is not None]
        return _with_bounds(st.integers(least, most), bounds)
    if name == "number":
        least_f = low if above is None or (low is not None and low > above) else above
        most_f = high if below is None or (high is not None and high < below) else below
        if least_f is not None and most_f is not None and least_f >= most_f:
            return st.nothing()
        floats = st.floats(
            least_f,
            most_f,
            allow_nan=False,
            allow_infinity=False,
            exclude_min=above is not None and least_f == above,
            exclude_max=below is not None and most_f == below,
        )
        edges: list[float] = [b for b in (low, high) if b is not None]
        edges += [b + 0.5 for b in (above,) if b is not None]
        return _with_bounds(floats, edges)
    if name == "string":
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            try:
                return st.from_regex(pattern)
            except Exception:
                return st.text(max_size=20)
        shortest = int(_number(node, "minLength") or 0)
        longest = _number(node, "maxLength")
        text = st.text(min_size=shortest, max_size=max(shortest, int(longest or 20)))
        if longest is None or longest < shortest:
            return text
        # maxLength counts characters: exactly that many non-ASCII (even astral) ones are valid.
        full = st.sampled_from(["日", "\U0001f600", "é", "a"]).map(lambda ch: ch * int(longest))
        return st.one_of(text, full)
    if name == "array":
        items = node.get("items")
        fewest = int(_number(node, "minItems") or 0)
        return st.lists(
            _own_values(items if isinstance(items, Mapping) else {}, depth + 1),
            min_size=fewest,
            max_size=max(fewest, 3),
        )
    return _object_values(node, depth)


def _object_values(node: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    properties = node.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = node.get("required")
    required = [k for k in required if isinstance(k, str)] if isinstance(required, list) else []
    fixed = {key: _own_values(properties.get(key, {}), depth + 1) for key in required}
    optional = {
        key: _own_values(sub, depth + 1) for key, sub in properties.items() if key not in fixed
    }
    base = st.fixed_dictionaries(fixed, optional=optional)
    extra_schema = node.get("additionalProperties", {})
    patterns = node.get("patternProperties")
    if isinstance(patterns, Mapping) and patterns:
        pattern, sub = next(iter(patterns.items()))
        try:
            keys: st.SearchStrategy[Any] = st.from_regex(str(pattern))
        except Exception:
            keys = property_names()
        extras = st.dictionaries(keys, _own_values(sub, depth + 1), max_size=2)
    elif extra_schema is False or extra_schema == {"not": {}}:
        return base
    else:
        extras = st.dictionaries(property_names(), _own_values(extra_schema, depth + 1), max_size=2)
    return st.tuples(base, extras).map(lambda pair: {**pair[1], **pair[0]})


def valid_arguments(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Argument mappings that full JSON Schema accepts for this ``parameters`` schema (V1).

    Drawn from hypothesis-jsonschema and from the kit's own generator, each filtered through
    ``jsonschema`` under the schema's dialect; sometimes every integer is turned into the equal
    float (``3`` -> ``3.0``) when the schema still accepts that. A schema that cannot be
    satisfied, or whose references cannot be resolved, yields nothing."""
    return _valid_arguments(json.dumps(plain_copy(schema), sort_keys=True))


@lru_cache(maxsize=1024)
def _valid_arguments(schema_json: str) -> st.SearchStrategy[dict[str, Any]]:
    # Cached per schema text: certification draws schemas from a pool, and a strategy object
    # that already exists skips Hypothesis's per-object validation and labelling.
    plain = json.loads(schema_json)
    validator = full_validator(plain)
    try:
        generation: Any = _generation_schema(plain)
    except _Unsupported:
        generation = None
    sources: list[st.SearchStrategy[Any]] = []
    if generation is not None:
        own = _own_values(generation)
        upstream = schema_strategy(json.dumps(generation, sort_keys=True))
        # hypothesis-jsonschema builds strategies while drawing objects, which makes it
        # several times slower than the kit's generator: it gets one draw in three.
        sources += [own, own] if upstream is None else [own, upstream, own]
    else:
        sources.append(_own_values({k: v for k, v in plain.items() if k != "$ref"}))

    def is_valid(value: Any) -> bool:
        return isinstance(value, dict) and bool(validator.is_valid(value))

    accepted = st.one_of(sources).filter(is_valid)

    def mutated(drawn: tuple[dict[str, Any], bool, int]) -> dict[str, Any]:
        value, mutate, edge = drawn
        if not mutate:
            return value
        changed = ints_to_floats(value) if edge < 0 else _numbers_to(value, _EDGE_NUMBERS[edge])
        return changed if validator.is_valid(changed) else value

    edges = st.integers(-len(_EDGE_NUMBERS), len(_EDGE_NUMBERS) - 1)
    return st.tuples(accepted, st.booleans(), edges).map(mutated)


_EDGE_NUMBERS: tuple[int | float, ...] = (
    1e16,
    1e300,
    -0.0,
    2**63,
    2**64 + 1,
    -(2**63) - 1,
    10**400,
)
"""Numbers a validator gets wrong by going through float64 or int64, or by reading a float's
text: integral floats in exponent notation, ``-0.0``, integers beyond 64 bits and beyond float
range. `valid_arguments` puts one in place of every number now and then, when the schema still
accepts that."""


def _numbers_to(value: Any, number: int | float) -> Any:
    if isinstance(value, dict):
        return {key: _numbers_to(item, number) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_to(item, number) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number
    return value


def _tools(tools: ToolRegistry | Sequence[Any]) -> list[tuple[str, dict[str, Any]]]:
    items = tools.specs if isinstance(tools, ToolRegistry) else tools
    return [(tool.name, plain_copy(tool.parameters)) for tool in items]


@st.composite
def valid_calls(draw: st.DrawFn, tools: ToolRegistry | Sequence[Any]) -> ToolCall:
    """A ToolCall to one of `tools` (a registry, ToolSpecs or ToolDefs) whose arguments full
    JSON Schema accepts."""
    listed = _tools(tools)
    if not listed:
        reject()
    name, schema = draw(st.sampled_from(listed))
    return ToolCall(name=name, arguments=draw(valid_arguments(schema)))
