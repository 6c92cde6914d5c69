"""Rejects keys outside a closed schema as "unexpected arguments", naming none of them.

V5 wants the message to name the keys.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V5"


class NoKeyNamed(Base):
    def extra_text(self, extra: Sequence[str]) -> str:
        return "unexpected arguments; the schema allows no additional properties"


make_executor = NoKeyNamed
