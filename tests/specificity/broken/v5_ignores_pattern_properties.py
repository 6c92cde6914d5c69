"""Checks `additionalProperties: false` against `properties` alone, ignoring patternProperties.

V5's check must be skipped when patternProperties is present; keys it covers are rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V5"


class IgnoresPatternProperties(Base):
    def closed(self, schema: Mapping[str, Any]) -> bool:
        return schema.get("additionalProperties") is False


make_executor = IgnoresPatternProperties
