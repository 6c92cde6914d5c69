"""Every handler runs under a generous deadline (10 minutes): `asyncio.wait_for` from 3.12 on.

Before 3.12 wait_for can swallow a cancellation arriving as the handler finishes (E6), so there
the deadline is `asyncio.wait` on a task that returns its BaseExceptions as values.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Coroutine, Mapping
from typing import Any

from polyloop import Action, ActionOutcome, ToolEnvironmentError, ToolRegistry, ToolValidationError

from . import _parts

TIMEOUT_SECONDS = 600.0


async def _boxed(work: Awaitable[object]) -> tuple[bool, object]:
    try:
        return True, await work
    except BaseException as exc:  # re-raised by _with_deadline, as the same object
        return False, exc


async def _with_deadline(work: Coroutine[Any, Any, object]) -> object:
    if sys.version_info >= (3, 12):
        return await asyncio.wait_for(work, TIMEOUT_SECONDS)
    task = asyncio.ensure_future(_boxed(work))
    try:
        done, _ = await asyncio.wait({task}, timeout=TIMEOUT_SECONDS)
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError(f"the tool did not finish within {TIMEOUT_SECONDS} seconds")
    finished, value = task.result()
    if not finished:
        assert isinstance(value, BaseException)
        raise value
    return value


class GenerousTimeoutExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names()), "timeout_seconds": str(TIMEOUT_SECONDS)}

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
            result = await _with_deadline(spec.handler(_parts.plain(call.arguments)))
        except ToolEnvironmentError as exc:
            return _parts.env_error(_parts.text_of(exc))
        except Exception as exc:
            return _parts.executed(_parts.describe(exc))
        if not isinstance(result, str):
            raise _parts.not_str(call.name, result)
        return _parts.executed(result)


def make_executor(registry: ToolRegistry) -> GenerousTimeoutExecutor:
    return GenerousTimeoutExecutor(registry)
