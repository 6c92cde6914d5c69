"""Names only the first key outside a closed schema.

V5 wants the message to name the keys (at least ten of more than ten).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V5"


class FirstExtraOnly(Base):
    def extra_text(self, extra: Sequence[str]) -> str:
        return f"unexpected key '{extra[0]}'"


make_executor = FirstExtraOnly
