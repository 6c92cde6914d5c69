"""Unusual but correct executors: the kit must certify every one of them.

They stress the kit's tolerance, not its vigilance: stricter validation (E14), instrumentation,
a task per handler call, and delegation to polyloop's own executor.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import jsonschema
from jsonschema import validators

from polyloop import (
    Action,
    ActionOutcome,
    RegistryExecutor,
    ToolCall,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

from .base import ZooExecutor, shorten, thaw

logger = logging.getLogger("tests.zoo.unusual")


class FullSchemaValidation(ZooExecutor):
    """Validates with full JSON Schema after the subset: stricter, which E14 allows.

    The subset runs first so V2–V6 rejections keep their precise messages; jsonschema then
    catches what the subset deliberately lets through (``enum``, ranges, nested schemas). Its
    own messages quote the offending values, so only the keyword and the JSON path are reported
    (V8). A schema jsonschema cannot handle (unresolvable ``$ref``, a bad regex) rejects
    nothing, so V1 holds.
    """

    def validate(self, call: ToolCall) -> None:
        super().validate(call)
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        schema = thaw(spec.parameters)
        instance = thaw(call.arguments)
        try:
            cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            error = jsonschema.exceptions.best_match(cls(schema).iter_errors(instance))
        except Exception:
            return
        if error is None:
            return
        path = "".join(f"[{shorten(repr(part), 40)}]" for part in error.absolute_path)
        raise ToolValidationError(
            f"arguments for tool {shorten(repr(call.name))} fail the schema keyword "
            f"{shorten(repr(error.validator), 40)} at arguments{path or ' (top level)'}"
        )


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    tool: str | None
    status: str
    seconds: float


class LoggingTimingExecutor(ZooExecutor):
    """Logs and times every call into ``self.calls`` and the ``tests.zoo.unusual`` logger."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self.calls: list[CallRecord] = []

    async def execute(self, action: Action) -> ActionOutcome:
        name = action.tool_call.name if action.tool_call is not None else None
        started = time.perf_counter()
        status = "raised"
        try:
            outcome = await super().execute(action)
            status = outcome.status.name
            return outcome
        finally:
            elapsed = time.perf_counter() - started
            self.calls.append(CallRecord(tool=name, status=status, seconds=elapsed))
            logger.debug("tool %r -> %s in %.6fs", name, status, elapsed)


class TaskPerCall(ZooExecutor):
    """Runs every handler call as its own asyncio task.

    The inner task carries the handler's outcome back boxed, so a ``KeyboardInterrupt`` or
    ``SystemExit`` from the handler reaches our caller instead of escaping the event loop.
    ``CancelledError`` is not boxed: cancelling the outer call cancels the inner task (asyncio
    forwards it to the awaited task), and we wait for the inner task to finish before
    re-raising, so no handler keeps running after ``execute`` has been cancelled.
    """

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        task = asyncio.ensure_future(self._boxed(spec, arguments))
        try:
            ok, value = await task
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait({task})
            raise
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value

    async def _boxed(self, spec: ToolSpec, arguments: object) -> tuple[bool, object]:
        try:
            return True, await super().invoke(spec, arguments)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return False, exc


class SerializedCalls(ZooExecutor):
    """Runs one call at a time behind an ``asyncio.Lock``: slower, but E11 only asks that
    concurrent outcomes equal sequential ones, and cancellation still reaches the handler."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._lock = asyncio.Lock()

    async def execute(self, action: Action) -> ActionOutcome:
        async with self._lock:
            return await super().execute(action)


class DelegatesToRegistryExecutor:
    """Wraps polyloop's ``RegistryExecutor`` by delegation (no inheritance)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, registry: ToolRegistry) -> None:
        self._inner = RegistryExecutor(registry)
        self.seen = 0

    def parameters(self) -> Mapping[str, str]:
        return dict(self._inner.parameters())

    async def execute(self, action: Action) -> ActionOutcome:
        self.seen += 1
        return await self._inner.execute(action)


UNUSUAL: tuple[Any, ...] = (
    ZooExecutor,
    FullSchemaValidation,
    LoggingTimingExecutor,
    TaskPerCall,
    SerializedCalls,
    DelegatesToRegistryExecutor,
)
"""Factories the kit must pass; `ZooExecutor` itself is the base every broken one starts from."""
