"""A frozen dataclass with `__slots__`: the executor is a value, its parameters fixed at birth.

The tool list is joined once in `__post_init__`; `parameters()` hands out a fresh dict each time
so a caller mutating it cannot change the next answer (E15).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts


@dataclass(frozen=True, slots=True)
class SlottedExecutor:
    registry: ToolRegistry
    _tools: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tools", ",".join(self.registry.names()))

    def parameters(self) -> Mapping[str, str]:
        return {"tools": self._tools}

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
        try:
            result = await spec.handler(_parts.plain(call.arguments))
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> SlottedExecutor:
    return SlottedExecutor(registry)
