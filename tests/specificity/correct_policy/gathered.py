"""Correct policy executor 2: every decider awaited concurrently, then combined strictest-wins.

Written from CONTRACT.md sections 5, 6 and 11 alone. Each stage (the deciders together, the
approver, the wrapper chain, each post-processor) runs in its own task that `execute` waits on
with `asyncio.wait`, which never cancels what it waits for: so when `execute` is cancelled it
knows, even if the listener swallows the cancellation, and it forwards the cancellation, waits
for the stage to end and raises `CancelledError` (P9). All deciders are always awaited, so the
denial text lists every failure and every DENY reason, in decider order (P3, P4, P6).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
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


class _Cancelled:
    """Set once `execute` was cancelled: from then on no handler is entered (P9)."""

    def __init__(self) -> None:
        self.value = False


async def _capture(coro: Awaitable[Any]) -> tuple[bool, Any]:
    try:
        return True, await coro
    except BaseException as exc:  # carried out so the outer task re-raises the same object
        return False, exc


async def _stage(flag: _Cancelled, coro: Awaitable[Any]) -> tuple[bool, Any]:
    """Run one stage in its own task; on cancellation forward it, wait, and re-raise."""
    task = asyncio.ensure_future(_capture(coro))
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        flag.value = True
        task.cancel()
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                task.cancel()
        if not task.cancelled():
            task.result()
        raise
    result: tuple[bool, Any] = task.result()
    return result


def _fatal(exc: BaseException) -> bool:
    return not isinstance(exc, Exception)


def _make(status: ActionStatus, text: str, *, synthetic: bool) -> ActionOutcome:
    if synthetic and len(text) > 1990:
        text = text[:1980] + " [...]"
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _blocked(text: str) -> ActionOutcome:
    return _make(ActionStatus.NOT_EXECUTED, text, synthetic=True)


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    try:
        return f"{name}: {exc}"
    except Exception:
        return f"{name}: <exception str() failed>"


class GatheredPolicyExecutor:
    """Deciders concurrently through `asyncio.gather`; none is cancelled because another denied."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None) -> None:
        if policy is None:
            policy = ToolPolicy()
        if not isinstance(policy, ToolPolicy):
            raise TypeError("policy must be a ToolPolicy or None")
        table = {spec.name: spec.handler for spec in registry.specs}
        lacking = [name for name, handler in table.items() if handler is None]
        if lacking:
            raise ValueError("every tool needs a handler; missing for: " + ", ".join(lacking))
        self.registry = registry
        self._policy = policy
        self._table = table

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return _blocked("refused: this action carries no tool call to dispatch")
        call = action.tool_call
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _make(ActionStatus.NOT_EXECUTED, str(exc), synthetic=True)
        flag = _Cancelled()
        refusal = await self._deciding(call, flag)
        if refusal is not None:
            return refusal
        outcome = await self._chain(call, flag)
        if outcome.status is ActionStatus.EXECUTED:
            outcome = await self._post(call, outcome, flag)
        return outcome

    async def _deciding(self, call: ToolCall, flag: _Cancelled) -> ActionOutcome | None:
        deciders = self._policy.deciders
        # Each decider is captured on its own, so one raising never cuts the others short
        # and an answer that merely *is* an exception object is not taken for a raise.
        ok, answers = await _stage(flag, asyncio.gather(*(_capture(d(call)) for d in deciders)))
        if not ok:
            raise answers
        for answered, answer in answers:
            if not answered and _fatal(answer):
                raise answer
        problems: list[str] = []
        asks: list[str] = []
        kinds: set[Decision] = set()
        for position, (answered, answer) in enumerate(answers):
            if not answered:
                problems.append(f"decider #{position} failed with {type(answer).__name__}")
            elif answer is None:
                continue
            elif not isinstance(answer, Verdict):
                problems.append(f"decider #{position} gave an invalid answer")
            elif answer.decision is Decision.DENY:
                problems.append(answer.reason)
            else:
                kinds.add(answer.decision)
                if answer.decision is Decision.ASK:
                    asks.append(answer.reason)
        if problems:
            listed = "; ".join(p for p in problems if p)
            return _blocked("refused by policy" + (f" ({listed})" if listed else ""))
        combined = (
            Decision.ASK
            if Decision.ASK in kinds
            else Decision.ALLOW
            if kinds
            else self._policy.default
        )
        if combined is Decision.DENY:
            return _blocked("refused by policy")
        if combined is Decision.ASK:
            return await self._approval(call, tuple(asks), flag)
        return None

    async def _approval(
        self, call: ToolCall, reasons: tuple[str, ...], flag: _Cancelled
    ) -> ActionOutcome | None:
        approver = self._policy.approver
        if approver is None:
            return _blocked("refused: approval was required but nobody can approve")
        ok, answer = await _stage(flag, approver(call, reasons))
        if not ok:
            if _fatal(answer):
                raise answer
            return _blocked(f"refused: the approval step failed with {type(answer).__name__}")
        if answer is True:
            return None
        if answer is False:
            return _blocked("refused: approval was declined")
        return _blocked("refused: the approval step answered something other than True")

    async def _chain(self, call: ToolCall, flag: _Cancelled) -> ActionOutcome:
        handler = self._table[call.name]
        assert handler is not None

        async def enter() -> Any:
            if flag.value:
                raise asyncio.CancelledError
            return await handler(plain_arguments(call))

        proceed: Callable[[], Awaitable[Any]] = enter
        for wrapper in reversed(self._policy.wrappers):
            proceed = _bind(wrapper, call, proceed)
        ok, result = await _stage(flag, proceed())
        if not ok:
            if _fatal(result):
                raise result
            if isinstance(result, ToolEnvironmentError):
                try:
                    text = str(result)
                except Exception:
                    text = "<exception str() failed>"
                return _make(ActionStatus.ENV_ERROR, text, synthetic=False)
            return _make(ActionStatus.EXECUTED, _describe(result), synthetic=False)
        if not isinstance(result, str):
            raise TypeError(f"tool {call.name!r}: handler chain returned {type(result).__name__}")
        return _make(ActionStatus.EXECUTED, result, synthetic=False)

    async def _post(
        self, call: ToolCall, outcome: ActionOutcome, flag: _Cancelled
    ) -> ActionOutcome:
        text = outcome.observation
        for position, post in enumerate(self._policy.post):
            ok, text = await _stage(flag, post(call, text))
            if not ok:
                if _fatal(text):
                    raise text
                return _make(
                    ActionStatus.EXECUTED,
                    f"observation withheld: post-processing step #{position} failed "
                    f"with {type(text).__name__}",
                    synthetic=True,
                )
            if not isinstance(text, str):
                return _make(
                    ActionStatus.EXECUTED,
                    f"observation withheld: post-processing step #{position} gave no text",
                    synthetic=True,
                )
        return _make(ActionStatus.EXECUTED, text, synthetic=outcome.observation_is_synthetic)


def _bind(
    wrapper: Callable[[ToolCall, Callable[[], Awaitable[Any]]], Awaitable[Any]],
    call: ToolCall,
    inner: Callable[[], Awaitable[Any]],
) -> Callable[[], Awaitable[Any]]:
    async def proceed() -> Any:
        return await wrapper(call, inner)

    return proceed


def factory(registry: ToolRegistry, policy: ToolPolicy | None = None) -> GatheredPolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return GatheredPolicyExecutor(registry, policy)
