"""Data helpers over argument and schema values."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

from conformance._core.text import type_name

__all__ = [
    "arguments_key",
    "fingerprint",
    "ints_to_floats",
    "is_plain_json",
    "json_equal",
    "mutate_in_place",
    "picture_text",
    "thaw",
]


def thaw(value: Any) -> Any:
    """A deep plain copy: every mapping a dict, every list/tuple a list, other values as they are.

    The one copy the kit makes of (possibly deep-frozen) JSON data; callers that may hold cyclic
    or very deep data check it first (`conformance.tools.schema.json_problems`)."""
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


def mutate_in_place(value: Any, depth: int = 0) -> None:
    """Change a received argument structure in place, wherever it is mutable: dicts and lists,
    and (E13) what non-JSON leaves hold — set members, dict keys and other objects' attributes,
    bytearrays — so a leaf the executor shares with the recorded call shows the change."""
    if depth > 20:
        return
    if isinstance(value, dict):
        for key in list(value):
            if type(key) is not str:
                mutate_in_place(key, depth + 1)
        for item in list(value.values()):
            mutate_in_place(item, depth + 1)
        value["__mutated_by_handler__"] = True
        for key in [key for key in value if key != "__mutated_by_handler__"][:1]:
            del value[key]
    elif isinstance(value, list):
        for item in value:
            mutate_in_place(item, depth + 1)
        value.append("mutated by handler")
    elif isinstance(value, set):
        for item in list(value):
            mutate_in_place(item, depth + 1)
        value.add("mutated by handler")
    elif isinstance(value, bytearray):
        value.extend(b"!")
    elif type(value) not in (str, int, float, bool, type(None)):
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            for item in list(attributes.values()):
                mutate_in_place(item, depth + 1)


def fingerprint(value: Any, depth: int = 0) -> Any:
    """A hashable picture of an argument structure *including* what non-JSON leaves hold (set
    members, object attributes, bytes), taken at one moment: two pictures differ when a mutation
    happened in between, even where a shallow copy shares the leaf (E13). Mappings and
    lists/tuples compare by content whatever their class; ``3`` equals ``3.0``, ``True`` is not
    ``1``."""
    if depth > 20:
        return ("deep",)
    if value is None or type(value) is str:
        return ("str", value) if value is not None else ("null",)
    if isinstance(value, bool):
        return ("boolean", value)
    if type(value) in (int, float):
        return ("number", value)
    if isinstance(value, Mapping):
        return (
            "object",
            frozenset(
                (fingerprint(key, depth + 1), fingerprint(item, depth + 1))
                for key, item in value.items()
            ),
        )
    if isinstance(value, (list, tuple)):
        return ("array", tuple(fingerprint(item, depth + 1) for item in value))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(fingerprint(item, depth + 1) for item in value))
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    attributes = getattr(value, "__dict__", None)
    state = fingerprint(dict(attributes), depth + 1) if isinstance(attributes, dict) else None
    if isinstance(value, str):
        return ("str", str.__str__(value), state)
    return ("leaf", type_name(value), state)


def picture_text(picture: Any) -> str:
    """A `fingerprint` as text, in a JSON-like notation that shows what the picture holds:
    leaf types, bytes as bytes, what a str subclass or an object carries. Two different
    pictures read differently, so a report never shows "expected X, actual X" (issue 18)."""
    kind = picture[0]
    if kind == "null":
        return "null"
    if kind == "boolean":
        return "true" if picture[1] else "false"
    if kind == "number":
        return repr(picture[1])
    if kind == "str" and len(picture) == 2:
        return json.dumps(picture[1], ensure_ascii=False)
    if kind == "str":
        held = "nothing" if picture[2] is None else picture_text(picture[2])
        return f"{json.dumps(picture[1], ensure_ascii=False)} (a str subclass holding {held})"
    if kind == "object":
        items = sorted(f"{picture_text(k)}: {picture_text(v)}" for k, v in picture[1])
        return "{" + ", ".join(items) + "}"
    if kind == "array":
        return "[" + ", ".join(picture_text(item) for item in picture[1]) + "]"
    if kind == "set":
        return "set(" + ", ".join(sorted(picture_text(item) for item in picture[1])) + ")"
    if kind == "bytes":
        return f"bytes {picture[1]!r}"
    if kind == "leaf":
        state = "" if picture[2] is None else f" holding {picture_text(picture[2])}"
        return f"<a {picture[1]}{state}>"
    return "..."


def is_plain_json(value: Any) -> bool:
    """True for a structure made only of dicts, lists and JSON scalars (no mapping proxies,
    tuples or other containers)."""
    if isinstance(value, dict):
        return type(value) is dict and all(is_plain_json(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is list and all(is_plain_json(item) for item in value)
    return value is None or type(value) in (str, int, float, bool)
