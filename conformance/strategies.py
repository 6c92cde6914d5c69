"""Hypothesis strategies for tool schemas, registries, calls and handler behaviours.

These are public: a project can use them to test its own executor or tools beyond what
`certify` checks. The building blocks:

* `tool_schemas` — realistic ``parameters`` schemas: typed properties, nested objects and
  arrays, ``enum``/``const``, type lists, ``$defs``/``definitions`` with ``$ref`` (including the
  draft-07 trap of ``$ref`` with sibling keywords, at property level and at the root),
  ``patternProperties``, every form of ``additionalProperties``, the non-standard type names
  real schemas carry (``"dict"``, ``"float"``), under every dialect from draft-04 to 2020-12.
* `tool_definitions`, `tool_specs`, `registries` — tools built from those schemas.
* `valid_arguments` / `valid_calls` — what full JSON Schema accepts (V1): drawn from
  hypothesis-jsonschema and from the kit's own generator, always filtered through
  ``jsonschema`` under the schema's dialect, plus an int -> float mutation (``3`` -> ``3.0``)
  neither generator produces on its own. A schema nothing can satisfy simply yields nothing.
* `invalid_calls` — calls validation must reject, aimed at one of V2–V6 (near-miss tool names
  included), with every string value replaced by a `SENTINEL_MARK` string so a rejection
  message that echoes a value is caught (V8).
* `beyond_subset_calls` — calls full JSON Schema rejects but the contract's subset does not
  (E14: either outcome conforms).
* `handler_behaviours`, `code_actions`, `observation_texts`.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hypothesis import assume, reject
from hypothesis import strategies as st

from conformance._hjs_compat import hjs_module as _hj
from conformance.behaviours import (
    BASE_EXCEPTION_KINDS,
    ENVIRONMENT_LIKE_ERROR_KINDS,
    ERROR_KINDS,
    NON_STR_KINDS,
    Behaviour,
    MutateArguments,
    RaiseBaseException,
    RaiseEnvironmentError,
    RaiseError,
    RaiseUnprintable,
    ReturnNonStr,
    ReturnText,
    Sleep,
    Suspend,
    YieldFirst,
    plain_copy,
)
from conformance.oracle import (
    JSON_TYPES,
    closed_properties,
    effective_required,
    full_validator,
    json_types_of,
    must_reject,
    ref_siblings_inert,
    typed_properties,
)
from polyloop import Action, ReplayPolicy, ToolCall, ToolRegistry, ToolSpec

__all__ = [
    "BEHAVIOUR_KINDS",
    "DIALECTS",
    "INVALID_AIMS",
    "SENTINEL_MARK",
    "TRAP_SCHEMAS",
    "ToolDef",
    "aim_possible",
    "beyond_subset_calls",
    "code_actions",
    "handler_behaviours",
    "has_sentinel",
    "invalid_calls",
    "json_values",
    "observation_texts",
    "property_names",
    "registries",
    "schema_pool",
    "tool_definition_sets",
    "tool_definitions",
    "tool_names",
    "tool_schemas",
    "tool_specs",
    "valid_arguments",
    "valid_calls",
]

DIALECTS: Mapping[str | None, str] = {
    "draft-07": "http://json-schema.org/draft-07/schema#",
    None: "",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
}
"""Dialect name -> ``$schema`` URI (None: no ``$schema``, which means 2020-12), most common
first: 75 of 83 real MCP tool schemas declare draft-07."""

SENTINEL_MARK = "zqSENTINEL"
"""Every string value in an invalid call contains this mark; no key or tool name does. A
rejection message containing it has echoed an argument value (V8)."""

INVALID_AIMS = ("V2", "V3", "V4", "V5", "V6")

BEHAVIOUR_KINDS = (
    "text",
    "environment_error",
    "error",
    "error_like",
    "unprintable",
    "base_exception",
    "suspend",
    "non_str",
    "mutate",
    "yield",
    "sleep",
)
"""What `handler_behaviours` can produce; see its docstring."""


def has_sentinel(text: str) -> bool:
    """Whether a text contains an argument value from an invalid call (see `SENTINEL_MARK`)."""
    return SENTINEL_MARK in text


# ---------------------------------------------------------------------------------------------
# JSON values and names

_WORDS = (
    "alpha",
    "beta",
    "main",
    "open",
    "closed",
    "README.md",
    "src/app.py",
    "2024-01-31",
    "https://example.com",
    "asc",
    "desc",
    "json",
    "text",
    "auto",
    "none",
)

# Strategies are built on first use and then kept (lru_cache): building one that draws text
# loads Hypothesis's Unicode tables, which must not happen while pytest is still importing its
# plugins (this package is one), and reusing one object spares Hypothesis re-validating it.


@lru_cache(maxsize=1)
def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-1000, 1000),
        st.sampled_from(_WORDS),
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    )


@lru_cache(maxsize=16)
def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values (dicts, lists, str, int, finite float, bool, None)."""
    return st.recursive(
        _scalars(),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(property_names(), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )


_PROPERTY_WORDS = (
    "path",
    "query",
    "limit",
    "owner",
    "repo",
    "content",
    "tags",
    "options",
    "url",
    "timeout",
    "recursive",
    "mode",
    "id",
    "page",
    "per_page",
    "branch",
    "message",
    "max_results",
    "format",
    "lang",
    "filters",
    "entities",
    "items",
    "name",
    "type",
    "value",
    "headers",
    "body",
    "accountId",
    "dryRun",
)


def _clean_key(key: str) -> bool:
    return SENTINEL_MARK not in key


def _identifiers(first: str, rest: str, longest: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda a, b: a + b, st.sampled_from(first), st.text(alphabet=rest, max_size=longest)
    )


_LOWER = "abcdefghijklmnopqrstuvwxyz"


@lru_cache(maxsize=1)
def property_names() -> st.SearchStrategy[str]:
    """Realistic property names (snake_case, camelCase), and now and then an odd one."""
    return st.one_of(
        st.sampled_from(_PROPERTY_WORDS),
        st.sampled_from(_PROPERTY_WORDS),
        _identifiers(_LOWER, _LOWER + "ABCDEFGHIJ0123456789_", 14),
        st.text(max_size=10),
    ).filter(_clean_key)


_TOOL_WORDS = (
    "read_file",
    "write_file",
    "search",
    "fetch",
    "list_directory",
    "create_issue",
    "get_weather",
    "browser_navigate",
    "run_query",
    "send_email",
    "accounts_list",
    "memory.create_entities",
    "search_repositories",
    "calc",
)


def _long_name(length: int) -> str:
    return ("very_long_tool_name_" * (length // 20 + 1))[:length]


@lru_cache(maxsize=2)
def tool_names(*, allow_long: bool = True) -> st.SearchStrategy[str]:
    """Tool names: realistic identifiers, dotted and dashed names, any non-blank text, and
    (with allow_long) names of hundreds or thousands of characters."""
    options = [
        st.sampled_from(_TOOL_WORDS),
        st.sampled_from(_TOOL_WORDS),
        _identifiers(_LOWER, _LOWER + "0123456789_", 20),
        _identifiers(_LOWER + "ABCXYZ", _LOWER + "ABCXYZ0123456789_.-", 30),
        st.text(min_size=1, max_size=16),
    ]
    if allow_long:
        options.append(st.integers(100, 3000).map(_long_name))
    return st.one_of(options).filter(lambda name: bool(name.strip()) and _clean_key(name))


_CONFUSABLES = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"}


def _near_misses(name: str) -> list[str]:
    """Names a careless lookup would confuse with `name`."""
    misses = [
        name.swapcase(),
        name.upper(),
        name + " ",
        " " + name,
        name + "\n",
        name + "\u200b",
        name[:-1],
        name + "s",
        name + "_v2",
        "functions." + name,
        name.replace("_", "-"),
        name.replace("-", "_"),
        name.replace(".", "_"),
    ]
    for ascii_char, lookalike in _CONFUSABLES.items():
        if ascii_char in name:
            misses.append(name.replace(ascii_char, lookalike, 1))
            break
    if name and "a" <= name[0].lower() <= "z":
        misses.append(chr(ord(name[0]) + 0xFEE0) + name[1:])  # full-width first letter
    return [miss for miss in dict.fromkeys(misses) if miss and miss != name]


# ---------------------------------------------------------------------------------------------
# Schemas

_DESCRIPTIONS = (
    "The file path to read.",
    "Maximum number of results to return.",
    "Search query, as typed by the user.",
    "Optional filters.",
    "",
    "Whether to recurse into subdirectories.",
    "ISO 8601 date.",
)
_ENUM_WORDS = ("asc", "desc", "open", "closed", "all", "json", "text", "markdown", "auto")
_ENUM_VALUES: tuple[Any, ...] = (None, True, False, 0, 1, -7, 2.5, "asc", "x", "", "日本")
_UNKNOWN_TYPES = ("dict", "float", "any", "tuple", "int", "str", "list")
_PATTERNS = ("^[a-z0-9_-]+$", "^\\d{4}-\\d{2}-\\d{2}$", "^https?://", "^[A-Z]{2,3}$")
_DEF_NAMES = ("Path", "Options", "Filter", "Range", "Item", "Mode")
_TYPE_NAMES = tuple(sorted(JSON_TYPES))
_ADDITIONAL: tuple[tuple[str, Any], ...] = (
    ("absent", None),
    ("false", False),
    ("absent", None),
    ("false", False),
    ("true", True),
    ("empty", {}),
    ("typed", {"type": "string"}),
    ("not", {"not": {}}),
)
_PATTERN_PROPERTIES: tuple[dict[str, Any], ...] = (
    {"^x-": {"type": "string"}},
    {"^[0-9]+$": {}},
    {"_id$": {"type": "integer"}},
)


class _Choices:
    """The decisions a schema is built from. One implementation draws them from Hypothesis
    (so a schema shrinks structurally), the other from a seeded `random.Random` (so the kit can
    build a pool of schemas once and draw a whole schema in one step)."""

    def pick(self, options: Sequence[Any]) -> Any:
        raise NotImplementedError

    def integer(self, low: int, high: int) -> int:
        raise NotImplementedError

    def one_in(self, n: int) -> bool:
        """True about once in n; the simpler schema (False) is where shrinking goes."""
        return self.integer(0, n - 1) == n - 1

    def some(self, options: Sequence[Any], most: int) -> list[Any]:
        """Up to `most` distinct options, in a drawn order."""
        pool, chosen = list(options), []
        for _ in range(self.integer(0, min(most, len(pool)))):
            chosen.append(pool.pop(self.integer(0, len(pool) - 1)))
        return chosen


class _DrawnChoices(_Choices):
    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def integer(self, low: int, high: int) -> int:
        return int(self._draw(st.integers(low, high)))


class _SeededChoices(_Choices):
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def pick(self, options: Sequence[Any]) -> Any:
        return self._random.choice(list(options))

    def integer(self, low: int, high: int) -> int:
        return self._random.randint(low, high)


def _property_name(c: _Choices) -> str:
    if c.one_in(6):
        return str(c.pick(("", "x-trace", "with space", "ключ", "$ref", "type", "a.b")))
    return str(c.pick(_PROPERTY_WORDS))


def _leaf(c: _Choices) -> dict[str, Any]:
    kind = c.pick(
        (
            "string",
            "string",
            "pattern",
            "enum",
            "integer",
            "integer",
            "number",
            "boolean",
            "null",
            "types",
            "unknown",
            "values",
            "const",
            "any",
        )
    )
    schema: dict[str, Any]
    if kind == "string":
        schema = {"type": "string"}
        if c.one_in(4):
            schema["minLength"] = c.integer(0, 2)
        if c.one_in(4):
            schema["maxLength"] = c.integer(8, 64)
        if c.one_in(6):
            schema["format"] = c.pick(("uri", "date-time", "email"))
    elif kind == "pattern":
        schema = {"type": "string", "pattern": c.pick(_PATTERNS)}
    elif kind == "enum":
        schema = {"type": "string", "enum": c.some(_ENUM_WORDS, 4) or ["auto"]}
    elif kind in ("integer", "number"):
        schema = {"type": kind}
        if c.one_in(3):
            schema["minimum"] = c.integer(-5, 1)
        if c.one_in(3):
            schema["maximum"] = c.pick((10, 1000) if kind == "integer" else (1, 100.5))
    elif kind in ("boolean", "null"):
        schema = {"type": kind}
    elif kind == "types":
        schema = {"type": c.some(_TYPE_NAMES, 3) or ["string", "null"]}
    elif kind == "unknown":
        schema = {"type": c.pick(_UNKNOWN_TYPES)}
    elif kind == "values":
        schema = {"enum": c.some(_ENUM_VALUES, 4) or [None]}
    elif kind == "const":
        schema = {"const": c.pick(_ENUM_VALUES)}
    else:
        schema = {}
    if c.one_in(3):
        schema["description"] = c.pick(_DESCRIPTIONS)
    return schema


def _value(c: _Choices, pointers: tuple[str, ...], depth: int) -> dict[str, Any]:
    kinds = ["leaf", "leaf", "leaf"] + (["ref"] if pointers else [])
    if depth > 0:
        kinds += ["array", "object", "anyOf"]
    kind = c.pick(kinds)
    if kind == "ref":
        # A type sibling is inert up to draft-07 and active from 2019-09 on: exactly where a
        # careless validator rejects a valid call (V1).
        schema = {"$ref": c.pick(pointers)}
        sibling = c.pick(("none", "none", "description", "type"))
        if sibling == "description":
            schema["description"] = c.pick(_DESCRIPTIONS)
        elif sibling == "type":
            schema["type"] = c.pick(_TYPE_NAMES)
        return schema
    if kind == "array":
        schema = {"type": "array"}
        if not c.one_in(5):
            schema["items"] = _value(c, pointers, depth - 1)
        if c.one_in(4):
            schema["minItems"] = c.integer(0, 2)
        if c.one_in(4):
            schema["maxItems"] = c.integer(3, 10)
        return schema
    if kind == "object":
        return _object(c, pointers, depth - 1)
    if kind == "anyOf":
        return {"anyOf": [_value(c, pointers, depth - 1), _value(c, pointers, depth - 1)]}
    return _leaf(c)


def _object(c: _Choices, pointers: tuple[str, ...], depth: int) -> dict[str, Any]:
    keys = list(dict.fromkeys(_property_name(c) for _ in range(c.integer(0, 5))))
    schema: dict[str, Any] = {"type": "object"}
    if keys or c.one_in(2):
        schema["properties"] = {key: _value(c, pointers, depth) for key in keys}
    required = c.some(keys, len(keys))
    if required:
        schema["required"] = required
    _, extra = c.pick(_ADDITIONAL)
    if extra is not None:
        schema["additionalProperties"] = extra
    if c.one_in(6):
        schema["patternProperties"] = c.pick(_PATTERN_PROPERTIES)
    return schema


def _dialect_names(dialects: Iterable[str | None] | None) -> tuple[str | None, ...]:
    names = tuple(DIALECTS if dialects is None else dialects)
    unknown = [name for name in names if name not in DIALECTS]
    if unknown or not names:
        raise ValueError(f"unknown dialects {unknown}; choose from {list(DIALECTS)}")
    # draft-07 and "no $schema" are what real tool schemas mostly are.
    return names + tuple(n for n in names if n in ("draft-07", None)) * 2


def _schema(c: _Choices, dialects: tuple[str | None, ...]) -> dict[str, Any]:
    dialect = c.pick(dialects)
    old = dialect in ("draft-04", "draft-06", "draft-07")
    defs_key = "definitions" if old else "$defs"
    def_names = c.some(_DEF_NAMES, 2)
    defs = {name: _value(c, (), 1) for name in def_names}
    pointers = tuple(f"#/{defs_key}/{name}" for name in def_names)
    body = _object(c, pointers, 1)
    shape = c.pick(("object",) * 8 + ("no type", "dict"))
    if shape == "no type":
        del body["type"]
    elif shape == "dict":
        body["type"] = "dict"  # how many hand-written schemas say "object"
    if c.one_in(4 if old else 12):
        # zod-to-json-schema style: the arguments live behind a root $ref; under draft-07 the
        # root's own required/additionalProperties/properties are then inert.
        defs["Args"] = _object(c, pointers, 1)
        body = {"$ref": f"#/{defs_key}/Args", **body}
    if defs:
        body[defs_key] = defs
    if dialect is not None:
        body["$schema"] = DIALECTS[dialect]
    if c.one_in(3):
        body["description"] = c.pick(_DESCRIPTIONS)
    return body


@st.composite
def tool_schemas(draw: st.DrawFn, dialects: Iterable[str | None] | None = None) -> dict[str, Any]:
    """A realistic ``parameters`` schema under one of `dialects` (names from `DIALECTS`;
    default all of them, draft-07 and no ``$schema`` most often)."""
    return _schema(_DrawnChoices(draw), _dialect_names(dialects))


_D7 = DIALECTS["draft-07"]
TRAP_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {}, "additionalProperties": False, "$schema": _D7},
    {
        "$schema": _D7,
        "type": "object",
        "additionalProperties": False,
        "required": ["path"],
        "properties": {"path": {"$ref": "#/definitions/Path", "type": "string"}},
        "definitions": {"Path": {"type": ["string", "array"], "items": {"type": "string"}}},
    },
    {
        "$schema": _D7,
        "$ref": "#/definitions/Args",
        "type": "object",
        "required": ["legacy"],
        "properties": {"legacy": {"type": "integer"}},
        "additionalProperties": False,
        "definitions": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}},
    },
    {
        "type": "dict",
        "properties": {"x": {"type": "float"}, "pair": {"type": "tuple"}, "n": {"type": "integer"}},
        "required": ["x"],
    },
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
        "patternProperties": {"^x-": {"type": "string"}},
    },
    {
        "$schema": DIALECTS["draft-04"],
        "type": "object",
        "properties": {"n": {"type": "integer"}, "ratio": {"type": "number"}},
        "required": ["n"],
    },
    {
        "type": "object",
        "properties": {
            "order": {"type": "string", "enum": ["asc", "desc"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "filter": {
                "type": "object",
                "properties": {"tag": {"type": "string"}},
                "required": ["tag"],
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    },
)
"""Hand-written schemas every pool starts with: each is a known way to get validation wrong
(the draft-07 ``$ref`` sibling trap at property and root level, BFCL's non-standard type names,
``patternProperties`` next to ``additionalProperties: false``, draft-04 integers, ...)."""


@lru_cache(maxsize=8)
def schema_pool(seed: int, size: int = 300) -> tuple[dict[str, Any], ...]:
    """`TRAP_SCHEMAS` followed by `size` schemas built from `seed`, smallest first.

    Drawing a schema from this pool (``st.sampled_from``) costs one choice instead of hundreds,
    which is what lets a certification run finish in seconds; shrinking moves towards the
    start of the pool, so a counterexample still ends on a small schema. `tool_schemas` builds
    the same kind of schema choice by choice."""
    dialects = _dialect_names(None)
    built = [_schema(_SeededChoices(seed * 1_000_003 + index), dialects) for index in range(size)]
    built.sort(key=lambda schema: len(json.dumps(schema)))
    return TRAP_SCHEMAS + tuple(built)


@dataclass(frozen=True, kw_only=True)
class ToolDef:
    """A tool without a handler: what the kit generates, and scripts a handler for."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER
    completes_run: bool = False

    def spec(self, handler: Callable[..., Any] | None = None) -> ToolSpec:
        """The polyloop ToolSpec for this tool, with `handler`."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            replay_policy=self.replay_policy,
            completes_run=self.completes_run,
            handler=handler,
        )


@st.composite
def tool_definitions(
    draw: st.DrawFn,
    names: st.SearchStrategy[str] | None = None,
    schemas: st.SearchStrategy[dict[str, Any]] | None = None,
) -> ToolDef:
    """A `ToolDef` with a realistic name, description and schema."""
    return ToolDef(
        name=draw(names if names is not None else tool_names(allow_long=False)),
        description=draw(st.sampled_from(_DESCRIPTIONS) | st.text(max_size=40)),
        parameters=draw(schemas if schemas is not None else tool_schemas()),
        replay_policy=draw(st.sampled_from(ReplayPolicy)),
        completes_run=draw(st.integers(0, 4)) == 4,
    )


def tool_definition_sets(
    *,
    min_size: int = 1,
    max_size: int = 4,
    schemas: st.SearchStrategy[dict[str, Any]] | None = None,
) -> st.SearchStrategy[tuple[ToolDef, ...]]:
    """Tuples of `ToolDef` with distinct names (schemas from `schemas`, default
    `tool_schemas()`)."""
    return st.lists(
        tool_definitions(schemas=schemas),
        min_size=min_size,
        max_size=max_size,
        unique_by=lambda tool: tool.name,
    ).map(tuple)


async def _default_handler(arguments: dict[str, Any]) -> str:
    return "ok"


def tool_specs(
    handler: Callable[..., Any] | None = _default_handler,
) -> st.SearchStrategy[ToolSpec]:
    """ToolSpecs from `tool_definitions`, all with `handler` (default: returns ``"ok"``)."""
    return tool_definitions().map(lambda tool: tool.spec(handler))


def registries(
    handler: Callable[..., Any] | None = _default_handler, *, min_size: int = 0, max_size: int = 4
) -> st.SearchStrategy[ToolRegistry]:
    """ToolRegistries of `tool_specs`, all with `handler`."""
    return tool_definition_sets(min_size=min_size, max_size=max_size).map(
        lambda tools: ToolRegistry(specs=[tool.spec(handler) for tool in tools])
    )


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


@lru_cache(maxsize=512)
def _hypothesis_jsonschema(schema_json: str) -> st.SearchStrategy[Any] | None:
    # hypothesis-jsonschema reports a schema it cannot handle (unsatisfiable, unresolvable,
    # unsupported) only when drawing; building through its internal entry point raises at once,
    # so such a schema is skipped here as a property of the schema, not a crash.
    build = getattr(_hj, "__from_schema", None)
    try:
        if build is None:
            return _hj.from_schema(json.loads(schema_json))
        alphabet = _hj.CharStrategy.from_args(allow_x00=True, codec="utf-8")
        strategy: st.SearchStrategy[Any] = build(
            json.loads(schema_json), alphabet=alphabet, custom_formats=None
        )
        return strategy
    except Exception:
        return None


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


def _typed_values(name: str, node: Mapping[str, Any], depth: int) -> st.SearchStrategy[Any]:
    low, high = _number(node, "minimum"), _number(node, "maximum")
    if name == "null":
        return st.none()
    if name == "boolean":
        return st.booleans()
    if name == "integer":
        return st.integers(
            None if low is None else math.ceil(low), None if high is None else math.floor(high)
        )
    if name == "number":
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if name == "string":
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            try:
                return st.from_regex(pattern)
            except Exception:
                return st.text(max_size=20)
        shortest = int(_number(node, "minLength") or 0)
        longest = _number(node, "maxLength")
        return st.text(min_size=shortest, max_size=max(shortest, int(longest or 20)))
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


def _ints_to_floats(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _ints_to_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_ints_to_floats(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return float(value)
    return value


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
        upstream = _hypothesis_jsonschema(json.dumps(generation, sort_keys=True))
        # hypothesis-jsonschema builds strategies while drawing objects, which makes it
        # several times slower than the kit's generator: it gets one draw in three.
        sources += [own, own] if upstream is None else [own, upstream, own]
    else:
        sources.append(_own_values({k: v for k, v in plain.items() if k != "$ref"}))

    def is_valid(value: Any) -> bool:
        return isinstance(value, dict) and bool(validator.is_valid(value))

    accepted = st.one_of(sources).filter(is_valid)

    def maybe_floats(pair: tuple[dict[str, Any], bool]) -> dict[str, Any]:
        value, mutate = pair
        if mutate:
            floated = _ints_to_floats(value)
            if validator.is_valid(floated):
                return floated  # type: ignore[no-any-return]
        return value

    return st.tuples(accepted, st.booleans()).map(maybe_floats)


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


# ---------------------------------------------------------------------------------------------
# Calls validation must reject, and calls only full JSON Schema rejects


def _sentinelized(value: Any, padding: int, counter: list[int]) -> Any:
    if isinstance(value, Mapping):
        return {key: _sentinelized(item, padding, counter) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sentinelized(item, padding, counter) for item in value]
    if isinstance(value, str):
        counter[0] += 1
        return f"{SENTINEL_MARK}{counter[0]}" + "-value" * (padding // 6)
    return value


@st.composite
def _sentinels(draw: st.DrawFn, value: Any) -> Any:
    """`value` with every string leaf (not key) replaced by a distinct sentinel string, short
    or thousands of characters long."""
    return _sentinelized(value, draw(st.sampled_from([0, 0, 0, 40, 5000])), [0])


def aim_possible(aim: str, schema: Mapping[str, Any]) -> bool:
    """Whether `invalid_calls` can aim at this clause with a tool of this ``parameters``
    schema (V2 and V3 always can)."""
    if aim == "V4":
        return bool(effective_required(schema))
    if aim == "V5":
        return closed_properties(schema) is not None
    if aim == "V6":
        return bool(typed_properties(schema))
    return True


_WRONG_VALUES: tuple[Any, ...] = (
    True,
    False,
    "7",
    None,
    7,
    -1,
    2.5,
    "text",
    ["text"],
    {"k": "text"},
    [],
    {},
    True,
    "1.5",
)
"""Values of the wrong JSON type for some declared type; the near misses (a bool for a number,
a number in a string) come twice as often."""


@st.composite
def invalid_calls(
    draw: st.DrawFn, tools: ToolRegistry | Sequence[Any], aims: Iterable[str] = INVALID_AIMS
) -> ToolCall:
    """A ToolCall that validation must reject, aimed at one of `aims` (V2–V6) and otherwise
    as valid as possible. Every string value in its arguments contains `SENTINEL_MARK`."""
    listed = _tools(tools)
    names = {name for name, _ in listed}
    possible = [
        aim for aim in aims if aim == "V2" or any(aim_possible(aim, schema) for _, schema in listed)
    ]
    if not possible:
        reject()
    aim = draw(st.sampled_from(possible))
    if aim == "V2":
        near_miss = draw(st.booleans())
        if listed and near_miss:
            near = draw(st.sampled_from([name for name, _ in listed]))
            name = draw(st.sampled_from(_near_misses(near)))
        else:
            name = draw(tool_names() | st.sampled_from(["", " ", "\t", "unknown_tool"]))
        assume(name not in names)
        arguments = draw(st.dictionaries(property_names(), json_values(max_leaves=4), max_size=3))
        return ToolCall(name=name, arguments=draw(_sentinels(arguments)))
    name, schema = draw(st.sampled_from([(n, s) for n, s in listed if aim_possible(aim, s)]))
    if aim == "V3":
        base = draw(valid_arguments(schema) | st.just({"query": "text"}))
        wrong = draw(st.sampled_from(["none", "json text", "pairs", "list", "scalar"]))
        if wrong == "none":
            return ToolCall(name=name, arguments=None)
        if wrong == "json text":
            return ToolCall(name=name, arguments=json.dumps(draw(_sentinels(base))))
        if wrong == "pairs":
            pairs = [[key, value] for key, value in base.items()] or [["query", "text"]]
            return ToolCall(name=name, arguments=draw(_sentinels(pairs)))
        if wrong == "list":
            return ToolCall(
                name=name,
                arguments=draw(_sentinels(draw(st.lists(json_values(max_leaves=3), max_size=3)))),
            )
        scalar = draw(st.sampled_from([0, 1.5, True, "text"]))
        return ToolCall(name=name, arguments=draw(_sentinels(scalar)))
    if aim == "V4":
        required = effective_required(schema)
        base = draw(valid_arguments(schema) | st.just({}))
        drop = draw(st.lists(st.sampled_from(required), min_size=1, unique=True))
        arguments = {key: value for key, value in base.items() if key not in drop}
    elif aim == "V5":
        allowed = closed_properties(schema) or frozenset()
        base = draw(valid_arguments(schema))
        candidates = [miss for key in sorted(allowed) for miss in _near_misses(key)]
        extra_key = st.one_of(
            property_names(),
            st.integers(100, 3000).map(lambda n: ("extra_key_" * (n // 10 + 1))[:n]),
            *([st.sampled_from(candidates)] if candidates else []),
        )
        extras = draw(
            st.lists(
                extra_key.filter(lambda k: k not in allowed and _clean_key(k)),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        arguments = {**base, **{key: "text" for key in extras}}
    else:  # V6
        typed = typed_properties(schema)
        key = draw(st.sampled_from(sorted(typed)))
        base = draw(valid_arguments(schema))
        wrong_values = [
            v for v in _WRONG_VALUES if json_types_of(v) and not json_types_of(v) & typed[key]
        ]
        assume(wrong_values)
        arguments = {**base, key: draw(st.sampled_from(wrong_values))}
    return ToolCall(name=name, arguments=draw(_sentinels(arguments)))


_ODD_VALUES: tuple[Any, ...] = (None, "x", 0, -1, 1.5, True, [], {}, [None], {"zz": None})


def _variants(value: Any, depth: int = 0) -> list[Any]:
    """Values near `value`. At the top level (depth 0) they keep its JSON type, so the subset
    has nothing to object to, while enums, ranges, lengths and nested schemas may break."""
    found: list[Any] = []
    if isinstance(value, bool):
        found.append(not value)
    elif isinstance(value, int):
        found += [value + 10**6, value - 10**6, float(value)]
    elif isinstance(value, float):
        found += [value + 1e9, -value - 1e9]
    elif isinstance(value, str):
        found += [f"{SENTINEL_MARK}-not-allowed", "", "x" * 200]
    elif isinstance(value, list):
        found += [[], [*value, *value], *([*value, odd] for odd in _ODD_VALUES[:4])]
        if value and depth < 3:
            found += [[variant, *value[1:]] for variant in _variants(value[0], depth + 1)]
    elif isinstance(value, dict):
        found += [{**value, "zz_extra": odd} for odd in _ODD_VALUES[:3]]
        found += [{k: v for k, v in value.items() if k != key} for key in value]
        if depth < 2:
            for key, item in value.items():
                found += [{**value, key: variant} for variant in _variants(item, depth + 1)]
    if depth > 0:
        found += [odd for odd in _ODD_VALUES if odd != value]
    return found


@st.composite
def beyond_subset_calls(draw: st.DrawFn, tools: ToolRegistry | Sequence[Any]) -> ToolCall:
    """A ToolCall that full JSON Schema rejects but the contract's subset accepts (E14): an
    enum or range violation, a broken nested object, an extra key an
    ``additionalProperties`` schema or ``patternProperties`` forbids, ``3.0`` for a draft-04
    integer, ... Drawn from every such variant of one valid call; none means the example is
    rejected."""
    listed = _tools(tools)
    if not listed:
        reject()
    name, schema = draw(st.sampled_from(listed))
    arguments = draw(valid_arguments(schema))
    schemas = {n: s for n, s in listed}
    validator = full_validator(schema)
    extra_keys = [
        {**arguments, key: odd}
        for key in ("zz_extra", "x-extra", "42")
        for odd in ("x", 1, None)
        if key not in arguments
    ]
    candidates = [
        variant
        for variant in [*extra_keys, *_variants(arguments)][:150]
        if isinstance(variant, dict)
        and not validator.is_valid(variant)
        and not must_reject(schemas, name, variant)
    ]
    if not candidates:
        reject()
    return ToolCall(name=name, arguments=draw(st.sampled_from(candidates)))


# ---------------------------------------------------------------------------------------------
# Actions without a tool call, and handler behaviours

_CODE = (
    'print("hello")',
    '{"name": "read_file", "arguments": {"path": "a.txt"}}',
    "import os\nos.listdir('.')",
    "read_file(path='a.txt')",
    " ",
)


@st.composite
def code_actions(draw: st.DrawFn) -> Action:
    """Actions carrying code instead of a tool call (E1), some looking like a tool call."""
    code = draw(st.sampled_from(_CODE) | st.text(min_size=1, max_size=80))
    try:
        return Action(code=code)
    except (TypeError, ValueError):
        reject()


def observation_texts() -> st.SearchStrategy[str]:
    """Handler results: short and long texts of any alphabet, including empty, control
    characters, lone surrogates and 100,000+ characters."""
    return st.one_of(
        st.text(max_size=40),
        st.sampled_from(["", "ok", "line 1\nline 2\n", "\x00\x1b[31m", "\ud800 lone surrogate"]),
        st.text(st.characters(exclude_categories=()), max_size=200),
        st.builds(
            lambda n, unit: (unit * (n // len(unit) + 1))[:n],
            st.integers(1_000, 150_000),
            st.sampled_from(["abc\n", "日本語", "\U0001f600", "x"]),
        ),
    )


@lru_cache(maxsize=1)
def _messages() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40), st.sampled_from(["", "backend unreachable", "multi\nline\nmessage"])
    )


def handler_behaviours(
    kinds: Iterable[str] = ("text", "environment_error", "error"),
) -> st.SearchStrategy[Behaviour]:
    """Scripted handler behaviours of the given kinds (see `BEHAVIOUR_KINDS`):

    ``text`` return an `observation_texts` text (E5); ``environment_error`` raise
    ToolEnvironmentError or a subclass (E3); ``error`` raise an ordinary exception (E4);
    ``error_like`` raise ValueError, the handler's own ToolValidationError, OSError and other
    exceptions an executor may mistake for validation or environment errors (E10);
    ``unprintable`` raise an exception whose str() raises (E12); ``base_exception`` raise a
    non-Exception BaseException (E6); ``suspend`` wait until cancelled (E6); ``non_str``
    return a non-str (E9); ``mutate``, ``yield`` and ``sleep`` wrap a text-returning behaviour
    to mutate the arguments (E13), yield to the event loop, or sleep a few milliseconds."""
    chosen = list(kinds)
    unknown = sorted(set(chosen) - set(BEHAVIOUR_KINDS))
    if unknown or not chosen:
        raise ValueError(f"unknown behaviour kinds {unknown}; choose from {BEHAVIOUR_KINDS}")
    texts = st.builds(ReturnText, text=observation_texts())
    table: dict[str, st.SearchStrategy[Behaviour]] = {
        "text": texts,
        "environment_error": st.builds(
            RaiseEnvironmentError, message=_messages(), subclass=st.booleans()
        ),
        "error": st.builds(
            RaiseError, kind=st.sampled_from(sorted(ERROR_KINDS)), message=_messages()
        ),
        "error_like": st.builds(
            RaiseError,
            kind=st.sampled_from(sorted(ENVIRONMENT_LIKE_ERROR_KINDS)),
            message=_messages(),
        ),
        "unprintable": st.builds(
            RaiseUnprintable, environment=st.booleans(), non_str_message=st.booleans()
        ),
        "base_exception": st.builds(
            RaiseBaseException, kind=st.sampled_from(sorted(BASE_EXCEPTION_KINDS))
        ),
        "suspend": st.just(Suspend()),
        "non_str": st.builds(ReturnNonStr, kind=st.sampled_from(sorted(NON_STR_KINDS))),
        "mutate": st.builds(MutateArguments, then=texts),
        "yield": st.builds(YieldFirst, times=st.integers(0, 5), then=texts),
        "sleep": st.builds(Sleep, seconds=st.sampled_from([0.0, 0.001, 0.003]), then=texts),
    }
    return st.one_of([table[kind] for kind in chosen])
