"""The kit's one generator of arguments full JSON Schema accepts (V1), used by `certify` and the
tool checks alike."""

from __future__ import annotations

import copy
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
        return _own_values(_merged_all_of(node), depth + 1)
    names = _type_names(node)
    options = [_typed_values(name, node, depth) for name in names if name in JSON_TYPES]
    return st.one_of(options) if options else json_values(max_leaves=4)


def _merged_all_of(node: Mapping[str, Any]) -> dict[str, Any]:
    """`node` with its ``allOf`` members' keywords merged in (a later member wins)."""
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for sub in node["allOf"]:
        if isinstance(sub, Mapping):
            merged.update(sub)
    return merged


def _type_names(node: Mapping[str, Any]) -> list[Any]:
    """The JSON types `node` declares, or the one its keywords imply (``object`` for
    ``properties``/``required``, ``array`` for ``items``), or none."""
    declared = node.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if isinstance(names, list):
        return names
    if any(k in node for k in ("properties", "required")):
        return ["object"]
    return ["array"] if "items" in node else []


def _number(node: Mapping[str, Any], key: str) -> float | None:
    value = node.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _with_bounds(values: st.SearchStrategy[Any], bounds: Sequence[Any]) -> st.SearchStrategy[Any]:
    """`values`, and the declared bounds themselves about half the time: a validator that gets
    an inclusive bound wrong fails only exactly there (V1)."""
    return st.one_of(st.sampled_from(bounds), values) if bounds else values


_AFFIXES = ("", "A-", " ", "!x")


def _unanchored(pattern: str) -> st.SearchStrategy[str]:
    """Strings `pattern` matches, and now and then, where it is not anchored, a match with
    text around it: JSON Schema's ``pattern`` is a search, so that text is valid too (V1; a
    validator using ``re.fullmatch`` rejects it)."""
    matches = st.from_regex(pattern)
    before = "" if pattern.startswith("^") else None
    after = "" if pattern.endswith("$") else None
    if before == "" and after == "":
        return matches
    exact = st.from_regex(pattern, fullmatch=True)
    wrapped = st.tuples(
        st.just("") if before == "" else st.sampled_from(_AFFIXES),
        exact,
        st.just("") if after == "" else st.sampled_from(_AFFIXES),
    ).map("".join)
    return st.one_of(matches, wrapped)


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
                return _unanchored(pattern)
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
        element = _own_values(items if isinstance(items, Mapping) else {}, depth + 1)
        if element.is_empty:  # no item fits: only the empty array does, if it may be empty
            return st.just([]) if fewest == 0 else st.nothing()
        return st.lists(element, min_size=fewest, max_size=max(fewest, 3))
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


def valid_arguments(
    schema: Mapping[str, Any], *, upstream: bool = True
) -> st.SearchStrategy[dict[str, Any]]:
    """Argument mappings that full JSON Schema accepts for this ``parameters`` schema (V1).

    Drawn from hypothesis-jsonschema and from the kit's own generator, each filtered through
    ``jsonschema`` under the schema's dialect; sometimes every integer is turned into the equal
    float (``3`` -> ``3.0``) when the schema still accepts that. A schema that cannot be
    satisfied, or whose references cannot be resolved, yields nothing.

    ``upstream=False`` leaves hypothesis-jsonschema out: it builds strategies while drawing,
    which makes a draw several times dearer, and it earns that only where the variety of valid
    arguments is what the check is about (V1, and the variants E14 and V7 derive from them), not
    where a valid call only has to reach its handler."""
    return _valid_arguments(json.dumps(plain_copy(schema), sort_keys=True), upstream)


@lru_cache(maxsize=1024)
def _valid_arguments(schema_json: str, upstream: bool = True) -> st.SearchStrategy[dict[str, Any]]:
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
        hjs = schema_strategy(json.dumps(generation, sort_keys=True)) if upstream else None
        # hypothesis-jsonschema builds strategies while drawing objects, which makes it
        # several times slower than the kit's generator: it gets one draw in three.
        sources += [own] if hjs is None else [own, hjs, own]
    else:
        sources.append(_own_values({k: v for k, v in plain.items() if k != "$ref"}))

    def is_valid(value: Any) -> bool:
        return isinstance(value, dict) and bool(validator.is_valid(value))

    accepted = (sources[0] if len(sources) == 1 else st.one_of(sources)).filter(is_valid)

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


