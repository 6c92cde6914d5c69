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
from enum import Enum
from types import MappingProxyType
from typing import Any, cast

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


def safe_repr(value: object, limit: int = 80) -> str:
    """`repr(value)` shortened, or a placeholder when even that raises: messages never crash."""
    try:
        text = repr(value)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = None
    if type(text) is not str:
        return f"<{type_label(value)} object; repr() failed>"
    return shorten(text, limit)


_TYPE_NAME = vars(type)["__name__"].__get__


def type_label(value: object) -> str:
    """The name of `value`'s class for a message, read so that no metaclass can make it raise."""
    return shorten(_TYPE_NAME(type(value)), 60)


def _path_key(path: str, key: object) -> str:
    return f"{path}[{safe_repr(key, 60)}]"


_SAFE_INT_BITS = 2000
"""Integers up to this size have at most 603 digits, below the smallest limit Python allows for
integer-to-string conversion (640), so only larger ones need the exact check."""


def _check_writable_int(value: int, path: str) -> None:
    """Refuse an integer `json.dumps` cannot write (R5: `json.dumps` of the schema always works)."""
    try:
        int.__repr__(value)
    except ValueError:
        raise ValueError(
            f"{path} is an integer of about {int(int.bit_length(value) * 0.30103)} digits, "
            "more than json can write (Python's limit for integer-to-string conversion, "
            "sys.get_int_max_str_digits()); write it as a string or a float"
        ) from None


def freeze_json(value: object, path: str) -> Any:
    """Check that `value` is JSON data and return a deep-frozen copy of it.

    JSON data: mappings with `str` keys, lists/tuples, `str`, `int`, finite `float`, `bool`,
    `None`. Anything else, a reference cycle, or nesting deeper than `MAX_DEPTH` raises
    `TypeError`/`ValueError` naming the JSON path (`path` is its root, e.g. ``parameters``).
    """
    return _freeze_json(value, path, 0, set())


def _freeze_json(value: object, path: str, depth: int, active: set[int]) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        # `int.bit_length`, not the value's own: a subclass may lie and slip past the check.
        if int.bit_length(value) > _SAFE_INT_BITS:
            _check_writable_int(value, path)
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
    them is `validate`'s job. E13 promises that nothing a handler does reaches the record or a
    later call, so every leaf that is not an exact `str`/`int`/`float`/`bool`/`None` — a set, a
    bytearray, a `str` or `int` subclass (it can carry attributes), any other object, and any
    non-`str` mapping key — is recorded as a private deep copy, and each handler gets a fresh
    deep copy of that (`thaw`). A leaf of which no private copy can be made (`copy.deepcopy`
    fails, or hands back the very same mutable object, as it does for one holding a lock or for
    a function) is refused here with a `TypeError` naming its path: keeping the shared object
    would silently break E13, and refusing at construction tells the sender at once. Cycles and
    absurd nesting are refused too.
    """
    return _freeze_any(value, "arguments", 0, set())


_ATOMIC_IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes, complex, range})
"""Exact types whose instances `deepcopy` may hand back unchanged because nothing can mutate
them."""


def _deeply_immutable(value: object, depth: int = 0) -> bool:
    """Whether nothing reachable from `value` can be mutated, so sharing it is as good as a copy
    (an exact tuple or frozenset of immutable leaves, e.g. a tuple used as a mapping key)."""
    kind = type(value)
    if kind in _ATOMIC_IMMUTABLE or issubclass(kind, Enum):
        return True
    if (kind is tuple or kind is frozenset) and depth < MAX_ARGUMENT_DEPTH:
        return all(_deeply_immutable(item, depth + 1) for item in cast("tuple[Any, ...]", value))
    return False


def _copy_leaf(value: object, path: str) -> Any:
    """A private copy of a non-JSON leaf, so neither its sender nor a handler can change it.

    Raises `TypeError` naming `path` when no private copy can be made (see `freeze_arguments`).
    """
    try:
        value.__class__  # noqa: B018  # an object whose __class__ raises is no data to keep
    except Exception as exc:
        raise TypeError(
            f"{path} is a {type_label(value)} whose __class__ raised {type_label(exc)}; "
            "send JSON data (dicts, lists, str, int, float, bool, None) instead"
        ) from None
    try:
        kind = type(value)
        if issubclass(kind, (set, frozenset)):
            copied: Any = frozenset(copy.deepcopy(list(cast("frozenset[Any]", value))))
        elif issubclass(kind, bytearray):
            copied = bytes(cast(bytearray, value))
        else:
            copied = copy.deepcopy(value)
    except Exception as exc:
        raise TypeError(
            f"{path} is a {type_label(value)} of which no private copy can be made "
            f"(copy.deepcopy raised {type_label(exc)}); a recorded call must own its arguments "
            "(E13), so send JSON data (dicts, lists, str, int, float, bool, None) instead"
        ) from None
    if copied is value and not _deeply_immutable(value):
        # Enum members are singletons by design: the member itself is the value; an immutable
        # tuple (a common mapping key) is its own best copy.
        raise TypeError(
            f"{path} is a {type_label(value)} that copy.deepcopy cannot copy (it returns the same "
            "object); a recorded call must own its arguments (E13), so send JSON data instead"
        )
    return copied


def _copy_key(key: object, path: str) -> Any:
    return key if type(key) is str else _copy_leaf(key, f"{path} (a key)")


def _freeze_any(value: object, path: str, depth: int, active: set[int]) -> Any:
    if type(value) in _SCALAR_TYPES:
        return value
    # Judged by the real type, never `isinstance`: that consults `__class__`, which an object
    # may make raise (or lie); the leaf is then judged, and refused, by `_copy_leaf`.
    kind = type(value)
    is_mapping = issubclass(kind, Mapping)
    if not is_mapping and not issubclass(kind, (list, tuple)):
        return _copy_leaf(value, path)
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
                    _copy_key(key, _path_key(path, key)): _freeze_any(
                        item, _path_key(path, key), depth + 1, active
                    )
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
    """Return a fresh plain copy (dicts and lists) of a value made by the freeze functions.

    Leaves other than exact JSON scalars are deep-copied again, so each caller owns its own.
    """
    if type(value) in _SCALAR_TYPES:
        return value
    if type(value) is MappingProxyType:
        return {
            key if type(key) is str else copy.deepcopy(key): thaw(item)
            for key, item in value.items()
        }
    if type(value) is tuple:
        return [thaw(item) for item in value]
    if type(value) is frozenset:
        return set(copy.deepcopy(list(value)))
    return copy.deepcopy(value)


def thaw_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`thaw` for the top-level argument mapping, with a fast path for flat calls.

    This runs on every dispatched call (E13), so the common case of scalar-only arguments
    avoids the recursive walk.
    """
    # MappingProxyType.copy() copies the dict underneath, several times faster than dict(proxy).
    result = arguments.copy() if type(arguments) is MappingProxyType else dict(arguments)
    for key, item in result.items():
        if type(item) not in _SCALAR_TYPES or type(key) is not str:
            thawed: dict[str, Any] = thaw(arguments)
            return thawed
    return result
