"""The handler call catches BaseException "so a tool can never take the loop down".

That turns CancelledError, KeyboardInterrupt and SystemExit into EXECUTED observations.
"""

from __future__ import annotations

from polyloop import ActionOutcome, ActionStatus, ToolCall, ToolEnvironmentError, ToolSpec

from ._base import Base

CLAUSE = "E6"


class CatchBaseException(Base):
    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        assert spec.handler is not None
        try:
            result = await spec.handler(self.arguments(call))
        except ToolEnvironmentError as exc:
            return self.outcome(ActionStatus.ENV_ERROR, self.text_of(exc), False)
        except BaseException as exc:
            return self.outcome(ActionStatus.EXECUTED, self.describe(exc), False)
        return self.finish(call, result)


make_executor = CatchBaseException
