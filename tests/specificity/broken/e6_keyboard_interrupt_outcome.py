"""A Ctrl-C while a tool runs becomes an observation, so the model "can react to the interrupt".

KeyboardInterrupt must propagate (E6); cancellation still does.
"""

from __future__ import annotations

from polyloop import ActionOutcome, ActionStatus, ToolCall, ToolSpec

from ._base import Base

CLAUSE = "E6"


class KeyboardInterruptOutcome(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        try:
            return await super().call_handler(spec, call)
        except KeyboardInterrupt as exc:
            return self.outcome(ActionStatus.EXECUTED, self.describe(exc), False)


make_executor = KeyboardInterruptOutcome
