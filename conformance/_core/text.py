"""Text helpers for reports and messages: never raising, whatever the target's objects do."""

from __future__ import annotations

import json
import re

__all__ = [
    "STR_FAILED",
    "clip",
    "describe_exception",
    "exception_text",
    "json_text",
    "safe_repr",
    "shorten",
    "slug",
]

STR_FAILED = "<exception str() failed>"
"""What stands for an exception's message when ``str(exc)`` itself raises (E12)."""


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or `STR_FAILED` when that raises."""
    try:
        return str(exc)
    except Exception:
        return STR_FAILED


def describe_exception(exc: BaseException) -> str:
    """``"ValueError: message"`` as an executor's E4 observation shows it, never raising."""
    return f"{type(exc).__name__}: {exception_text(exc)}"


def shorten(text: str, limit: int = 120) -> str:
    """`text` cut to at most `limit` characters, ending in ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip(text: str, limit: int) -> str:
    """`text` cut after `limit` characters, saying how long it was (for evidence in reports)."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def safe_repr(value: object) -> str:
    """``repr(value)``, or a placeholder naming the type when the repr raises."""
    try:
        return repr(value)
    except Exception:  # an executor's object with a broken __repr__
        return f"<{type(value).__name__} object with a failing repr>"


def json_text(value: object, *, sort_keys: bool = True) -> str:
    """`value` as compact JSON text (non-JSON leaves as their repr); its repr if even that fails."""
    try:
        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return safe_repr(value)


def slug(title: str, limit: int = 60) -> str:
    """``"Bad spec input raises"`` -> ``"bad_spec_input_raises"``, for generated test names."""
    words = re.sub(r"[^0-9a-zA-Z]+", "_", title.lower()).strip("_")
    return words[:limit].rstrip("_")
