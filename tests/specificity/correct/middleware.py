"""Middleware style: small executors that each handle one concern and delegate the rest.

`RefuseCode` answers code actions, `Validate` answers rejected calls, `Dispatch` runs handlers;
each wraps the next and reports the innermost executor's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping

from polyloop import (
    Action,
    ActionExecutor,
    ActionOutcome,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

from . import _parts


class Dispatch:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        assert call is not None
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


class Middleware:
    def __init__(self, inner: ActionExecutor) -> None:
        self.inner = inner

    def parameters(self) -> Mapping[str, str]:
        return self.inner.parameters()

    async def execute(self, action: Action) -> ActionOutcome:
        return await self.inner.execute(action)


class Validate(Middleware):
    def __init__(self, inner: ActionExecutor, registry: ToolRegistry) -> None:
        super().__init__(inner)
        self.registry = registry

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is not None:
            try:
                self.registry.validate(action.tool_call)
            except ToolValidationError as exc:
                return _parts.refused(str(exc))
        return await self.inner.execute(action)


class RefuseCode(Middleware):
    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        return await self.inner.execute(action)


def make_executor(registry: ToolRegistry) -> ActionExecutor:
    return RefuseCode(Validate(Dispatch(registry), registry))
