"""Keeps an audit log: every call and what came of it, in the order the calls finished.

Entries are appended (never updated in place), so concurrent calls cannot mix up each other's
records; an exception that leaves `execute` is logged by class name and re-raised untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts


@dataclass(frozen=True)
class AuditEntry:
    action: Action
    outcome: ActionOutcome | None
    raised: str | None


class AuditedExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.log: list[AuditEntry] = []

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        try:
            outcome = await self._execute(action)
        except BaseException as exc:
            self.log.append(AuditEntry(action, None, type(exc).__name__))
            raise
        self.log.append(AuditEntry(action, outcome, None))
        return outcome

    async def _execute(self, action: Action) -> ActionOutcome:
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


def make_executor(registry: ToolRegistry) -> AuditedExecutor:
    return AuditedExecutor(registry)
