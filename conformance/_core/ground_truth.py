"""What full JSON Schema and the contract's subset read in a parameters schema, computed
without any executor: the ground-truth validator (V1, E14), the keys and types validation must
enforce (V4-V6). The oracle (`conformance.executor.oracle`) builds its expectations on these; the
strategies aim invalid calls with them."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

from conformance._core.data import thaw
from conformance._core.dialect import (
    in_place_ref_cycle,
    make_validator,
    ref_siblings_inert,
    unresolved_refs,
    validator_class,
)

JSON_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


def _unknown_type_names(schema: Any) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            declared = node.get("type")
            names = [declared] if isinstance(declared, str) else declared
            if isinstance(names, (list, tuple)):
                found.update(n for n in names if isinstance(n, str) and n not in JSON_TYPES)
            stack.extend(
                v for k, v in node.items() if k not in ("enum", "const", "default", "examples")
            )
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return found


class UnresolvedReference(ValueError):
    """A schema refers to another document, which the kit never retrieves, or its `$ref`s loop
    without descending into the value, so no validation would end (issue 13)."""


def _exact_multiple_of(cls: type[Validator]) -> type[Validator]:
    """`cls` whose `multipleOf` answers where jsonschema's own raises `OverflowError`.

    jsonschema divides in floats: an integer beyond float range (`{"multipleOf": 0.5}` on
    10**400) raises inside it. That is the kit's arithmetic failing, not the tool, so where
    jsonschema cannot answer the kit decides exactly with fractions; elsewhere jsonschema's
    verdict stands, being the ground truth.
    """
    original = cls.VALIDATORS.get("multipleOf")
    if original is None:
        return cls

    def multiple_of(
        validator: Validator, divisor: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        try:
            yield from original(validator, divisor, instance, schema)
        except OverflowError:
            if Fraction(instance) % Fraction(divisor) != 0:
                yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")

    extended: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
        cls, validators={"multipleOf": multiple_of}
    )
    return extended


@lru_cache(maxsize=1024)
def _cached_validator(schema_json: str) -> Validator:
    # A memo of a pure function of the schema text: building a validator class and resolving
    # its references costs far more than validating one instance.
    schema = json.loads(schema_json)
    external = [found for found in unresolved_refs(schema) if found.external]
    if external:
        raise UnresolvedReference(
            f"the schema's external `$ref` {external[0].ref!r} is not resolved: the kit never "
            "retrieves a schema over the network or from a file; inline it (under `$defs`) "
            "to check this tool (check-tools reports it as H2)"
        )
    cycle = in_place_ref_cycle(schema)
    if cycle is not None:
        raise UnresolvedReference(
            f"the schema's `$ref` {cycle[1]!r} loops back to the same value, so validation "
            "recurses forever; break the loop (check-tools reports it as H2)"
        )
    cls: type[Validator] = _exact_multiple_of(validator_class(schema))
    unknown = _unknown_type_names(schema)
    if unknown:
        # V6: "an unknown type name accepts everything". jsonschema would raise UnknownType.
        checker = cls.TYPE_CHECKER.redefine_many(
            {name: (lambda _checker, _instance: True) for name in unknown}
        )
        cls = validators.extend(cls, type_checker=checker)  # type: ignore[no-untyped-call]
    # Never retrieving: a `$ref` to another document is unresolvable, not fetched (issue 13).
    validator: Validator = make_validator(cls, schema)
    return validator


def full_validator(schema: Mapping[str, Any]) -> Validator:
    """The ground-truth validator for a parameters schema: ``jsonschema`` under the dialect the
    schema declares (2020-12 when it declares none), with unknown type names accepting
    everything, as the contract says for V6. It never retrieves a reference: a schema with an
    external `$ref` raises `UnresolvedReference` (a `ValueError`) naming it."""
    return _cached_validator(json.dumps(thaw(schema), sort_keys=True))


def accepts(schema: Mapping[str, Any], instance: Any) -> bool:
    """Whether full JSON Schema accepts the instance (see `full_validator`)."""
    return bool(full_validator(schema).is_valid(thaw(instance)))


def _ecma_pattern(pattern: str) -> str:
    """`pattern` with ECMA-262's ``$`` (the end of the input, outside multiline mode) in place
    of Python's (which also matches before a final newline). Escapes and character classes are
    copied as they are."""
    out, index, in_class = [], 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "]":  # "[]...]": the "]" is a member
                out.append("[]")
                index += 2
                continue
        elif char == "$":
            char = "\\Z"
        out.append(char)
        index += 1
    return "".join(out)


def _ascii_ecma_search(pattern: str, instance: str) -> bool:
    return re.search(_ecma_pattern(pattern), instance, flags=re.ASCII) is not None


@lru_cache(maxsize=1024)
def _stricter_validator(schema_json: str) -> Validator | None:
    """The ground truth's strict twin, for `depends_on_dialect_choice`: ``pattern`` read the
    ECMA-262 way (``$`` is the end, ``\\d``/``\\w``/``\\s`` ASCII; approximated with Python
    ``re``, so where the two readings differ at all the call counts as undecided), and
    ``format`` asserted up to 2019-09, where a validator may assert it by default. In 2020-12
    (also a schema without ``$schema``) ``format`` is an annotation unless a validator is
    configured otherwise, so a string that does not conform is valid (V1). None when the
    schema has neither keyword."""
    if '"pattern"' not in schema_json and '"format"' not in schema_json:
        return None
    schema = json.loads(schema_json)
    base = _cached_validator(schema_json)
    cls = type(base)

    def pattern(validator: Any, patrn: Any, instance: Any, _schema: Any) -> Any:
        if not validator.is_type(instance, "string") or not isinstance(patrn, str):
            return
        try:
            found = _ascii_ecma_search(patrn, instance)
        except re.error:
            return
        if not found:
            yield ValidationError(f"{instance!r} does not match {patrn!r} (ECMA-262 reading)")

    strict = validators.extend(cls, validators={"pattern": pattern})  # type: ignore[no-untyped-call]
    modern = cls.META_SCHEMA.get("$schema") == Draft202012Validator.META_SCHEMA["$schema"]
    asserted = None if modern else cls.FORMAT_CHECKER
    return strict(schema, format_checker=asserted)  # type: ignore[no-any-return]


def depends_on_dialect_choice(schema: Mapping[str, Any], instance: Any) -> bool:
    """Whether JSON Schema's own latitude decides this call (E14): its validity hangs on a
    ``pattern`` that Python ``re`` and ECMA-262 read differently (``$`` before a final newline,
    non-ASCII digits for ``\\d``, ...), or, up to 2019-09, on a ``format`` — an annotation a
    validator there may also assert (2020-12 says it must not by default). Such a call may be
    rejected or dispatched; it is never "must accept"."""
    strict = _stricter_validator(json.dumps(thaw(schema), sort_keys=True))
    if strict is None:
        return False
    try:
        return not strict.is_valid(thaw(instance))
    except Exception:  # a format checker that cannot take the value: undecided, too
        return True


def json_types_of(value: Any) -> frozenset[str]:
    """The JSON types a value belongs to, by the contract's semantics (V6): bool is only
    boolean, an integral float is an integer too, a tuple is an array, any mapping an object."""
    if value is None:
        return frozenset({"null"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int):
        return frozenset({"integer", "number"})
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return frozenset({"integer", "number"})
        return frozenset({"number"})
    if isinstance(value, str):
        return frozenset({"string"})
    if isinstance(value, Mapping):
        return frozenset({"object"})
    if isinstance(value, (list, tuple)):
        return frozenset({"array"})
    return frozenset()


def _root_inert(schema: Mapping[str, Any]) -> bool:
    return "$ref" in schema and ref_siblings_inert(schema)


def effective_required(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The top-level required keys validation must enforce (V4); none when a draft <= 07 root
    ``$ref`` makes ``required`` inert."""
    required = schema.get("required")
    if _root_inert(schema) or not isinstance(required, (list, tuple)):
        return ()
    return tuple(dict.fromkeys(key for key in required if isinstance(key, str)))


def closed_properties(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """The allowed top-level keys when V5 applies (``additionalProperties: false`` and no
    ``patternProperties``), else None."""
    if (
        _root_inert(schema)
        or schema.get("additionalProperties") is not False
        or "patternProperties" in schema
    ):
        return None
    properties = schema.get("properties")
    return frozenset(properties) if isinstance(properties, Mapping) else frozenset()


def typed_properties(schema: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Top-level properties whose declared ``type`` validation must enforce (V6): key -> the
    allowed JSON types. Leaves out unknown type names, and property schemas holding ``$ref``
    in a draft <= 07 schema."""
    properties = schema.get("properties")
    if _root_inert(schema) or not isinstance(properties, Mapping):
        return {}
    inert = ref_siblings_inert(schema)
    typed: dict[str, frozenset[str]] = {}
    for key, subschema in properties.items():
        if not isinstance(subschema, Mapping) or "type" not in subschema:
            continue
        if inert and "$ref" in subschema:
            continue
        declared = subschema["type"]
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, (list, tuple)) or not names:
            continue
        if all(isinstance(name, str) and name in JSON_TYPES for name in names):
            typed[key] = frozenset(names)
    return typed
