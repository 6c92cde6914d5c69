"""JSON-data checks and deep freeze/thaw, shared by `tools` and `ports`.

Values that cross into a spec or a recorded call are frozen (read-only mappings, tuples) so that
nobody can change them afterwards; handlers and the model get fresh plain copies (`thaw`).
Every walk here is bounded in depth, so hostile input ends in a `ValueError` naming the JSON
path instead of a `RecursionError` from deep inside.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting accepted in a tool's `parameters` (contract S4)."""

MAX_ARGUMENT_DEPTH = 256
"""Deepest nesting accepted in a call's arguments; deeper input is refused, not crashed on."""

_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def shorten(text: str, limit: int = 80) -> str:
    """Cut `text` to at most `limit` characters, marking the cut, so messages stay bounded."""
    if len(text) <= limit:
        return text
    keep = max(limit - 15, 1)
    return f"{text[:keep]}…(+{len(text) - keep} chars)"


def _path_key(path: str, key: object) -> str:
    return f"{path}[{shorten(repr(key), 60)}]"


def freeze_json(value: object, path: str) -> Any:
    """Check that `value` is JSON data and return a deep-frozen copy of it.

    JSON data: mappings with `str` keys, lists/tuples, `str`, `int`, finite `float`, `bool`,
    `None`. Anything else, a reference cycle, or nesting deeper than `MAX_DEPTH` raises
    `TypeError`/`ValueError` naming the JSON path (`path` is its root, e.g. ``parameters``).
    """
    return _freeze_json(value, path, 0, set())


def _freeze_json(value: object, path: str, depth: int, active: set[int]) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} is {value!r}; JSON has no NaN or infinity")
        return value
    if isinstance(value, Mapping):
        container = True
    elif isinstance(value, (list, tuple)):
        container = False
    else:
        raise TypeError(
            f"{path} is a {type(value).__name__}, which is not JSON data "
            "(use dicts with str keys, lists, str, int, float, bool or None)"
        )
    if id(value) in active:
        raise ValueError(f"{path} refers back to one of its own containers (a reference cycle)")
    if depth >= MAX_DEPTH:
        raise ValueError(f"{path} is nested deeper than {MAX_DEPTH} levels")
    active.add(id(value))
    try:
        if container:
            assert isinstance(value, Mapping)
            frozen: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise TypeError(
                        f"{_path_key(path, key)} has a {type(key).__name__} key; "
                        "JSON object keys must be str"
                    )
                frozen[key] = _freeze_json(item, _path_key(path, key), depth + 1, active)
            return MappingProxyType(frozen)
        assert isinstance(value, (list, tuple))
        return tuple(
            _freeze_json(item, f"{path}[{index}]", depth + 1, active)
            for index, item in enumerate(value)
        )
    finally:
        active.discard(id(value))


def freeze_arguments(value: object) -> Any:
    """Deep-freeze whatever the model sent as arguments, keeping non-container leaves as they are.

    Unlike `freeze_json` this accepts any leaf: arguments are recorded as received, and judging
    them is `validate`'s job. Non-JSON leaves are recorded as private copies (a set as a
    frozenset, a bytearray as bytes, anything else deep-copied where possible), so the sender
    cannot change the record later. Only cycles and absurd nesting are refused.
    """
    return _freeze_any(value, "arguments", 0, set())


def _copy_leaf(value: object) -> Any:
    """A private copy of a non-JSON leaf, so neither its sender nor a handler can change it."""
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    if isinstance(value, bytearray):
        return bytes(value)
    try:
        return copy.deepcopy(value)
    except Exception:
        return value  # uncopyable objects are kept as sent; nothing better is possible


def _freeze_any(value: object, path: str, depth: int, active: set[int]) -> Any:
    if isinstance(value, _SCALARS):
        return value
    is_mapping = isinstance(value, Mapping)
    if not is_mapping and not isinstance(value, (list, tuple)):
        return _copy_leaf(value)
    if id(value) in active:
        raise ValueError(f"{path} refers back to one of its own containers (a reference cycle)")
    if depth >= MAX_ARGUMENT_DEPTH:
        raise ValueError(f"{path} is nested deeper than {MAX_ARGUMENT_DEPTH} levels")
    active.add(id(value))
    try:
        if is_mapping:
            assert isinstance(value, Mapping)
            return MappingProxyType(
                {
                    key: _freeze_any(item, _path_key(path, key), depth + 1, active)
                    for key, item in value.items()
                }
            )
        assert isinstance(value, (list, tuple))
        return tuple(
            _freeze_any(item, f"{path}[{index}]", depth + 1, active)
            for index, item in enumerate(value)
        )
    finally:
        active.discard(id(value))


def thaw(value: Any) -> Any:
    """Return a fresh plain copy (dicts and lists) of a value made by the freeze functions."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    if isinstance(value, frozenset):
        return set(value)
    return _copy_leaf(value)


def thaw_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`thaw` for the top-level argument mapping, with a fast path for flat calls.

    This runs on every dispatched call (E13), so the common case of scalar-only arguments
    avoids the recursive walk.
    """
    # MappingProxyType.copy() copies the dict underneath, several times faster than dict(proxy).
    result = arguments.copy() if type(arguments) is MappingProxyType else dict(arguments)
    for key, item in result.items():
        if type(item) not in _SCALAR_TYPES and not isinstance(item, _SCALARS):
            result[key] = thaw(item)
    return result
