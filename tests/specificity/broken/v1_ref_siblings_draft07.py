"""Applies the 2020-12 rule that `$ref` siblings count to every schema, whatever `$schema` says.

Up to draft-07 a `$ref` makes its siblings inert, so checking them falsely rejects (V1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "V1"


class RefSiblingsDraft07(Base):
    def ref_inert(self, schema: Mapping[str, Any]) -> bool:
        return False


make_executor = RefSiblingsDraft07
