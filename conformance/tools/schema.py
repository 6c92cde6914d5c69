"""The schema half of the tool authors' checks: JSON data (H5), metaschema and top level (H2).

Pure functions over plain values; each returns `Problem`s that `conformance.tools.clauses`
turns into findings.
Nothing here calls a handler or generates data.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from jsonschema import FormatChecker, validators
from jsonschema.exceptions import ValidationError

from conformance._core.dialect import (
    declared_validator,
    in_place_ref_cycle,
    make_validator,
    unresolved_refs,
)
from conformance._core.text import json_text, shorten
from conformance.tools.ecma_regex import RegexVerdict, judge

__all__ = [
    "Problem",
    "format_path",
    "json_problems",
    "round_trip_problems",
    "schema_problems",
]

MAX_DEPTH = 64
"""The nesting limit polyloop's ToolSpec enforces (S4); deeper data is reported, not recursed."""

SIMPLE_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")

_TYPE_FIXES: dict[str, str] = {
    "dict": "object",
    "map": "object",
    "mapping": "object",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "int": "integer",
    "long": "integer",
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "none": "null",
    "nonetype": "null",
}
"""Python (and other languages') type names people write in tool schemas -> the JSON type."""

_ANY_TYPES = frozenset({"any", "object_any", "anything", "mixed"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """One thing wrong with a schema: where (a path of keys/indices), what, and the fix."""

    path: tuple[str | int, ...]
    code: str
    message: str
    fix: str
    note: bool = False
    """A doubt the kit cannot settle (reported, never a failure), not a problem."""


def format_path(path: Sequence[object], root: str = "parameters") -> str:
    """`('properties', 'x', 0)` -> `parameters['properties']['x'][0]` (the form S4 uses)."""
    return root + "".join(f"[{step!r}]" for step in path)


# --- H5: JSON data -------------------------------------------------------------------------------

_PY_TYPE_AS_JSON: dict[type, str] = {
    dict: "object",
    list: "array",
    tuple: "array",
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _not_json(value: object) -> tuple[str, str, str]:
    """(code, message, fix) for a value that is not JSON data."""
    if isinstance(value, type):
        name = value.__name__
        json_name = _PY_TYPE_AS_JSON.get(value)
        if json_name is not None:
            return (
                "python-type",
                f"the Python class `{name}` is not JSON",
                f'write the string "{json_name}"',
            )
        return ("python-type", f"the Python class `{name}` is not JSON", "write a JSON type name")
    if isinstance(value, float):
        return (
            "non-finite",
            f"{value!r} is not a JSON number",
            "use a finite number, or drop the keyword",
        )
    if isinstance(value, (set, frozenset)):
        return (
            "not-json",
            "a set is not JSON",
            'use a list (with "uniqueItems": true if duplicates must be refused)',
        )
    if isinstance(value, (bytes, bytearray)):
        return ("not-json", "bytes are not JSON", "decode them to a str")
    kind = type(value).__name__
    return (
        "not-json",
        f"a `{kind}` object is not JSON",
        "use only dict, list, str, int, finite float, bool and None",
    )


def json_problems(value: object, root: tuple[str | int, ...] = ()) -> list[Problem]:
    """Every place where `value` is not JSON data (S4's rule), without ever recursing deeply.

    Iterative with an explicit stack, so a reference cycle or a 10,000-level nesting is
    reported rather than raising `RecursionError`.
    """
    problems: list[Problem] = []
    # (value, path, ids of the containers on the way down)
    stack: list[tuple[object, tuple[str | int, ...], frozenset[int]]] = [(value, root, frozenset())]
    while stack:
        item, path, ancestors = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float) and math.isfinite(item):
            continue
        if isinstance(item, (Mapping, list, tuple)):
            if id(item) in ancestors:
                problems.append(
                    Problem(
                        path=path,
                        code="cycle",
                        message="the value contains itself (a reference cycle)",
                        fix="build the schema as a tree: copy the shared part instead",
                    )
                )
                continue
            if len(path) - len(root) >= MAX_DEPTH:
                problems.append(
                    Problem(
                        path=path,
                        code="too-deep",
                        message=f"nesting deeper than {MAX_DEPTH} levels",
                        fix="flatten the schema, or share the repeated part through $defs/$ref",
                    )
                )
                continue
            inner = ancestors | {id(item)}
            children: list[tuple[object, tuple[str | int, ...], frozenset[int]]] = []
            if isinstance(item, Mapping):
                for key, child in item.items():
                    if not isinstance(key, str):
                        problems.append(
                            Problem(
                                path=(*path, key),
                                code="non-str-key",
                                message=(
                                    f"the key {key!r} is a {type(key).__name__}; "
                                    "JSON object keys are strings"
                                ),
                                fix=f"use the key {str(key)!r}",
                            )
                        )
                        continue
                    children.append((child, (*path, key), inner))
            else:
                children = [(child, (*path, i), inner) for i, child in enumerate(item)]
            stack.extend(reversed(children))
            continue
        code, message, fix = _not_json(item)
        problems.append(Problem(path=path, code=code, message=message, fix=fix))
    return problems


def round_trip_problems(model_entry: object) -> list[Problem]:
    """Where `json.loads(json.dumps(entry))` differs from `entry` (H5), as paths into it."""
    try:
        text = json.dumps(model_entry, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return [
            Problem(
                path=(),
                code="not-serialisable",
                message=f"json.dumps fails: {type(exc).__name__}: {exc}",
                fix="return plain dicts, lists, str, int, float, bool and None",
            )
        ]
    back = json.loads(text)
    return [
        Problem(
            path=path,
            code="round-trip",
            message=f"{what} after a JSON round trip",
            fix="return plain dicts and lists (not tuples or other containers)",
        )
        for path, what in _differences(model_entry, back, ())
    ]


def _differences(
    before: object, after: object, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if type(before) is not type(after):
        yield path, f"a {type(before).__name__} becomes a {type(after).__name__}"
    elif isinstance(before, dict) and isinstance(after, dict):
        if list(before) != list(after):
            yield path, "the keys change"
        else:
            for key in before:
                yield from _differences(before[key], after[key], (*path, key))
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            yield path, "the length changes"
        else:
            for i, (b, a) in enumerate(zip(before, after, strict=True)):
                yield from _differences(b, a, (*path, i))
    elif before != after:
        yield path, "the value changes"


# --- H2: metaschema and top level ----------------------------------------------------------------


def _type_name_fix(name: str) -> tuple[str, str]:
    """(message, fix) for a `type` value that is not a JSON Schema type name."""
    message = f"`{name}` is not a JSON Schema type"
    lower = name.strip().lower()
    if lower in _ANY_TYPES:
        return message, "omit `type` to accept any value"
    suggestion = _TYPE_FIXES.get(lower)
    if suggestion is None and lower in SIMPLE_TYPES:
        suggestion = lower
    if suggestion is None:
        close = difflib.get_close_matches(lower, SIMPLE_TYPES, n=1, cutoff=0.6)
        suggestion = close[0] if close else None
    if suggestion is None:
        return message, "use one of " + ", ".join(f"`{t}`" for t in SIMPLE_TYPES)
    return message, f"did you mean `{suggestion}`?"


_KEYWORD_FIXES: dict[str, str] = {
    "items": "from draft 2020-12 on, `items` is one schema; use `prefixItems` for a list of them",
    "required": "`required` is a list of property names at the object level, not a boolean",
    "pattern": "write a valid ECMA-262 regular expression",
}


class _NotEcmaRegex(Exception):
    """Raised by the `regex` format check so the verdict reaches the error as its cause."""

    def __init__(self, verdict: RegexVerdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def _ecma_regex(instance: object) -> bool:
    """The `regex` format judged by ECMA-262 syntax, as JSON Schema specifies, not Python's."""
    if not isinstance(instance, str):
        return True
    verdict = judge(instance)
    if verdict.valid is True:
        return True
    raise _NotEcmaRegex(verdict)


def _format_checker(base: FormatChecker) -> FormatChecker:
    checker = FormatChecker(formats=())
    checker.checkers = dict(base.checkers)
    checker.checks("regex", raises=_NotEcmaRegex)(_ecma_regex)
    return checker


def _json_message(error: ValidationError) -> str:
    """jsonschema's message with the values it quotes as Python reprs written as JSON, the
    language of the schema (`'x' is not of type 'integer'` -> `"x" is not of type "integer"`)."""
    text = error.message
    shown = repr(error.instance)
    if text.startswith(shown):
        text = json_text(error.instance) + text[len(shown) :]
    expected = error.validator_value
    for value in expected if isinstance(expected, list) else [expected]:
        if isinstance(value, str):
            text = text.replace(repr(value), json_text(value))
    return text


def _regex_problem(error: ValidationError, path: tuple[str | int, ...]) -> Problem | None:
    cause = error.cause
    if not isinstance(cause, _NotEcmaRegex):
        return None
    verdict = cause.verdict
    return Problem(
        path=path,
        code="regex-undecided" if verdict.valid is None else "not-ecma-regex",
        message=f"{shorten(json_text(error.instance), 80)}: {verdict.message}",
        fix=verdict.fix,
        note=verdict.valid is None,
    )


def _metaschema_problem(error: ValidationError, dialect: str) -> list[Problem]:
    path: tuple[str | int, ...] = tuple(error.absolute_path)
    regex_problem = _regex_problem(error, path)
    if regex_problem is not None:
        return [regex_problem]
    if path and path[-1] == "type":
        names = [error.instance] if isinstance(error.instance, str) else error.instance
        if isinstance(names, list):
            bad = [
                (i, name)
                for i, name in enumerate(names)
                if isinstance(name, str) and name not in SIMPLE_TYPES
            ]
            if bad:
                problems = []
                for i, name in bad:
                    message, fix = _type_name_fix(name)
                    where = path if isinstance(error.instance, str) else (*path, i)
                    problems.append(
                        Problem(path=where, code="unknown-type", message=message, fix=fix)
                    )
                return problems
    keyword = next((step for step in reversed(path) if isinstance(step, str)), None)
    fix = _KEYWORD_FIXES.get(str(keyword), f"make it valid under the {dialect} metaschema")
    message = shorten(_json_message(error), 200)
    return [Problem(path=path, code="metaschema", message=message, fix=fix)]


def _ref_problems(schema: object) -> list[Problem]:
    """A `$ref` that does not resolve within the schema: the kit never retrieves one (neither
    over the network nor from a file), and a model cannot see what it points to either."""
    problems = []
    for found in unresolved_refs(schema):
        shown = shorten(found.ref, 100)
        code, message, fix = (
            (
                "external-ref",
                f"external `$ref` `{shown}` is not resolved",
                "inline it: put the schema under `$defs` and refer to `#/$defs/NAME`",
            )
            if found.external
            else (
                "unresolved-ref",
                f"`$ref` `{shown}` points nowhere in this schema",
                "point it at an existing subschema, e.g. `#/$defs/NAME`",
            )
        )
        problems.append(Problem(path=found.path, code=code, message=message, fix=fix))
    cycle = in_place_ref_cycle(schema)
    if cycle is not None:
        path, ref = cycle
        problems.append(
            Problem(
                path=path,
                code="ref-cycle",
                message=(
                    f"`$ref` `{shorten(ref, 100)}` leads back to a schema already applied to the "
                    "same value, so validation can recurse forever (RecursionError)"
                ),
                fix="break the loop: refer to the schema only under `properties`/`items`, "
                "which descend into the value",
            )
        )
    return problems


def schema_problems(schema: object) -> list[Problem]:
    """H2: the schema is valid under its dialect's metaschema, with `"type": "object"` on top.

    `schema` is thawed JSON data (plain dicts and lists): jsonschema recognises only `dict`
    as an object.
    """
    if not isinstance(schema, dict):
        return [
            Problem(
                path=(),
                code="not-object-schema",
                message=f"parameters is a {type(schema).__name__}, not a JSON object schema",
                fix='use {"type": "object", "properties": {...}}',
            )
        ]
    cls, dialect = declared_validator(schema)
    problems: list[Problem] = []
    if cls is None:
        problems.append(
            Problem(
                path=("$schema",),
                code="unknown-dialect",
                message=f"$schema {dialect} names no JSON Schema dialect jsonschema knows",
                fix=(
                    'use "https://json-schema.org/draft/2020-12/schema" or '
                    '"http://json-schema.org/draft-07/schema#", or drop $schema'
                ),
            )
        )
        cls = validators.Draft202012Validator
        dialect = "2020-12"
    # What `cls.check_schema` does, but keeping every error rather than the best one.
    meta_cls = validators.validator_for(cls.META_SCHEMA, default=cls)
    checker = _format_checker(cls.FORMAT_CHECKER)
    meta = make_validator(meta_cls, cls.META_SCHEMA, format_checker=checker)
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in meta.iter_errors(schema):
        for problem in _metaschema_problem(error, dialect):
            if (problem.path, problem.message) not in seen:
                seen.add((problem.path, problem.message))
                problems.append(problem)
    problems.extend(_ref_problems(schema))
    if not any(problem.path[:1] == ("type",) and not problem.note for problem in problems):
        declared = schema.get("type")
        if declared != "object":
            what = "declares no `type`" if declared is None else f"has type {declared!r}"
            problems.append(
                Problem(
                    path=("type",),
                    code="top-level-type",
                    message=f"the top level {what}; a tool's arguments are always a JSON object",
                    fix='declare "type": "object" at the top level',
                )
            )
    problems.sort(key=lambda problem: [str(step) for step in problem.path])
    return problems
