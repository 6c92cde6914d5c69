"""Stops at the first missing required key and names only that one.

V4 wants the message to name the missing keys (at least ten of more than ten).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V4"


class FirstMissingOnly(Base):
    def missing_text(self, missing: Sequence[str]) -> str:
        return f"missing required key '{missing[0]}'"


make_executor = FirstMissingOnly
