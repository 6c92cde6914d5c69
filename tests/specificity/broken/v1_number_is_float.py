"""Maps "number" to Python `float`, so a JSON integer like `3` is refused for a number property.

Every integer is a number in JSON Schema: a false rejection (V1).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V1"


class NumberIsFloat(Base):
    def type_ok(self, value: object, wanted: Sequence[str]) -> bool:
        if list(wanted) == ["number"]:
            return isinstance(value, float)
        return super().type_ok(value, wanted)


make_executor = NumberIsFloat
