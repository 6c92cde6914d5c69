"""The call being served lives in a `contextvars.ContextVar`, not on the executor.

Each call sets the variable and resets it with its token when done; every asyncio task has its
own context copy, so concurrent calls each read their own value (E11).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

from polyloop import (
    Action,
    ActionOutcome,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

from . import _parts

current_call: ContextVar[ToolCall] = ContextVar("current_call")


class ContextExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        token = current_call.set(action.tool_call)
        try:
            return await self._serve()
        finally:
            current_call.reset(token)

    async def _serve(self) -> ActionOutcome:
        call = current_call.get()
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _parts.refused(str(exc))
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        try:
            result = await spec.handler(_parts.plain(current_call.get().arguments))
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(current_call.get().name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> ContextExecutor:
    return ContextExecutor(registry)
