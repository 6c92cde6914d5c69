"""Each call's dispatch runs in its own `asyncio.Task`, which `execute` awaits.

Awaiting the task forwards an outer cancellation to it; the task returns its BaseExceptions as
values, because before 3.11 a task re-creates a CancelledError raised inside it (E6).
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
        result = await asyncio.create_task(self._boxed(action.tool_call))
        if isinstance(result, BaseException):
            raise result
        return result

    async def _boxed(self, call: ToolCall) -> ActionOutcome | BaseException:
        try:
            return await self._dispatch(call)
        except BaseException as exc:  # re-raised by execute, as the same object
            return exc


def make_executor(registry: ToolRegistry) -> TaskPerCallExecutor:
    return TaskPerCallExecutor(registry)
