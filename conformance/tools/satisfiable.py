"""H3's question: can any arguments satisfy this schema?

Three answers, cheapest first: a contradiction found in the schema itself (named by its JSON
path), hypothesis-jsonschema's proof that the schema is empty, and the kit's own generator of
valid arguments (the one `certify` uses) finding no instance that jsonschema accepts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from conformance._core.generation import from_schema, refusal
from conformance._core.text import describe_exception

__all__ = ["Satisfiability", "contradictions", "satisfiability"]

Path = tuple[str | int, ...]


@dataclass(frozen=True, kw_only=True)
class Satisfiability:
    """Whether a schema admits an instance; `path`/`detail` locate a contradiction found."""

    satisfiable: bool
    path: Path | None = None
    detail: str | None = None
    undecided: str | None = None
    """Set when the question could not be answered (then `satisfiable` is True)."""


_BOUNDS = (
    ("minimum", "maximum"),
    ("exclusiveMinimum", "maximum"),
    ("minimum", "exclusiveMaximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _object_contradictions(node: Mapping[str, Any], path: Path) -> Iterator[tuple[Path, str]]:
    if node.get("additionalProperties") is not False or node.get("patternProperties"):
        return
    properties = node.get("properties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    required = node.get("required")
    for index, key in enumerate(required if isinstance(required, list) else []):
        if isinstance(key, str) and key not in declared:
            yield (
                (*path, "required", index),
                f"{key!r} is required, but additionalProperties: false allows only the "
                f"declared properties ({', '.join(sorted(declared)) or 'none'})",
            )


def _node_contradictions(node: Mapping[str, Any], path: Path) -> Iterator[tuple[Path, str]]:
    yield from _object_contradictions(node, path)
    for low_key, high_key in _BOUNDS:
        low, high = _number(node.get(low_key)), _number(node.get(high_key))
        if low is not None and high is not None and low > high:
            yield (*path, low_key), f"{low_key} {low:g} is more than {high_key} {high:g}"
    if node.get("enum") == []:
        yield (*path, "enum"), "enum lists no value"


def contradictions(schema: object, path: Path = ()) -> Iterator[tuple[Path, str]]:
    """(JSON path, explanation) of each contradiction visible in the schema's own keywords, in
    the schema and every subschema a valid instance must satisfy (`properties` of required keys,
    `allOf`)."""
    if not isinstance(schema, Mapping):
        return
    yield from _node_contradictions(schema, path)
    properties = schema.get("properties")
    required = schema.get("required")
    if isinstance(properties, Mapping) and isinstance(required, list):
        for key in required:
            if isinstance(key, str) and key in properties:
                yield from contradictions(properties[key], (*path, "properties", key))
    for index, sub in enumerate(schema.get("allOf") or []):
        yield from contradictions(sub, (*path, "allOf", index))


_SEARCH = settings(
    max_examples=50,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,
)


@lru_cache(maxsize=1024)
def _decide(schema_json: str) -> Satisfiability:
    from conformance._core.arguments import valid_arguments

    schema = json.loads(schema_json)
    for path, detail in contradictions(schema):
        return Satisfiability(satisfiable=False, path=path, detail=detail)
    why = refusal(schema)
    if why is not None:  # before any generation or validation: those are what it would hang
        return Satisfiability(satisfiable=True, undecided=f"not generated: {why}")
    try:
        # hypothesis-jsonschema reasons about `multipleOf` in floats, which a tiny divisor
        # defeats (5e-324 on [1, 2] "proves" empty while jsonschema accepts 1): there its
        # proof is only a hint, and the generator below must confirm it.
        if from_schema(schema).is_empty and '"multipleOf"' not in schema_json:
            return Satisfiability(satisfiable=False)
    except Exception:
        pass  # not a proof either way: the kit's own generator decides
    try:
        find(valid_arguments(schema), lambda _value: True, settings=_SEARCH)
    except (NoSuchExample, Unsatisfiable):
        return Satisfiability(
            satisfiable=False, detail="the kit's generator found no instance jsonschema accepts"
        )
    except Exception as exc:
        return Satisfiability(
            satisfiable=True,
            undecided=f"the kit cannot generate from the schema: {describe_exception(exc)}",
        )
    return Satisfiability(satisfiable=True)


def satisfiability(schema: Any) -> Satisfiability:
    """H3's verdict for a valid (thawed) schema."""
    return _decide(json.dumps(schema, sort_keys=True))
