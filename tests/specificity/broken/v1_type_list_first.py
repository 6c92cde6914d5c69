"""For a list of types such as ["string", "null"] only the first one is checked.

A list means any of them, so `null` there is falsely rejected (V1).
"""

from __future__ import annotations

from ._base import Base

CLAUSE = "V1"


class TypeListFirst(Base):
    def declared(self, prop: object) -> list[str] | None:
        wanted = super().declared(prop)
        return wanted[:1] if wanted else wanted


make_executor = TypeListFirst
