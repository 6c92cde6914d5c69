"""Validators are compiled lazily, once per tool, into closures kept in a per-executor cache.

Compiling is synchronous, so concurrent calls never see a half-built entry; the closure holds the
subset's precomputed facts (required keys, closed key set, declared types).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolSpec

from . import _parts, _subset

Checker = Callable[[Any], "str | None"]


def _compile(spec: ToolSpec) -> Checker:
    schema = spec.parameters
    inert = _subset.ref_is_inert(schema)
    if inert and "$ref" in schema:

        def object_only(arguments: Any) -> str | None:
            if isinstance(arguments, Mapping):
                return None
            return _subset.message(spec.name, _subset.problems(spec, arguments))

        return object_only
    required = schema.get("required")
    required_keys = (
        [k for k in required if isinstance(k, str)] if isinstance(required, (list, tuple)) else []
    )
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    closed = schema.get("additionalProperties") is False and "patternProperties" not in schema
    types = {}
    for key, prop in props.items():
        if inert and isinstance(prop, Mapping) and "$ref" in prop:
            continue
        wanted = _subset.declared_types(prop)
        if wanted is not None:
            types[key] = wanted

    def check(arguments: Any) -> str | None:
        if not isinstance(arguments, Mapping):
            return _subset.message(
                spec.name, [f"arguments must be an object, got {_subset.type_name(arguments)}"]
            )
        parts = []
        missing = [k for k in required_keys if k not in arguments]
        if missing:
            parts.append(f"missing required keys: {_subset.names_list(missing)}")
        if closed:
            extra = [k for k in arguments if k not in props]
            if extra:
                parts.append(f"unexpected keys: {_subset.names_list(extra)}")
        wrong = [
            f"'{_subset.short(k)}' must be {'/'.join(types[k])}"
            for k, v in arguments.items()
            if k in types and (kinds := _subset.json_types(v)) and not kinds.intersection(types[k])
        ]
        if wrong:
            parts.append("wrong types: " + "; ".join(wrong[:12]))
        return _subset.message(spec.name, parts) if parts else None

    return check


class LazyCacheExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._checkers: dict[str, Checker] = {}

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    def _checker(self, spec: ToolSpec) -> Checker:
        checker = self._checkers.get(spec.name)
        if checker is None:
            checker = self._checkers[spec.name] = _compile(spec)
        return checker

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _parts.refused(_parts.CODE_REFUSED)
        spec = self.registry.spec_for(call.name)
        if spec is None:
            return _parts.refused(_subset.unknown_tool(self.registry, call.name))
        rejection = self._checker(spec)(call.arguments)
        if rejection is not None:
            return _parts.refused(rejection)
        assert spec.handler is not None
        try:
            result = await spec.handler(_parts.plain(call.arguments))
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> LazyCacheExecutor:
    return LazyCacheExecutor(registry)
