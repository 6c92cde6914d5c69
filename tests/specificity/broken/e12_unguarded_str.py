"""Formats a handler's exception with a bare f-string, never expecting `str(exc)` to raise.

When it does, that error escapes execute instead of an outcome (E12).
"""

from __future__ import annotations

from ._base import Base

CLAUSE = "E12"


class UnguardedStr(Base):
    def describe(self, exc: BaseException) -> str:
        return f"{type(exc).__name__}: {exc}"


make_executor = UnguardedStr
