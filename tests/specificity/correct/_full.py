"""Shared shape of the executors that add a full JSON Schema validator after the subset.

A full validator may reject more than the subset only where E14 allows it, and only when the
validator implements the dialect the schema declares; any error inside the validator itself
(an unsupported regex, a remote `$ref`, a value it cannot convert) means "no extra verdict",
never a rejection (V1). Rejection text names the path of keys, never a value (V8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry

from . import _parts, _subset

#: Returns the failing path (keys and indices), None when valid; raises when it cannot judge.
FullCheck = Callable[[object], "Sequence[object] | None"]


def path_text(path: Sequence[object]) -> str:
    shown = "/".join(_subset.short(str(p)) for p in list(path)[:8])
    return shown or "(the arguments themselves)"


class FullSchemaExecutor:
    """Subset validation, then a full validator where one applies, then the handler."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._checks: dict[str, FullCheck | None] = {}

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    def build(self, schema: Mapping[str, object]) -> FullCheck | None:
        raise NotImplementedError

    def _full_rejection(self, name: str, arguments: object) -> str | None:
        if name not in self._checks:
            spec = self.registry.spec_for(name)
            assert spec is not None
            try:
                self._checks[name] = self.build(_parts.plain(spec.parameters))
            except Exception:
                self._checks[name] = None
        check = self._checks[name]
        if check is None:
            return None
        try:
            path = check(_parts.plain(arguments))
        except Exception:
            return None
        if path is None:
            return None
        return _subset.message(name, [f"the value at {path_text(path)} breaks the tool's schema"])

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        rejection = _subset.check(self.registry, call.name, call.arguments)
        if rejection is None:
            rejection = self._full_rejection(call.name, call.arguments)
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
