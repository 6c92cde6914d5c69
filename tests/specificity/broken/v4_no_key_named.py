"""Rejects a call with missing required keys as "missing required arguments", naming none.

V4 wants the message to name the missing keys.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V4"


class NoKeyNamed(Base):
    def missing_text(self, missing: Sequence[str]) -> str:
        return "missing required arguments; see the tool's schema"


make_executor = NoKeyNamed
