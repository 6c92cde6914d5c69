"""Each call's dispatch runs in its own `asyncio.Task`, which `execute` awaits.

Awaiting the task directly means an outer cancellation is forwarded to it and its own outcome or
exception (a handler's CancelledError included) comes back unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from polyloop import (
    Action,
    ActionOutcome,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

from . import _parts


class TaskPerCallExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def _dispatch(self, call: ToolCall) -> ActionOutcome:
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _parts.refused(str(exc))
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        try:
            result = await spec.handler(_parts.plain(call.arguments))
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        return await asyncio.create_task(self._dispatch(action.tool_call))


def make_executor(registry: ToolRegistry) -> TaskPerCallExecutor:
    return TaskPerCallExecutor(registry)
