"""The dispatch task runs under `asyncio.shield`; an outer cancellation is forwarded explicitly.

The task boxes its own BaseExceptions, so a handler's CancelledError (which shield would replace
with a fresh one) or KeyboardInterrupt reaches the caller as the very same object (E6).
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


class ShieldedExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def _dispatch(self, call: ToolCall) -> ActionOutcome | BaseException:
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
        except BaseException as exc:  # boxed: shield would not pass it on unchanged
            return exc
        if not isinstance(result, str):
            return _parts.not_str(call.name, result)
        return _parts.executed(result)

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        task = asyncio.ensure_future(self._dispatch(action.tool_call))
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if isinstance(result, BaseException):
            raise result
        return result


def make_executor(registry: ToolRegistry) -> ShieldedExecutor:
    return ShieldedExecutor(registry)
