"""Names at most five missing keys and counts the rest, to keep the message short.

For more than ten missing keys V4 asks for at least ten names (V8's limit leaves room).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V4"


class FiveNames(Base):
    def missing_text(self, missing: Sequence[str]) -> str:
        shown = ", ".join(f"'{k}'" for k in missing[:5])
        rest = len(missing) - 5
        return f"missing required keys: {shown}" + (f" and {rest} more" if rest > 0 else "")


make_executor = FiveNames
