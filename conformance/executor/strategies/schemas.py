"""Realistic tool schemas, the hand-written trap schemas, and tools built from them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from conformance._core.ground_truth import JSON_TYPES
from conformance._core.values import (
    _PROPERTY_WORDS,
    _TOOL_WORDS,
    DIALECTS,
    OLD_DIALECT_NAMES,
    has_sentinel,
    tool_names,
)
from polyloop import ReplayPolicy, ToolRegistry, ToolSpec

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
_ENUM_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -7,
    2.5,
    "asc",
    "x",
    "",
    "日本",
    [1, 2],
    ["a"],
    {"k": 1},
)
"""``enum``/``const`` members, array- and object-valued ones too: a call carries them as
JSON arrays and objects, and a validator comparing them with the spec's frozen copies
(tuples, read-only mappings) or the other way round rejects a valid call (V1)."""
_UNKNOWN_TYPES = ("dict", "float", "any", "tuple", "int", "str", "list")
_PATTERNS = (
    "^[a-z0-9_-]+$",
    "^\\d{4}-\\d{2}-\\d{2}$",
    "^https?://",
    "^[A-Z]{2,3}$",
    "[a-z]",
    "\\.py$",
    "\\d{3}",
)
"""Anchored and unanchored ``pattern``s: JSON Schema matches by search, so ``"[a-z]"``
accepts ``"A-z!"`` and a validator using ``re.fullmatch`` rejects a valid call (V1)."""
_FORMATS = ("uri", "date-time", "email", "date", "uuid", "ipv4", "hostname")
"""``format``s a string property declares. In 2020-12 (and by default before) ``format`` is
an annotation: a string that does not conform is valid, and a validator asserting it rejects a
valid call (V1)."""


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


SPECIAL_PROPERTY_NAMES = (
    "",
    "x-trace",
    "with space",
    "ключ",
    "$ref",
    "type",
    "a.b",
    "self",
    "cls",
    "config",
    "run_manager",
    "callbacks",
    "args",
    "kwargs",
    "kebab-case",
    "名前",
)
"""Property names real tool runtimes treat specially, the one list of them (issue 9, defect 9):
LangChain binds ``config``/``run_manager``/``callbacks`` to parameters of its own and drops
them from the arguments, and refuses ``self``; ``args``/``kwargs``/``cls`` collide with Python
signatures; ``$ref``/``type`` with schema keywords; the rest are not identifiers at all. A
valid call naming them must be accepted (V1) and reach the handler unchanged (E8). Generated
schemas name one of them one property in six; the traps of V1 and E8 name every one."""
SPECIAL_NAMES_TOOL = ToolDef(
    name="special",
    description="",
    parameters={
        "type": "object",
        "properties": {name: {"type": "string"} for name in SPECIAL_PROPERTY_NAMES},
    },
)
"""A tool whose properties are all the `SPECIAL_PROPERTY_NAMES`, for the traps."""
_DEF_NAMES = ("Path", "Options", "Filter", "Range", "Item", "Mode")
_TYPE_NAMES = tuple(sorted(JSON_TYPES))
_ADDITIONAL: tuple[Any, ...] = (None, False, None, False, True, {}, {"type": "string"}, {"not": {}})
"""`additionalProperties` values, absent (None) and false most often."""
_PATTERN_PROPERTIES: tuple[dict[str, Any], ...] = (
    {"^x-": {"type": "string"}},
    {"^[0-9]+$": {}},
    {"_id$": {"type": "integer"}},
    {"id": {}},
    {"[0-9]": {"type": "string"}},
    {"_at$": {"type": "string"}},
)
"""Anchored and unanchored patterns: JSON Schema matches them by search, not from the start."""


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
        return str(c.pick(SPECIAL_PROPERTY_NAMES))
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
            schema["format"] = c.pick(_FORMATS)
    elif kind == "pattern":
        schema = {"type": "string", "pattern": c.pick(_PATTERNS)}
    elif kind == "enum":
        schema = {"type": "string", "enum": c.some(_ENUM_WORDS, 4) or ["auto"]}
    elif kind in ("integer", "number"):
        schema = {"type": kind}
        if c.one_in(3):
            schema["minimum"] = c.integer(-5, 1)
        elif c.one_in(4):
            schema["exclusiveMinimum"] = c.integer(-5, 2)
        if c.one_in(3):
            schema["maximum"] = c.pick((10, 1000) if kind == "integer" else (1, 100.5))
        elif c.one_in(4):
            schema["exclusiveMaximum"] = c.pick((10, 1000) if kind == "integer" else (5, 99.5))
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
    extra = c.pick(_ADDITIONAL)
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
    old = dialect in OLD_DIALECT_NAMES
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

REF_SIBLING_PROPERTY: dict[str, Any] = {
    "$schema": _D7,
    "type": "object",
    "additionalProperties": False,
    "required": ["path"],
    "properties": {"path": {"$ref": "#/definitions/Path", "type": "string"}},
    "definitions": {"Path": {"type": ["string", "array"], "items": {"type": "string"}}},
}
"""The draft-07 trap at property level: ``$ref`` makes its sibling ``"type": "string"`` inert,
so a list of strings is valid."""

REF_SIBLING_ROOT: dict[str, Any] = {
    "$schema": _D7,
    "$ref": "#/definitions/Args",
    "type": "object",
    "required": ["legacy"],
    "properties": {"legacy": {"type": "integer"}},
    "additionalProperties": False,
    "definitions": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}},
}
"""The same trap at the root: ``required`` and ``additionalProperties`` next to ``$ref`` are
inert, so ``{}`` and unlisted keys are valid."""

TRAP_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    },
    {"type": "object", "properties": {}, "additionalProperties": False, "$schema": _D7},
    REF_SIBLING_PROPERTY,
    REF_SIBLING_ROOT,
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


_NAME_ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz",
    "ABCXYZ0123456789_.- ",
    "\t\n\x1f\x7f\u00e9\u00df\u0430\u0435\u200b\u00a0",
    "\u65e5\u672c\u8a9e\U0001f600\u0301\ufeff\u2028/\\\"'{}[]:",
)
"""Characters of the odd names `_seeded_tool_name` writes: what ``st.text`` draws most often
that matters to a name lookup (controls, confusables, zero-width and combining marks, CJK,
astral, JSON syntax). No NUL: no real registry names a tool with one, and runtimes that build
a class per tool (LangGraph's ToolNode, through pydantic) refuse it, which hid their verdicts
behind a set-up error."""


def _seeded_tool_name(rng: random.Random) -> str:
    """A name as `tool_names(allow_long=False)` draws one: a realistic tool word two times in
    five, else an identifier, a dotted or dashed name, or odd non-blank text."""
    while True:
        kind = rng.randrange(5)
        if kind < 2:
            name = rng.choice(_TOOL_WORDS)
        elif kind == 2:
            rest = "abcdefghijklmnopqrstuvwxyz0123456789_"
            name = rng.choice(_NAME_ALPHABETS[0]) + "".join(
                rng.choice(rest) for _ in range(rng.randint(0, 20))
            )
        elif kind == 3:
            rest = _NAME_ALPHABETS[0] + "ABCXYZ0123456789_.-"
            name = rng.choice(_NAME_ALPHABETS[0] + "ABCXYZ") + "".join(
                rng.choice(rest) for _ in range(rng.randint(0, 30))
            )
        else:
            chars = "".join(_NAME_ALPHABETS)
            name = "".join(rng.choice(chars) for _ in range(rng.randint(1, 16)))
        if name.strip() and not has_sentinel(name):
            return name


def _seeded_tool(rng: random.Random, schemas: Sequence[dict[str, Any]], name: str) -> ToolDef:
    return ToolDef(
        name=name,
        description=(
            rng.choice(_DESCRIPTIONS)
            if rng.randrange(2)
            else "".join(rng.choice("".join(_NAME_ALPHABETS)) for _ in range(rng.randint(0, 40)))
        ),
        parameters=rng.choice(schemas),
        replay_policy=rng.choice(list(ReplayPolicy)),
        completes_run=rng.randrange(5) == 4,
    )


@lru_cache(maxsize=8)
def tool_name_pool(seed: int, size: int = 300) -> tuple[str, ...]:
    """`size` tool names built from `seed` as `tool_names(allow_long=False)` draws them."""
    rng = random.Random(seed * 1_000_003 + 7)
    return tuple(_seeded_tool_name(rng) for _ in range(size))


@lru_cache(maxsize=8)
def tool_set_pool(seed: int, size: int = 300, most: int = 3) -> tuple[tuple[ToolDef, ...], ...]:
    """`size` tool sets (one to `most` tools with distinct names, schemas from
    `schema_pool(seed, size)`), built once from `seed`: certification draws a whole registry
    in one choice instead of dozens, and every clause of a run draws from the same sets.

    The first set is the one Hypothesis's simplest draw of `tool_definition_sets` gives (one
    tool, the first word, description and schema); the rest follow, fewest tools and smallest
    schemas first, so shrinking ends on a small registry."""
    schemas = schema_pool(seed, size)
    rng = random.Random(seed * 1_000_003 + 11)
    first = ToolDef(name=_TOOL_WORDS[0], description=_DESCRIPTIONS[0], parameters=schemas[0])
    built: list[tuple[ToolDef, ...]] = []
    for _ in range(size - 1):
        names: list[str] = []
        for _ in range(rng.randint(1, most)):
            name = _seeded_tool_name(rng)
            if name not in names:
                names.append(name)
        built.append(tuple(_seeded_tool(rng, schemas, name) for name in names))
    built.sort(key=lambda tools: (len(tools), sum(len(json.dumps(t.parameters)) for t in tools)))
    return ((first,), *built)


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
