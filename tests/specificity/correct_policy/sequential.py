"""Correct policy executor 1: plain sequential awaits, stopping at the first DENY.

Written from CONTRACT.md sections 5, 6 and 11 alone. The whole policy pipeline of one call runs
in one inner task, so a cancellation that a listener swallows is still seen by `execute` (P9):
the outer coroutine notices its own cancellation, raises a stop flag every stage checks, sends
the cancellation on and waits for the inner task to end, then raises `CancelledError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolValidationError,
    Verdict,
    plain_arguments,
)

__all__ = ["factory"]

_LIMIT = 2000


def _outcome(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _refused(text: str) -> ActionOutcome:
    if len(text) >= _LIMIT:
        text = text[: _LIMIT - 4] + "..."
    return _outcome(ActionStatus.NOT_EXECUTED, text, True)


def _exc_text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


@dataclass
class _Stop:
    """Raised once `execute` has been cancelled; every stage checks it before starting."""

    raised: bool = False

    def check(self) -> None:
        if self.raised:
            raise asyncio.CancelledError


@dataclass(frozen=True)
class _Escaped:
    """A BaseException of the pipeline carried to the outer task, so it keeps its identity."""

    exc: BaseException


class SequentialPolicyExecutor:
    """Deciders one after another in `deciders` order; the first DENY ends the deciding."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None) -> None:
        if policy is not None and not isinstance(policy, ToolPolicy):
            raise TypeError(f"policy must be a ToolPolicy or None, got {type(policy).__name__}")
        missing = [spec.name for spec in registry.specs if spec.handler is None]
        if missing:
            raise ValueError(f"tools without a handler: {', '.join(missing)}")
        self.registry = registry
        self._policy = policy if policy is not None else ToolPolicy()
        self._handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {
            spec.name: spec.handler for spec in registry.specs if spec.handler is not None
        }
        self._parameters = {"tools": ",".join(registry.names())}

    def parameters(self) -> Mapping[str, str]:
        return dict(self._parameters)

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _refused("not executed: the action holds no tool call")
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        stop = _Stop()
        inner = asyncio.ensure_future(self._pipeline(call, stop))
        try:
            result = await asyncio.shield(inner)
        except asyncio.CancelledError:
            stop.raised = True
            await _drain(inner)
            raise
        if isinstance(result, _Escaped):
            raise result.exc
        return result

    async def _pipeline(self, call: ToolCall, stop: _Stop) -> ActionOutcome | _Escaped:
        try:
            refusal = await self._decide(call, stop)
            if refusal is not None:
                return refusal
            stop.check()
            outcome = await self._run_chain(call, stop)
            if outcome.status is not ActionStatus.EXECUTED:
                return outcome
            return await self._post_process(call, outcome, stop)
        except Exception:
            raise  # E9's TypeError: an ordinary task exception keeps its identity anyway
        except BaseException as exc:  # CancelledError, KeyboardInterrupt...: E6, same object
            return _Escaped(exc)

    async def _decide(self, call: ToolCall, stop: _Stop) -> ActionOutcome | None:
        asks: list[str] = []
        saw_allow = False
        for position, decider in enumerate(self._policy.deciders):
            stop.check()
            try:
                answer = await decider(call)
            except Exception as exc:
                return _refused(f"denied: decider {position} raised {type(exc).__name__}")
            stop.check()
            if answer is None:
                continue
            if not isinstance(answer, Verdict):
                return _refused(f"denied: decider {position} did not answer a Verdict or None")
            if answer.decision is Decision.DENY:
                reason = f": {answer.reason}" if answer.reason else ""
                return _refused(f"denied by policy{reason}")
            if answer.decision is Decision.ASK:
                asks.append(answer.reason)
            else:
                saw_allow = True
        if asks:
            return await self._ask(call, tuple(asks), stop)
        if saw_allow or self._policy.default is Decision.ALLOW:
            return None
        if self._policy.default is Decision.ASK:
            return await self._ask(call, (), stop)
        return _refused("denied by policy")

    async def _ask(
        self, call: ToolCall, reasons: tuple[str, ...], stop: _Stop
    ) -> ActionOutcome | None:
        approver = self._policy.approver
        if approver is None:
            return _refused("denied: the call needs approval and no approver is configured")
        stop.check()
        try:
            answer = await approver(call, reasons)
        except Exception as exc:
            return _refused(f"denied: the approver raised {type(exc).__name__}")
        stop.check()
        if answer is True:
            return None
        if answer is False:
            return _refused("denied: the approver rejected the call")
        return _refused("denied: the approver's answer was neither True nor False")

    async def _run_chain(self, call: ToolCall, stop: _Stop) -> ActionOutcome:
        handler = self._handlers[call.name]
        wrappers = self._policy.wrappers

        async def step(level: int) -> Any:
            stop.check()
            if level == len(wrappers):
                return await handler(plain_arguments(call))
            return await wrappers[level](call, lambda: step(level + 1))

        try:
            result = await step(0)
        except ToolEnvironmentError as exc:
            return _outcome(ActionStatus.ENV_ERROR, _exc_text(exc), False)
        except Exception as exc:
            return _outcome(ActionStatus.EXECUTED, f"{type(exc).__name__}: {_exc_text(exc)}", False)
        stop.check()
        if not isinstance(result, str):
            raise TypeError(
                f"the handler chain of tool {call.name!r} returned {type(result).__name__}, not str"
            )
        return _outcome(ActionStatus.EXECUTED, result, False)

    async def _post_process(
        self, call: ToolCall, outcome: ActionOutcome, stop: _Stop
    ) -> ActionOutcome:
        text = outcome.observation
        for position, post in enumerate(self._policy.post):
            stop.check()
            try:
                text = await post(call, text)
            except Exception as exc:
                return _outcome(
                    ActionStatus.EXECUTED,
                    f"withheld: post-processor {position} raised {type(exc).__name__}",
                    True,
                )
            stop.check()
            if not isinstance(text, str):
                return _outcome(
                    ActionStatus.EXECUTED,
                    f"withheld: post-processor {position} returned a non-str",
                    True,
                )
        return _outcome(ActionStatus.EXECUTED, text, outcome.observation_is_synthetic)


async def _drain(inner: asyncio.Future[Any]) -> None:
    """Send the cancellation on and wait until the inner task has really ended (P9)."""
    inner.cancel()
    while not inner.done():
        try:
            await asyncio.wait({inner})
        except asyncio.CancelledError:
            inner.cancel()
    if not inner.cancelled():
        inner.exception()


def factory(registry: ToolRegistry, policy: ToolPolicy | None = None) -> SequentialPolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return SequentialPolicyExecutor(registry, policy)
