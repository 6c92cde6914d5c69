"""parameters() reports the tool names as a tuple, "more structured than a joined string".

E15 wants a mapping of str to str.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Base

CLAUSE = "E15"


class ParametersTuple(Base):
    def parameters(self) -> Mapping[str, Any]:
        return {"tools": tuple(self.registry.names())}


make_executor = ParametersTuple
