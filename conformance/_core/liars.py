"""Objects that lie about themselves, for the opt-in level ``hardened`` only (issue 18).

No JSON-decoded call or real handler produces them, so certification at ``core``/``strict``
never uses them (CONTRACT.md section 5, "What certification judges"); polyloop's own executor
survives them, which is what ``hardened`` measures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = [
    "CLAIMS_STR",
    "HOSTILE_ERROR_KINDS",
    "HOSTILE_NON_STR_KINDS",
    "HOSTILE_STR_RAISES_KINDS",
    "NamelessError",
]


class _PrintAbort(BaseException):
    """A BaseException that is neither an Exception nor SystemExit/GeneratorExit, raised by an
    exception's ``__str__`` (E12)."""


HOSTILE_STR_RAISES_KINDS: Mapping[str, Callable[[], BaseException]] = {
    "SystemExit": lambda: SystemExit(3),
    "GeneratorExit": GeneratorExit,
    "BaseException": lambda: _PrintAbort("this exception cannot be printed"),
}
"""Level ``hardened`` only: a ``__str__`` raising a BaseException (polyloop still gives an
outcome; ``except Exception`` around ``str(exc)`` conforms at ``strict``)."""


class _NamelessMeta(type):
    """A metaclass whose ``__name__`` raises, so ``type(exc).__name__`` raises (E4)."""

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("this exception class hides its __name__")


class NamelessError(Exception, metaclass=_NamelessMeta):
    """An ordinary exception whose class's ``__name__`` raises: E4 still wants its real name,
    ``NamelessError`` (read as ``vars(type)["__name__"]`` does), not a crash."""


HOSTILE_ERROR_KINDS: Mapping[str, Callable[[str], Exception]] = {
    "NamelessError (its metaclass hides __name__)": NamelessError,
}
"""Level ``hardened`` only: exception classes that lie about themselves (E4)."""


class _ClaimsStr:
    """A non-str whose ``__class__`` property claims ``str``: ``isinstance(result, str)`` is
    True, so an executor that trusts it fails later, in a TypeError that names no tool (E9)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str

    def __repr__(self) -> str:
        return "<an object whose __class__ claims str>"


CLAIMS_STR = _ClaimsStr()
"""The one lying result every ``ReturnNonStr("claims str")`` returns (it holds no state)."""

HOSTILE_NON_STR_KINDS: Mapping[str, Callable[[], object]] = {"claims str": lambda: CLAIMS_STR}
"""Level ``hardened`` only: a non-str whose ``__class__`` claims ``str`` (E9)."""
