"""Which jsonschema validator class a schema's ``$schema`` names, decided in one place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import validators

__all__ = ["OLD_DIALECTS", "declared_validator", "ref_siblings_inert", "validator_class"]

OLD_DIALECTS = frozenset(
    {"Draft3Validator", "Draft4Validator", "Draft6Validator", "Draft7Validator"}
)
"""Dialects in which ``$ref`` makes its sibling keywords inert."""


def declared_validator(schema: Mapping[str, Any]) -> tuple[type[Any] | None, str]:
    """The validator class the schema's ``$schema`` names, and how to say which dialect it is.

    No ``$schema`` means 2020-12. ``(None, uri)`` for a ``$schema`` jsonschema does not know (or
    one that is not a string): validators disagree about such a schema."""
    declared = schema.get("$schema")
    if declared is None:
        return validators.Draft202012Validator, "2020-12 (no $schema)"
    if not isinstance(declared, str):
        return None, repr(declared)
    cls = validators.validator_for(dict(schema), default=None)  # type: ignore[arg-type]
    return (None, declared) if cls is None else (cls, declared)


def validator_class(schema: Mapping[str, Any]) -> Any:
    """The validator class for the schema, 2020-12 when its ``$schema`` is absent or unknown."""
    cls, _ = declared_validator(schema)
    return cls if cls is not None else validators.Draft202012Validator


def ref_siblings_inert(schema: Mapping[str, Any]) -> bool:
    """True when the schema's dialect makes the siblings of ``$ref`` inert (draft-07 and
    older). An unrecognised ``$schema`` counts as old too: assuming fewer active keywords can
    only make the oracle demand fewer rejections, never a false one."""
    if schema.get("$schema") is None:
        return False
    cls, _ = declared_validator(schema)
    return cls is None or cls.__name__ in OLD_DIALECTS
