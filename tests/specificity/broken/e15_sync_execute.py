"""`execute` is a plain method returning the inner coroutine, a thin delegation that looks async.

Awaiting it works, but E15 requires execute itself to be a coroutine function.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from polyloop import Action, ActionOutcome

from ._base import Base

CLAUSE = "E15"


class SyncExecute(Base):
    def execute(self, action: Action) -> Coroutine[Any, Any, ActionOutcome]:  # type: ignore[override]
        return super().execute(action)


make_executor = SyncExecute
