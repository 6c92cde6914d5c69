"""Honours patternProperties under additionalProperties false, but matches keys with `re.fullmatch`.

JSON Schema patterns are unanchored (search), so a key the pattern finds is falsely rejected (V1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V1"


class PatternFullmatch(Base):
    def closed(self, schema: Mapping[str, Any]) -> bool:
        return schema.get("additionalProperties") is False

    def extra_keys(
        self, schema: Mapping[str, Any], props: Mapping[str, Any], arguments: Mapping[str, Any]
    ) -> list[str]:
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, Mapping) else {}
        extra = []
        for key in arguments:
            if key in props:
                continue
            try:
                if any(re.fullmatch(p, key) for p in patterns):
                    continue
            except re.error:
                continue
            extra.append(key)
        return extra


make_executor = PatternFullmatch
