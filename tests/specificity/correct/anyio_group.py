"""Dispatch runs as a child of an `anyio` task group.

The group would wrap an escaping CancelledError or E9 TypeError in an exception group, so the
child boxes its result or exception and `execute` re-raises the same object afterwards (E6).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio

from polyloop import (
    Action,
    ActionOutcome,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

from . import _parts


class AnyioGroupExecutor:
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
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        box: list[ActionOutcome | BaseException] = []

        async def child() -> None:
            try:
                box.append(await self._dispatch(call))
            except BaseException as exc:  # re-raised below, unchanged
                box.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(child)
        (result,) = box
        if isinstance(result, BaseException):
            raise result
        return result


def make_executor(registry: ToolRegistry) -> AnyioGroupExecutor:
    return AnyioGroupExecutor(registry)
