"""All calls go through a one-slot `asyncio.Semaphore`, so handlers never overlap.

Serialising is a legitimate way to be re-entrant (E11): concurrent calls then give exactly the
sequential outcomes. Semaphores bind to an event loop, so there is one per running loop.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts


class OneSlotExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

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
        slot = self._slots.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(1))
        async with slot:
            try:
                result = await spec.handler(_parts.plain(call.arguments))
            except ToolEnvironmentError as exc:
                return _parts.env_error(_parts.text_of(exc))
            except Exception as exc:
                return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> OneSlotExecutor:
    return OneSlotExecutor(registry)
