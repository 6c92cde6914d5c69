"""Text helpers for reports and messages: never raising, whatever the target's objects do."""

from __future__ import annotations

import json
import re
import unicodedata

__all__ = [
    "STR_FAILED",
    "clip",
    "describe_exception",
    "escape_name",
    "exception_text",
    "has_time",
    "json_dumps",
    "json_text",
    "names_call",
    "safe_repr",
    "shorten",
    "slug",
    "type_name",
    "without_time",
]

STR_FAILED = "<exception str() failed>"
"""What stands for an exception's message when ``str(exc)`` itself raises (E12)."""


_TYPE_NAME = vars(type)["__name__"].__get__


def type_name(value: object) -> str:
    """The real name of `value`'s class, read past any metaclass whose ``__name__`` raises or
    lies (E4: the kit must not crash on an exception class it planted itself)."""
    name: str = _TYPE_NAME(type(value))
    return name


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or `STR_FAILED` when that raises — whatever it raises: a SystemExit from a
    ``__str__`` is the object's fault, not a request to stop (E12). A real Ctrl-C still goes
    through."""
    try:
        text = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:
        return STR_FAILED
    return text if type(text) is str else str.__str__(text)


def describe_exception(exc: BaseException) -> str:
    """``"ValueError: message"`` as an executor's E4 observation shows it, never raising."""
    return f"{type_name(exc)}: {exception_text(exc)}"


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
        return f"<{type_name(value)} object with a failing repr>"


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


_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Characters that reorder the text around them on a terminal (a name can hide what follows)."""

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
"""Control characters (newlines, ANSI escapes, DEL, C1), lone surrogates, line separators."""


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def escape_name(text: object) -> str:
    """A name (of a tool, a property, a file) from someone else's input, safe to print as text.

    Control characters (newlines, ANSI escapes), lone surrogates, line separators and
    bidirectional controls become ``\\xNN``/``\\uNNNN``, so a name can neither forge report
    lines, drive the terminal, nor make printing raise `UnicodeEncodeError`. Everything else is
    kept as it is (a JSON report keeps the name exactly). Never raises."""
    if not isinstance(text, str):
        text = safe_repr(text)
    return "".join(
        _escaped(char)
        if char in _BIDI_CONTROLS or unicodedata.category(char) in _UNSAFE_CATEGORIES
        else char
        for char in text
    )


def json_dumps(data: object, *, indent: int | None = None) -> str:
    """`data` as JSON text that any UTF-8 stream can take: non-ASCII as itself, unless the data
    holds a lone surrogate (legal in a Python str, not encodable as UTF-8), then all ``\\u``
    escapes, which every JSON reader decodes back to the very same strings."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, indent=indent)
    return text


_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]?\d{0,2}:?\d{0,2}:?\d{0,2}(?:\.\d+)?Z?"  # a date or date-time
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?\b"  # a clock time
    r"|\b\d+(?:\.\d+)?\s?(?:ms|msec|s|sec|secs|seconds?|milliseconds?|us|µs|ns|minutes?)\b",
    re.IGNORECASE,
)
"""A time of day, a date or a duration, as a synthetic observation must never hold (B5)."""


def has_time(text: str) -> bool:
    return bool(_TIME.search(text))


def without_time(text: str) -> str:
    """`text` with times and durations (and the brackets or words around them) taken out, so
    that the clauses that own a synthetic text's wording judge it apart from B5."""
    text = _TIME.sub("", text)
    text = re.sub(r"\s*[\(\[]\s*(?:after|at|took|in|elapsed)?\s*[\)\]]", "", text)
    text = re.sub(r"\s+(?:after|at|took|in|elapsed)\s*$", "", text)
    return text.strip().rstrip(",;:").strip()


def names_call(text: str, index: int) -> bool:
    """Whether `text` names call `index`: the number standing alone (not part of another number,
    a decimal or a time, which B5 owns). Batch stop sentences (B13, B15) and a resume's "not
    run" sentences (J5) name calls this way."""
    return re.search(rf"(?<![\d.]){index}(?!\d|\.\d)", without_time(text)) is not None
