"""Executors that test the engine and its runner rather than one clause's check.

Each is the reference executor (or no executor at all) with one way of misbehaving that the
engine must survive: hanging, blocking the loop, raising, returning junk, swallowing interrupts,
a factory that raises. Those that break exactly one clause say which in their docstring; the
tests in ``tests/kit/test_engine_*.py`` assert what `certify` reports for each.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from _helpers import FixedExecutor, outcome

from polyloop import Action, ActionOutcome, ActionStatus, RegistryExecutor, ToolRegistry

__all__ = [
    "REJECTS_EVERYTHING",
    "BlocksTheLoop",
    "ClaimsCompletion",
    "HangsForever",
    "LeaksTraceback",
    "Misbehaves",
    "NotAsync",
    "SwallowsInterrupts",
    "factory_that_raises",
]

REJECTS_EVERYTHING = FixedExecutor(answer=outcome(ActionStatus.NOT_EXECUTED, "no", synthetic=True))
"""Black-box V1 failure: every call, valid or not, is rejected."""

_LEAKED = (
    "RuntimeError",
    "KeyError",
    "TypeError",
    "HandlerBug",
    "LookupError",
    "ZeroDivisionError",
    "AssertionError",
    "NotImplementedError",
    "Exception",
)
"""The exception class names the kit's scripted handlers raise (what E4's observation starts
with); only those observations get a traceback, so E5's texts are untouched."""


class ClaimsCompletion(RegistryExecutor):
    """Breaks E7 only: every outcome claims the environment reported completion."""

    async def execute(self, action: Action) -> ActionOutcome:
        return dataclasses.replace(await super().execute(action), env_reported_completion=True)


class LeaksTraceback(RegistryExecutor):
    """Breaks E4 (and nothing the E5 check looks at): exceptions become traceback text."""

    async def execute(self, action: Action) -> ActionOutcome:
        answer = await super().execute(action)
        if (
            answer.status is ActionStatus.EXECUTED
            and action.tool_call is not None
            and ": " in answer.observation
            and answer.observation.split(":")[0] in _LEAKED
        ):
            return outcome(
                answer.status, "Traceback (most recent call last):\n" + answer.observation
            )
        return answer


class SwallowsInterrupts(RegistryExecutor):
    """Turns KeyboardInterrupt (and every BaseException) into an outcome: breaks E6."""

    async def execute(self, action: Action) -> ActionOutcome:
        try:
            return await super().execute(action)
        except BaseException as exc:
            return outcome(ActionStatus.EXECUTED, repr(exc))


class _IgnoresRegistry:
    """Takes the registry the kit passes and uses none of it."""

    def __init__(self, registry: ToolRegistry) -> None:
        pass

    def parameters(self) -> Mapping[str, str]:
        return {}


class HangsForever(_IgnoresRegistry):
    """``execute`` never returns (awaits an event nobody sets): the deadline must end it."""

    async def execute(self, action: Action) -> ActionOutcome:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class BlocksTheLoop(_IgnoresRegistry):
    """``execute`` never gives control back to the event loop for 3 s per call."""

    async def execute(self, action: Action) -> ActionOutcome:
        time.sleep(3)
        raise AssertionError("unreachable")


class Misbehaves(_IgnoresRegistry):
    """``execute`` returns junk for an action without a call and raises for every call."""

    async def execute(self, action: Action) -> Any:
        if action.tool_call is None:
            return {"status": "not executed"}
        raise RuntimeError("executor bug")


class NotAsync(_IgnoresRegistry):
    """``execute`` is a plain function: its result is not awaitable."""

    def execute(self, action: Action) -> ActionOutcome:
        return outcome(ActionStatus.NOT_EXECUTED, "sync", synthetic=True)


def factory_that_raises(registry: ToolRegistry) -> Any:
    """A factory that cannot build an executor at all."""
    raise RuntimeError("no backend configured")
