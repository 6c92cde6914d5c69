"""A correct executor split into small overridable steps; each broken module replaces one.

Keeping the rest of the behaviour shared means a broken module differs from a conforming one
in exactly the line its docstring names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

from ..correct import _subset

STR_FAILED = "<exception str() failed>"


class Base:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    # -- validation -------------------------------------------------------------------------

    def ref_inert(self, schema: Mapping[str, Any]) -> bool:
        return _subset.ref_is_inert(schema)

    def declared(self, prop: object) -> list[str] | None:
        return _subset.declared_types(prop)

    def type_ok(self, value: object, wanted: Sequence[str]) -> bool:
        kinds = _subset.json_types(value)
        return not kinds or bool(kinds.intersection(wanted))

    def closed(self, schema: Mapping[str, Any]) -> bool:
        return schema.get("additionalProperties") is False and "patternProperties" not in schema

    def missing_keys(self, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
        required = schema.get("required")
        if not isinstance(required, (list, tuple)):
            return []
        return [k for k in required if isinstance(k, str) and k not in arguments]

    def extra_keys(
        self, schema: Mapping[str, Any], props: Mapping[str, Any], arguments: Mapping[str, Any]
    ) -> list[str]:
        return [k for k in arguments if k not in props]

    def missing_text(self, missing: Sequence[str]) -> str:
        return f"missing required keys: {_subset.names_list(missing)}"

    def extra_text(self, extra: Sequence[str]) -> str:
        return f"keys not allowed: {_subset.names_list(extra)}"

    def problems(self, spec: ToolSpec, arguments: object) -> list[str]:
        if not isinstance(arguments, Mapping):
            return [f"arguments must be a JSON object, got {_subset.type_name(arguments)}"]
        schema = spec.parameters
        inert = self.ref_inert(schema)
        if inert and "$ref" in schema:
            return []
        found = []
        missing = self.missing_keys(schema, arguments)
        if missing:
            found.append(self.missing_text(missing))
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        if self.closed(schema):
            extra = self.extra_keys(schema, props, arguments)
            if extra:
                found.append(self.extra_text(extra))
        wrong = []
        for key, value in arguments.items():
            prop = props.get(key)
            if inert and isinstance(prop, Mapping) and "$ref" in prop:
                continue
            wanted = self.declared(prop)
            if wanted is not None and not self.type_ok(value, wanted):
                wrong.append(f"'{_subset.short(key)}' must be {'/'.join(wanted)}")
        if wrong:
            found.append("wrong types: " + "; ".join(wrong[:12]))
        return found

    def reject(self, call: ToolCall) -> str | None:
        spec = self.registry.spec_for(call.name)
        if spec is None:
            return _subset.unknown_tool(self.registry, call.name)
        parts = self.problems(spec, call.arguments)
        return _subset.message(call.name, parts) if parts else None

    # -- dispatch ---------------------------------------------------------------------------

    def outcome(self, status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
        return ActionOutcome(
            status=status,
            observation=observation,
            observation_is_synthetic=synthetic,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )

    def text_of(self, exc: BaseException) -> str:
        try:
            return str(exc)
        except Exception:
            return STR_FAILED

    def describe(self, exc: BaseException) -> str:
        return f"{type(exc).__name__}: {self.text_of(exc)}"

    def arguments(self, call: ToolCall) -> Any:
        return plain(call.arguments)

    def refuse_code(self, action: Action) -> ActionOutcome:
        return self.outcome(ActionStatus.NOT_EXECUTED, "code actions are not supported", True)

    async def call_handler(self, spec: ToolSpec, call: ToolCall) -> ActionOutcome:
        """Await the handler and map what it did to an outcome (E3-E5, E9)."""
        assert spec.handler is not None
        try:
            result = await spec.handler(self.arguments(call))
        except ToolEnvironmentError as exc:
            return self.outcome(ActionStatus.ENV_ERROR, self.text_of(exc), False)
        except Exception as exc:
            return self.outcome(ActionStatus.EXECUTED, self.describe(exc), False)
        return self.finish(call, result)

    def finish(self, call: ToolCall, result: object) -> ActionOutcome:
        if not isinstance(result, str):
            raise TypeError(f"tool {call.name!r} returned {type(result).__name__}, not str")
        return self.outcome(ActionStatus.EXECUTED, result, False)

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return self.refuse_code(action)
        rejection = self.reject(call)
        if rejection is not None:
            return self.outcome(ActionStatus.NOT_EXECUTED, rejection, True)
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        return await self.call_handler(spec, call)


def plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value
