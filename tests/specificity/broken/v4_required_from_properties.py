"""Finds missing keys by walking `properties` and checking which are required.

A required key that `properties` does not list is never reported, so that call is accepted (V4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V4"


class RequiredFromProperties(Base):
    def missing_keys(self, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
        required = schema.get("required")
        props = schema.get("properties")
        if not isinstance(required, (list, tuple)) or not isinstance(props, Mapping):
            return []
        return [k for k in props if k in required and k not in arguments]


make_executor = RequiredFromProperties
