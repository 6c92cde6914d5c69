"""Functional style: no class at all, a namespace of two closures satisfies the Protocol.

`execute` is a pipeline of steps, each returning an outcome to stop or None to go on; the
protocol is met structurally (runtime-checkable `ActionExecutor`), never by subclassing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType, SimpleNamespace

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts

Step = Callable[[Action], "ActionOutcome | None"]


def refuse_code(action: Action) -> ActionOutcome | None:
    return _parts.refused(_parts.CODE_REFUSED) if action.tool_call is None else None


def validate_with(registry: ToolRegistry) -> Step:
    def step(action: Action) -> ActionOutcome | None:
        assert action.tool_call is not None
        try:
            registry.validate(action.tool_call)
        except ToolValidationError as exc:
            return _parts.refused(str(exc))
        return None

    return step


def dispatch_with(registry: ToolRegistry) -> Callable[[Action], Awaitable[ActionOutcome]]:
    async def dispatch(action: Action) -> ActionOutcome:
        call = action.tool_call
        assert call is not None
        spec = registry.spec_for(call.name)
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

    return dispatch


def make_executor(registry: ToolRegistry) -> SimpleNamespace:
    steps = (refuse_code, validate_with(registry))
    dispatch = dispatch_with(registry)
    params = MappingProxyType({"tools": ",".join(registry.names())})

    async def execute(action: Action) -> ActionOutcome:
        for step in steps:
            early = step(action)
            if early is not None:
                return early
        return await dispatch(action)

    def parameters() -> Mapping[str, str]:
        return params

    return SimpleNamespace(execute=execute, parameters=parameters)
