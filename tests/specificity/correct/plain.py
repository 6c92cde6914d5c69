"""A plain re-implementation with its own subset validator instead of `registry.validate`.

Nothing unusual in the control flow; what differs from the witness is who writes the
rejection messages (`_subset`), and that the copy treats any `Mapping` as an object.
"""

from __future__ import annotations

from collections.abc import Mapping

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry

from . import _parts, _subset


class PlainExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        rejection = _subset.check(self.registry, call.name, call.arguments)
        if rejection is not None:
            return _parts.refused(rejection)
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


def make_executor(registry: ToolRegistry) -> PlainExecutor:
    return PlainExecutor(registry)
