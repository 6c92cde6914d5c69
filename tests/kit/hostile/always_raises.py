"""An executor whose ``execute`` always raises (issue 22, item 6): a selection on which it
"passes" certifies nothing of substance, and the report must say so."""

from __future__ import annotations

from hostile._base import Wrapped
from polyloop import Action, ActionOutcome


class AlwaysRaises(Wrapped):
    async def execute(self, action: Action) -> ActionOutcome:
        raise RuntimeError("this executor never executes anything")
