"""Correct policy executor 4: middleware layers composed by `functools.reduce` into one callable.

Written from CONTRACT.md sections 5, 6 and 11 alone. A call passes through layers of shape
`(ticket, next) -> outcome` — require a tool call, validate, decide, approve, post-process —
folded once, at construction, into a single callable ending in the wrapper chain, which is
itself a `reduce` over the wrappers. Deciders are awaited one after another in `deciders` order
and all of them are awaited (no early stop), so the denial lists every DENY reason.

Each listener runs in its own task that `execute`'s task waits on through `asyncio.shield`, so
a cancellation swallowed by the listener is still seen: the waiter marks the ticket cancelled,
forwards the cancellation, waits for the listener to end and raises `CancelledError` (P9).
"""

from __future__ import annotations

import asyncio
import functools
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


@dataclass
class _Ticket:
    action: Action
    cancelled: bool = False
    asks: tuple[str, ...] = ()
    needs_approval: bool = False

    @property
    def call(self) -> ToolCall:
        assert self.action.tool_call is not None
        return self.action.tool_call


Next = Callable[[_Ticket], Awaitable[ActionOutcome]]
Layer = Callable[[_Ticket, Next], Awaitable[ActionOutcome]]
Proceed = Callable[[], Awaitable[Any]]


def _outcome(status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _blocked(text: str) -> ActionOutcome:
    return _outcome(ActionStatus.NOT_EXECUTED, text if len(text) < 2000 else text[:1998], True)


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


async def _boxed(awaitable: Awaitable[Any]) -> tuple[BaseException | None, Any]:
    try:
        return None, await awaitable
    except BaseException as exc:
        return exc, None


async def _listen(ticket: _Ticket, awaitable: Awaitable[Any]) -> tuple[BaseException | None, Any]:
    """Await one listener in its own task; a cancellation of ours is forwarded and re-raised."""
    task = asyncio.ensure_future(_boxed(awaitable))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        ticket.cancelled = True
        while not task.done():
            task.cancel()
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                continue  # cancelled again: the listener still has to end first
        raise


def _link(inner: Next, layer: Layer) -> Next:
    async def step(ticket: _Ticket) -> ActionOutcome:
        return await layer(ticket, inner)

    return step


def _fatal(exc: BaseException | None) -> bool:
    return exc is not None and not isinstance(exc, Exception)


class ComposedPolicyExecutor:
    """One callable per executor, built by `functools.reduce` over the layers."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None) -> None:
        if policy is not None and not isinstance(policy, ToolPolicy):
            raise TypeError(f"policy: expected ToolPolicy or None, got {type(policy).__name__}")
        self.registry = registry
        self._policy = policy if policy is not None else ToolPolicy()
        self._handlers = {spec.name: spec.handler for spec in registry.specs}
        if None in self._handlers.values():
            names = [name for name, handler in self._handlers.items() if handler is None]
            raise ValueError("tools lacking a handler: " + ", ".join(names))
        layers: list[Layer] = [
            self._require_call,
            self._validate,
            self._decide,
            self._approve,
            self._post_process,
        ]
        innermost: Next = self._chain
        self._run: Next = functools.reduce(_link, reversed(layers), innermost)

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        return await self._run(_Ticket(action=action))

    async def _require_call(self, ticket: _Ticket, next: Next) -> ActionOutcome:
        if ticket.action.tool_call is None:
            return _blocked("nothing executed: the action contains no tool call")
        return await next(ticket)

    async def _validate(self, ticket: _Ticket, next: Next) -> ActionOutcome:
        try:
            self.registry.validate(ticket.call)
        except ToolValidationError as exc:
            return _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        return await next(ticket)

    async def _decide(self, ticket: _Ticket, next: Next) -> ActionOutcome:
        denials: list[str] = []
        failure: str | None = None
        asks: list[str] = []
        allowed = False
        for index, decider in enumerate(self._policy.deciders):
            error, answer = await _listen(ticket, decider(ticket.call))
            if _fatal(error):
                raise error  # type: ignore[misc]
            if error is not None:
                failure = failure or f"blocked: decider[{index}] raised {type(error).__name__}"
            elif answer is None:
                pass
            elif not isinstance(answer, Verdict):
                failure = failure or (
                    f"blocked: decider[{index}] returned {type(answer).__name__}, "
                    "not a Verdict or None"
                )
            elif answer.decision is Decision.DENY:
                denials.append(answer.reason)
            elif answer.decision is Decision.ASK:
                asks.append(answer.reason)
            else:
                allowed = True
        if failure is not None:
            return _blocked(failure)
        if denials:
            return _blocked("".join(["blocked by policy", *(f"\n- {r}" for r in denials if r)]))
        if asks or (not allowed and self._policy.default is Decision.ASK):
            ticket.asks, ticket.needs_approval = tuple(asks), True
        elif not allowed and self._policy.default is Decision.DENY:
            return _blocked("blocked by policy")
        return await next(ticket)

    async def _approve(self, ticket: _Ticket, next: Next) -> ActionOutcome:
        if not ticket.needs_approval:
            return await next(ticket)
        approver = self._policy.approver
        if approver is None:
            return _blocked("blocked: approval needed, no approver configured")
        error, answer = await _listen(ticket, approver(ticket.call, ticket.asks))
        if _fatal(error):
            raise error  # type: ignore[misc]
        if error is not None:
            return _blocked(f"blocked: approver raised {type(error).__name__}")
        if answer is True:
            return await next(ticket)
        if answer is False:
            return _blocked("blocked: approver said no")
        return _blocked("blocked: approver gave no boolean True")

    async def _post_process(self, ticket: _Ticket, next: Next) -> ActionOutcome:
        outcome = await next(ticket)
        if outcome.status is not ActionStatus.EXECUTED:
            return outcome
        text = outcome.observation
        for index, post in enumerate(self._policy.post):
            error, text = await _listen(ticket, post(ticket.call, text))
            if _fatal(error):
                raise error  # type: ignore[misc]
            if error is not None:
                return _outcome(
                    ActionStatus.EXECUTED,
                    f"[output withheld: post[{index}] raised {type(error).__name__}]",
                    True,
                )
            if not isinstance(text, str):
                return _outcome(
                    ActionStatus.EXECUTED,
                    f"[output withheld: post[{index}] returned {type(text).__name__}]",
                    True,
                )
        return _outcome(ActionStatus.EXECUTED, text, outcome.observation_is_synthetic)

    async def _chain(self, ticket: _Ticket) -> ActionOutcome:
        call = ticket.call
        handler = self._handlers[call.name]
        assert handler is not None

        async def enter() -> Any:
            if ticket.cancelled:
                raise asyncio.CancelledError
            return await handler(plain_arguments(call))

        def around(
            inner: Proceed, wrapper: Callable[[ToolCall, Proceed], Awaitable[Any]]
        ) -> Proceed:
            async def proceed() -> Any:
                if ticket.cancelled:
                    raise asyncio.CancelledError
                return await wrapper(call, inner)

            return proceed

        innermost: Proceed = enter
        chain = functools.reduce(around, reversed(self._policy.wrappers), innermost)
        error, result = await _listen(ticket, chain())
        if error is None:
            if isinstance(result, str):
                return _outcome(ActionStatus.EXECUTED, result, False)
            raise TypeError(f"tool {call.name!r}: the handler returned a non-str result")
        if _fatal(error):
            raise error
        if isinstance(error, ToolEnvironmentError):
            return _outcome(ActionStatus.ENV_ERROR, _text_of(error), False)
        return _outcome(ActionStatus.EXECUTED, f"{type(error).__name__}: {_text_of(error)}", False)


def factory(registry: ToolRegistry, policy: ToolPolicy | None = None) -> ComposedPolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return ComposedPolicyExecutor(registry, policy)
