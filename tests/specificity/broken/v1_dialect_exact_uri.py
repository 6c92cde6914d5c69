"""Knows draft-04..07 only by exact URIs ending in "#": ".../draft-07/schema" is taken as 2020-12.

Such a schema's `$ref` siblings then get checked although its dialect makes them inert (V1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V1"

_OLD = {f"http://json-schema.org/draft-0{n}/schema#" for n in (4, 6, 7)}


class DialectExactUri(Base):
    def ref_inert(self, schema: Mapping[str, Any]) -> bool:
        return schema.get("$schema") in _OLD


make_executor = DialectExactUri
