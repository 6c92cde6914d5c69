"""Validation runs in a worker thread (`asyncio.to_thread`) so a huge schema never blocks the loop.

`registry.validate` is pure, so running it off the loop is safe; its ToolValidationError crosses
the thread boundary as the same object, and a cancellation while it runs propagates at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts


class ThreadValidationExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        try:
            await asyncio.to_thread(self.registry.validate, call)
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


def make_executor(registry: ToolRegistry) -> ThreadValidationExecutor:
    return ThreadValidationExecutor(registry)
