"""Reading version strings for M3's "breaking step": the major version, or the minor while the
major is 0 (semantic versioning's 0.x rule).

Only the leading release numbers count (``"2.0.1rc1"`` -> 2, 0, 1; ``"v3"`` -> 3). They are
compared as digit strings, never converted to ``int``: a version of thousands of digits would
otherwise hit Python's integer-string limit and crash the guard.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Step", "release", "step"]

Step = Literal["breaking", "compatible", "same", "backwards", "unknown"]

_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def release(version: str | None) -> tuple[str, ...] | None:
    """The leading release numbers as digit strings without leading zeros, or None."""
    if version is None:
        return None
    match = _RELEASE.match(version)
    if match is None:
        return None
    return tuple(part.lstrip("0") or "0" for part in match.group(1).split("."))


def _key(numbers: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    # A longer digit string without leading zeros is a bigger number; equal lengths compare
    # as text.
    return tuple((len(n), n) for n in numbers)


def _pad(numbers: tuple[str, ...], width: int) -> tuple[str, ...]:
    return numbers + ("0",) * (width - len(numbers))


def step(recorded: str | None, current: str | None) -> Step:
    """How the version moved from the baseline's to the package's.

    ``breaking``: the major rose, or the minor rose while the major is 0 (0.3 -> 0.4);
    ``backwards``: the package is older than the baseline (stale metadata of an editable
    install, or a checkout of an older commit); ``unknown``: either is missing or unreadable.
    """
    old, new = release(recorded), release(current)
    if old is None or new is None:
        return "unknown"
    width = max(len(old), len(new), 2)
    old, new = _pad(old, width), _pad(new, width)
    if _key(new) == _key(old):
        return "same"
    if _key(new) < _key(old):
        return "backwards"
    if _key(new[:1]) > _key(old[:1]):
        return "breaking"
    if new[0] == "0" and _key(new[1:2]) > _key(old[1:2]):
        return "breaking"
    return "compatible"
