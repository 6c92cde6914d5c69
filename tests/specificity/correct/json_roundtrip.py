"""The handler gets `json.loads(json.dumps(arguments))`: a copy exactly as a wire would carry it.

JSON-decoded arguments survive the round trip unchanged (floats print exactly), and it yields
fresh plain dicts and lists, so no mutation can reach the recorded call (E13).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts


def _mapping_as_dict(value: object) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def wire_copy(arguments: Any) -> Any:
    return json.loads(json.dumps(arguments, default=_mapping_as_dict))


class JsonRoundTripExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

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
        arguments = wire_copy(call.arguments)
        try:
            result = await spec.handler(arguments)
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> JsonRoundTripExecutor:
    return JsonRoundTripExecutor(registry)
