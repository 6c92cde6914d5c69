"""Treats a schema as closed only when it also lists some `properties`.

With `additionalProperties: false` and no properties every key is extra, yet it is accepted (V5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V5"


class NeedsProperties(Base):
    def closed(self, schema: Mapping[str, Any]) -> bool:
        return bool(schema.get("properties")) and super().closed(schema)


make_executor = NeedsProperties
