"""When `str(exc)` raises, the whole observation becomes the fallback, dropping the class name.

E12 wants "<ClassName>: <exception str() failed>", the class name kept.
"""

from __future__ import annotations

from ._base import STR_FAILED, Base

CLAUSE = "E12"


class FallbackWithoutClass(Base):
    def describe(self, exc: BaseException) -> str:
        try:
            return f"{type(exc).__name__}: {exc}"
        except Exception:
            return STR_FAILED


make_executor = FallbackWithoutClass
