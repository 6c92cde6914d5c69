"""An executor written from scratch that certifies at `strict` (docs/writing-an-executor.md).

It does what a project's own executor typically does on top of a `ToolRegistry`: the registry's
validator first (V1-V8: it rejects only what is certainly wrong, with messages that name keys
and never echo values), then full JSON Schema with `jsonschema` (stricter, which E14 allows),
then the handler, with every result mapped to exactly one row of the E-table.

    python3 examples/my_executor.py     # certifies it at strict, profile ci; exit 0 on PASSED
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema import validators

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
    plain_arguments,
)

NO_TOOL_CALL = "this action has no tool call, so there is nothing to execute"
STR_FAILED = "<exception str() failed>"


def outcome(status: ActionStatus, observation: str, *, synthetic: bool) -> ActionOutcome:
    # Nothing on this path can ask an environment whether the run is complete, and nothing
    # truncates: both fields hold their true value (E7).
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def exception_text(exc: Exception) -> str:
    """`str(exc)`, or a placeholder when even that raises (E12): an outcome is always made."""
    try:
        return str(exc)
    except Exception:
        return STR_FAILED


class MyExecutor:
    """Validates with the registry and with full JSON Schema, then runs the tool's handler."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        # Plain dicts of each tool's schema, as the model sees them (jsonschema wants dicts).
        self._schemas = {tool["name"]: tool["parameters"] for tool in registry.schema_for_model()}
        self._validators: dict[str, Any] = {}

    def parameters(self) -> Mapping[str, str]:
        # The same mapping of str to str on every call (E15).
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:  # E1
            return outcome(ActionStatus.NOT_EXECUTED, NO_TOOL_CALL, synthetic=True)
        try:
            self.registry.validate(call)  # V1-V8
            self.validate_fully(call)  # E14: rejecting what full JSON Schema rejects is allowed
        except ToolValidationError as exc:  # E2; never `except ValueError` (E10)
            return outcome(ActionStatus.NOT_EXECUTED, str(exc), synthetic=True)
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        try:
            # A fresh plain dict for every call: what the handler mutates stays its own (E13).
            result = await spec.handler(plain_arguments(call))  # E8: awaited exactly once
        except ToolEnvironmentError as exc:  # E3
            return outcome(ActionStatus.ENV_ERROR, exception_text(exc), synthetic=False)
        except Exception as exc:  # E4; CancelledError and other BaseExceptions pass (E6)
            text = f"{type(exc).__name__}: {exception_text(exc)}"
            return outcome(ActionStatus.EXECUTED, text, synthetic=False)
        if not isinstance(result, str):  # E9: a signature bug, loud on the first call
            raise TypeError(
                f"the handler of tool {call.name!r} returned {type(result).__name__}, not str"
            )
        return outcome(ActionStatus.EXECUTED, result, synthetic=False)  # E5

    def validate_fully(self, call: ToolCall) -> None:
        """Reject what `jsonschema` rejects, naming the keyword and the path, never a value (V8)."""
        validator = self.validator_for(call.name)
        if validator is None:
            return
        try:
            # jsonschema wants dicts and lists: the call's own read-only tree is not an object.
            error = jsonschema.exceptions.best_match(validator.iter_errors(plain_arguments(call)))
        except Exception:
            return  # a value jsonschema cannot judge is no proof of invalidity (V1)
        if error is not None:
            where = "".join(f"[{str(part)[:40]!r}]" for part in error.absolute_path)
            raise ToolValidationError(
                f"arguments for tool {call.name[:80]!r} fail the schema keyword "
                f"{str(error.validator)[:40]!r} at arguments{where or ' (top level)'}"
            )

    def validator_for(self, name: str) -> Any:
        """One compiled validator per tool, in the dialect its `$schema` declares (V1)."""
        if name not in self._validators:
            schema = self._schemas[name]
            try:
                cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                self._validators[name] = cls(schema)
            except Exception:
                self._validators[name] = None  # a schema jsonschema cannot compile rejects nothing
        return self._validators[name]


if __name__ == "__main__":
    from conformance import certify

    report = certify(MyExecutor, level="strict", profile="ci")
    print(report.to_text())
    raise SystemExit(0 if report.passed else 1)
