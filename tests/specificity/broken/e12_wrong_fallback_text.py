"""Falls back to "<unprintable exception>" when `str(exc)` raises, not the contract's wording.

E12 fixes the text: "<ClassName>: <exception str() failed>".
"""

from __future__ import annotations

from ._base import Base

CLAUSE = "E12"


class WrongFallbackText(Base):
    def text_of(self, exc: BaseException) -> str:
        try:
            return str(exc)
        except Exception:
            return "<unprintable exception>"


make_executor = WrongFallbackText
