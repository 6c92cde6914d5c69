"""Correct but unusual executors: the engine's own tests certify each of them.

A conformance kit that only passes the reference implementation proves little; these differ
from `RegistryExecutor` where the contract leaves room (E14 lets an executor validate more;
nothing forbids logging, timing or running handlers as separate tasks) and must certify anyway.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)


def _outcome(status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(item) for item in value]
    return value


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class FullSchemaExecutor:
    """Validates with the subset first, then with full JSON Schema (stricter: E14)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._inner = RegistryExecutor(registry)
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return self._inner.parameters()

    def _full_problem(self, name: str, arguments: Any) -> str | None:
        spec = self.registry.spec_for(name)
        if spec is None:
            return None
        schema = _thaw(spec.parameters)
        cls: Any = validators.validator_for(schema, default=validators.Draft202012Validator)
        try:
            error = next(iter(cls(schema).iter_errors(_thaw(arguments))), None)
        except jsonschema_exceptions.UnknownType:
            return None  # an unknown type name accepts anything (V6)
        if error is None:
            return None
        # jsonschema's own message quotes the offending value (V8): name only where it is.
        where = "/".join(_short(str(part), 40) for part in error.absolute_path) or "the top level"
        return (
            f"arguments for tool {_short(name)!r} do not match its schema at {where} "
            f"(keyword {error.validator!r})"
        )

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is not None:
            try:
                self.registry.validate(call)
            except ToolValidationError:
                pass  # the reference executor words this rejection
            else:
                problem = self._full_problem(call.name, call.arguments)
                if problem is not None:
                    return _outcome(ActionStatus.NOT_EXECUTED, problem, True)
        return await self._inner.execute(action)


class InstrumentedExecutor:
    """Logs and times every call, then delegates to the reference executor."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._inner = RegistryExecutor(registry)
        self.timings: list[tuple[str, float]] = []
        self._log = logging.getLogger("tests.kit.unusual.instrumented")

    def parameters(self) -> Mapping[str, str]:
        return {**self._inner.parameters(), "instrumented": "yes"}

    async def execute(self, action: Action) -> ActionOutcome:
        name = action.tool_call.name if action.tool_call else "<code>"
        started = time.perf_counter()
        self._log.debug("calling %r", _short(name))
        try:
            return await self._inner.execute(action)
        finally:
            elapsed = time.perf_counter() - started
            self.timings.append((name, elapsed))
            self._log.debug("%r took %.6fs", _short(name), elapsed)


class TaskPerCallExecutor:
    """Its own dispatch, running every handler call as a separate asyncio task."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _outcome(
                ActionStatus.NOT_EXECUTED, "Only tool calls can be executed here.", True
            )
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        task = asyncio.ensure_future(spec.handler(_thaw(call.arguments)))
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()  # whoever cancelled us also cancels the handler, then we go on
            raise
        except ToolEnvironmentError as exc:
            return _outcome(ActionStatus.ENV_ERROR, _text(exc, bare=True), False)
        except Exception as exc:
            return _outcome(ActionStatus.EXECUTED, _text(exc, bare=False), False)
        if not isinstance(result, str):
            raise TypeError(f"tool {call.name!r} returned {type(result).__name__}, not str")
        return _outcome(ActionStatus.EXECUTED, result, False)


def _text(exc: BaseException, *, bare: bool) -> str:
    try:
        text = str(exc)
    except Exception:
        return f"{type(exc).__name__}: <exception str() failed>"
    return text if bare else f"{type(exc).__name__}: {text}"


UNUSUAL = (FullSchemaExecutor, InstrumentedExecutor, TaskPerCallExecutor)
