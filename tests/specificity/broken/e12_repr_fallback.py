"""Falls back to `repr(exc)` when `str(exc)` raises, since repr "always works".

The observation then reads "Cls: Cls(...)" instead of "Cls: <exception str() failed>" (E12).
"""

from __future__ import annotations

from ._base import Base

CLAUSE = "E12"


class ReprFallback(Base):
    def text_of(self, exc: BaseException) -> str:
        try:
            return str(exc)
        except Exception:
            return repr(exc)


make_executor = ReprFallback
