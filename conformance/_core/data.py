"""Data helpers over argument and schema values."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

__all__ = ["arguments_key", "ints_to_floats", "json_equal", "thaw"]


def thaw(value: Any) -> Any:
    """A deep plain copy: every mapping a dict, every list/tuple a list, other values as they are.

    The one copy the kit makes of (possibly deep-frozen) JSON data; callers that may hold cyclic
    or very deep data check it first (`conformance.toolcheck.schema.json_problems`)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


def ints_to_floats(value: Any) -> Any:
    """Every int as the equal float (``3`` -> ``3.0``): no generator produces an integral float
    on its own, and JSON (hence a model) may send one where the schema says ``integer``. Bools
    stay bools; ints beyond 2**53 stay ints (no equal float exists)."""
    if isinstance(value, dict):
        return {key: ints_to_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [ints_to_floats(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return float(value)
    return value


def arguments_key(value: Any) -> Hashable:
    """A hashable key that is equal for argument structures Python considers equal (so ``3``
    and ``3.0`` share a key), used to find the behaviour scripted for a call."""
    if isinstance(value, Mapping):
        return ("object", frozenset((key, arguments_key(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return ("array", tuple(arguments_key(item) for item in value))
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, Hashable):
        return ("value", value)
    return ("unhashable", id(value))


def json_equal(a: Any, b: Any) -> bool:
    """Equality of argument structures by JSON type: ``True`` is not ``1``, but ``3 == 3.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (Mapping, list, tuple)) or isinstance(b, (Mapping, list, tuple)):
        return False
    return (type(a) is type(b) and a == b) or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    )