def arguments_for(
    schema: Mapping[str, Any], *, upstream: bool = True, pool_seed: int | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """`pooled_arguments` when given a `pool_seed`, else `valid_arguments`."""
    if pool_seed is not None:
        return pooled_arguments(schema, pool_seed)
    return valid_arguments(schema, upstream=upstream)


@st.composite
def valid_calls(
    draw: st.DrawFn,
    tools: ToolRegistry | Sequence[Any],
    *,
    upstream: bool = True,
    pool_seed: int | None = None,
) -> ToolCall:
    """A ToolCall to one of `tools` (a registry, ToolSpecs or ToolDefs) whose arguments full
    JSON Schema accepts (`upstream`: as for `valid_arguments`; `pool_seed`: drawn in one
    choice from `pooled_arguments` instead)."""
    listed = _tools(tools)
    if not listed:
        reject()
    name, schema = draw(st.sampled_from(listed))
    arguments = arguments_for(schema, upstream=upstream, pool_seed=pool_seed)
    return ToolCall(name=name, arguments=draw(arguments))


# ---------------------------------------------------------------------------------------------
# Arguments drawn in one choice: a pool per schema, built once from a seed


class _NotSeeded(Exception):
    """The seeded generator does not write values for this schema (a ``pattern``)."""


_SEEDED_WORDS = ("alpha", "main", "README.md", "src/app.py", "2024-01-31", "asc", "json", "")
_SEEDED_CHARS = "abcxyz ABC019_-./:\"'\\{}[]\t\n\x00\u00e9\u00df\u0430\u200b\u65e5\U0001f600\u0301"
"""Characters of the seeded strings: plain ones, JSON syntax, controls and NUL, accented,
confusable, zero-width, combining, CJK and astral ones."""


def _seeded_text(rng: Any, least: int = 0, most: int = 20) -> str:
    if least == 0 and rng.randrange(3) == 0:
        word = rng.choice(_SEEDED_WORDS)
        if len(word) <= most:
            return str(word)
    return "".join(rng.choice(_SEEDED_CHARS) for _ in range(rng.randint(least, max(least, most))))


def _seeded_json(rng: Any, leaves: int = 4) -> Any:
    kind = rng.randrange(9 if leaves > 1 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-1000, 1000)
    if kind == 3:
        return rng.choice((0.5, -2.25, 1e6, 3.0, rng.uniform(-1e6, 1e6)))
    if kind in (4, 5, 6):
        return _seeded_text(rng, 0, 12)
    if kind == 7:
        return [_seeded_json(rng, leaves // 2) for _ in range(rng.randint(0, 3))]
    return {
        _seeded_text(rng, 0, 8): _seeded_json(rng, leaves // 2) for _ in range(rng.randint(0, 3))
    }


def _seeded_value(node: Any, rng: Any, depth: int = 0) -> Any:
    """What `_own_values` draws for `node`, from `rng` (`valid_arguments` still filters it)."""
    if depth > 5 or node is True or not isinstance(node, Mapping) or not node:
        if node is False:
            raise _NotSeeded("false")
        return _seeded_json(rng)
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return rng.choice(node["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and node[key]:
            return _seeded_value(rng.choice(node[key]), rng, depth + 1)
    if isinstance(node.get("allOf"), list) and node["allOf"]:
        return _seeded_value(_merged_all_of(node), rng, depth + 1)
    names = _type_names(node)
    known = [name for name in names if name in JSON_TYPES]
    if not known:
        return _seeded_json(rng)
    return _seeded_typed(rng.choice(known), node, rng, depth)


def _seeded_typed(name: str, node: Mapping[str, Any], rng: Any, depth: int) -> Any:
    low, high = _number(node, "minimum"), _number(node, "maximum")
    above, below = _number(node, "exclusiveMinimum"), _number(node, "exclusiveMaximum")
    if name == "null":
        return None
    if name == "boolean":
        return rng.random() < 0.5
    if name in ("integer", "number"):
        least = low if low is not None else (above if above is not None else None)
        most = high if high is not None else (below if below is not None else None)
        bounds = [b for b in (low, high) if b is not None]
        if bounds and rng.randrange(2) == 0:
            edge = rng.choice(bounds)
            return int(edge) if name == "integer" and float(edge).is_integer() else edge
        start = least if least is not None else (most - 1000 if most is not None else -1000)
        stop = most if most is not None else start + 2000
        if name == "integer":
            first, last = math.ceil(start), math.floor(stop)
            return rng.randint(first, last) if first <= last else first
        return rng.uniform(start, stop)
    if name == "string":
        if "pattern" in node:
            raise _NotSeeded("pattern")
        shortest = int(_number(node, "minLength") or 0)
        longest = _number(node, "maxLength")
        if longest is not None and longest >= shortest and rng.randrange(3) == 0:
            return rng.choice(("日", "\U0001f600", "é", "a")) * int(longest)
        return _seeded_text(rng, shortest, max(shortest, int(longest or 20)))
    if name == "array":
        items = node.get("items")
        fewest = int(_number(node, "minItems") or 0)
        sub = items if isinstance(items, Mapping) else {}
        return [
            _seeded_value(sub, rng, depth + 1) for _ in range(rng.randint(fewest, max(fewest, 3)))
        ]
    properties = node.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = node.get("required")
    required = [k for k in required if isinstance(k, str)] if isinstance(required, list) else []
    value: dict[str, Any] = {}
    extra_schema = node.get("additionalProperties", {})
    patterns = node.get("patternProperties")
    closed = extra_schema is False or extra_schema == {"not": {}}
    if not closed and not (isinstance(patterns, Mapping) and patterns) and rng.randrange(4) == 0:
        for _ in range(rng.randint(1, 2)):
            value[_seeded_text(rng, 0, 10)] = _seeded_value(extra_schema, rng, depth + 1)
    for key, sub in properties.items():
        if key in required or rng.randrange(2) == 0:
            value[key] = _seeded_value(sub, rng, depth + 1)
    for key in required:
        if key not in value:
            value[key] = _seeded_value(properties.get(key, {}), rng, depth + 1)
    return value


POOL_SIZE = 12
"""How many argument mappings `pooled_arguments` builds per schema and seed."""


def pooled_arguments(schema: Mapping[str, Any], seed: int) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments for `schema` drawn in one choice from a pool built once per schema and
    `seed` (smallest first, so a counterexample shrinks to a small one), for checks that need a
    call to reach its handler rather than a search over arguments (`valid_arguments` is that
    search). The pool is the kit's own generator run from a seeded `random.Random`, kept where
    full JSON Schema accepts it, with ``3`` -> ``3.0`` and the edge numbers now and then; a
    schema it does not write values for (a ``pattern``) falls back to `valid_arguments`, and
    one where none is kept yields nothing."""
    return _pooled(json.dumps(plain_copy(schema), sort_keys=True), seed)


@lru_cache(maxsize=4096)
def _pooled(schema_json: str, seed: int) -> st.SearchStrategy[dict[str, Any]]:
    import random

    plain = json.loads(schema_json)
    try:
        generation = _generation_schema(plain)
    except _Unsupported:
        return _valid_arguments(schema_json, False)
    if "pattern" in schema_json:
        return _valid_arguments(schema_json, False)
    validator = full_validator(plain)
    rng = random.Random(f"{seed}:{schema_json}")
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for _ in range(POOL_SIZE * 4):
        if len(found) >= POOL_SIZE:
            break
        try:
            value = _seeded_value(generation, rng)
        except _NotSeeded:
            return _valid_arguments(schema_json, False)
        if not isinstance(value, dict) or not validator.is_valid(value):
            continue
        roll = rng.randrange(2 * (len(_EDGE_NUMBERS) + 1))
        if roll <= len(_EDGE_NUMBERS):
            changed = (
                ints_to_floats(value)
                if roll == len(_EDGE_NUMBERS)
                else _numbers_to(value, _EDGE_NUMBERS[roll])
            )
            if validator.is_valid(changed):
                value = changed
        text = json.dumps(value, sort_keys=True, default=repr)
        if text not in seen:
            seen.add(text)
            found.append(value)
    if not found:
        return _valid_arguments(schema_json, False)
    found.sort(key=lambda value: len(json.dumps(value, default=repr)))
    pool = tuple(found)
    return st.integers(0, len(pool) - 1).map(lambda index: copy.deepcopy(pool[index]))
