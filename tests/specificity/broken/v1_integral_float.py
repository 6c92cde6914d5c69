"""Checks "integer" with `isinstance(value, int)`, so a JSON `3.0` is refused as not an integer.

From draft-06 on an integral float is an integer: a false rejection (V1).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._base import Base

CLAUSE = "V1"


class IntegralFloat(Base):
    def type_ok(self, value: object, wanted: Sequence[str]) -> bool:
        if "integer" in wanted and "number" not in wanted and isinstance(value, float):
            return False
        return super().type_ok(value, wanted)


make_executor = IntegralFloat
