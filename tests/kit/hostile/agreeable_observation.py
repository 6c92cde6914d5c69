"""An executor whose wrong observation is a ``str`` subclass that agrees with everything
(issue 22 item 1): ``__eq__`` is always True, ``__ne__`` always False, ``__contains__`` always
True. The kit must judge the text itself (``str.__str__``), never these methods."""

from __future__ import annotations

from dataclasses import replace

from hostile._base import Wrapped
from polyloop import Action, ActionOutcome, ActionStatus


class Agreeable(str):
    """Text that claims to equal, and contain, anything."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __contains__(self, other: object) -> bool:
        return True


class AgreeableObservation(Wrapped):
    """polyloop's executor, except that every EXECUTED observation is the wrong text in an
    `Agreeable` wrapper."""

    async def execute(self, action: Action) -> ActionOutcome:
        outcome = await self._inner.execute(action)
        if outcome.status is not ActionStatus.EXECUTED:
            return outcome
        return replace(outcome, observation=Agreeable("not what the handler returned"))
