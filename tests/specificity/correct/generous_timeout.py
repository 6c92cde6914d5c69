"""Every handler runs under `asyncio.wait_for` with a generous timeout (10 minutes).

Both a handler's own TimeoutError and the deadline's are ordinary exceptions (E4/E10); on 3.11 a
cancellation wait_for swallowed as the handler finished is re-raised via `Task.cancelling()` (E6).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts

TIMEOUT_SECONDS = 600.0


class GenerousTimeoutExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names()), "timeout_seconds": str(TIMEOUT_SECONDS)}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _parts.refused(str(exc))
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        task = asyncio.current_task()
        try:
            result = await asyncio.wait_for(
                spec.handler(_parts.plain(call.arguments)), TIMEOUT_SECONDS
            )
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if sys.version_info[:2] == (3, 11) and task is not None and task.cancelling():
            raise asyncio.CancelledError()
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> GenerousTimeoutExecutor:
    return GenerousTimeoutExecutor(registry)
