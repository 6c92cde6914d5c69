"""Correct policy executor 5: one class per stage, a pipeline of stage objects.

Written from CONTRACT.md sections 5, 6 and 11 alone. `DecideStage`, `ApproveStage`,
`HandlerStage` and `PostStage` each answer "finished with this outcome" or "go on" (`None`).
The deciders run concurrently, one task each, all awaited to their answer (P3: none is
cancelled because another denied). The stages of a call run in one inner task; `execute` waits
on it through `asyncio.shield`, so a cancellation that a listener swallows still reaches it: it
sets `Ticket.stopped`, forwards the cancellation (again on every further cancel), waits for the
inner task to end and raises `CancelledError` (P9).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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

_MAX = 1999


@dataclass
class Ticket:
    """One accepted call on its way through the stages."""

    call: ToolCall
    stopped: bool = False
    asks: tuple[str, ...] = ()
    needs_approval: bool = False
    executed: ActionOutcome | None = None

    def checkpoint(self) -> None:
        if self.stopped:
            raise asyncio.CancelledError


class Stage(Protocol):
    async def run(self, ticket: Ticket) -> ActionOutcome | None: ...


def make_outcome(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def denied(text: str) -> ActionOutcome:
    if len(text) > _MAX:
        text = text[: _MAX - 1] + "…"
    return make_outcome(ActionStatus.NOT_EXECUTED, text, True)


async def _capture(awaitable: Awaitable[Any]) -> tuple[bool, Any]:
    try:
        return True, await awaitable
    except BaseException as exc:
        return False, exc


async def _settle(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Wait until every task has ended, forwarding each further cancellation to them."""
    while not all(task.done() for task in tasks):
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()


class DecideStage:
    def __init__(self, deciders: Sequence[Callable[[ToolCall], Awaitable[Any]]], default: Decision):
        self._deciders = tuple(deciders)
        self._default = default

    async def run(self, ticket: Ticket) -> ActionOutcome | None:
        tasks = [asyncio.ensure_future(_capture(d(ticket.call))) for d in self._deciders]
        try:
            if tasks:
                await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await _settle(tasks)
            raise
        ticket.checkpoint()
        answers: list[tuple[bool, Any]] = [task.result() for task in tasks]
        for ok, value in answers:
            if not ok and not isinstance(value, Exception):
                raise value
        return self._combine(ticket, answers)

    def _combine(self, ticket: Ticket, answers: list[tuple[bool, Any]]) -> ActionOutcome | None:
        for position, (ok, value) in enumerate(answers):
            if not ok:
                return denied(f"Denied: decider {position} failed ({type(value).__name__}).")
            if value is not None and not isinstance(value, Verdict):
                return denied(
                    f"Denied: decider {position} returned something that is not a verdict."
                )
        verdicts = [value for _, value in answers if value is not None]
        decisions = {v.decision for v in verdicts}
        if Decision.DENY in decisions:
            reasons = [v.reason for v in verdicts if v.decision is Decision.DENY and v.reason]
            tail = f" Reasons: {' | '.join(reasons)}" if reasons else ""
            return denied("Denied by the tool policy." + tail)
        if Decision.ASK in decisions:
            ticket.asks = tuple(v.reason for v in verdicts if v.decision is Decision.ASK)
            ticket.needs_approval = True
            return None
        if Decision.ALLOW in decisions or self._default is Decision.ALLOW:
            return None
        if self._default is Decision.ASK:
            ticket.needs_approval = True
            return None
        return denied("Denied by the tool policy.")


class ApproveStage:
    def __init__(self, approver: Callable[[ToolCall, tuple[str, ...]], Awaitable[Any]] | None):
        self._approver = approver

    async def run(self, ticket: Ticket) -> ActionOutcome | None:
        if not ticket.needs_approval:
            return None
        if self._approver is None:
            return denied("Denied: approval is required and no approver exists.")
        ticket.checkpoint()
        try:
            answer = await self._approver(ticket.call, ticket.asks)
        except Exception as exc:
            return denied(f"Denied: the approver failed ({type(exc).__name__}).")
        ticket.checkpoint()
        if answer is True:
            return None
        if answer is False:
            return denied("Denied: the approver refused.")
        return denied("Denied: the approver did not answer True.")


class HandlerStage:
    def __init__(
        self,
        handlers: Mapping[str, Callable[[dict[str, Any]], Awaitable[Any]]],
        wrappers: Sequence[Callable[[ToolCall, Callable[[], Awaitable[Any]]], Awaitable[Any]]],
    ):
        self._handlers = handlers
        self._wrappers = tuple(wrappers)

    def _proceed(self, ticket: Ticket, level: int) -> Callable[[], Awaitable[Any]]:
        async def proceed() -> Any:
            ticket.checkpoint()
            if level < len(self._wrappers):
                return await self._wrappers[level](ticket.call, self._proceed(ticket, level + 1))
            return await self._handlers[ticket.call.name](plain_arguments(ticket.call))

        return proceed

    async def run(self, ticket: Ticket) -> ActionOutcome | None:
        ticket.checkpoint()
        try:
            result = await self._proceed(ticket, 0)()
        except ToolEnvironmentError as exc:
            return make_outcome(ActionStatus.ENV_ERROR, _message(exc), False)
        except Exception as exc:
            ticket.executed = make_outcome(
                ActionStatus.EXECUTED, f"{type(exc).__name__}: {_message(exc)}", False
            )
            return None
        ticket.checkpoint()
        if not isinstance(result, str):
            raise TypeError(
                f"tool {ticket.call.name!r} returned {type(result).__name__} instead of str"
            )
        ticket.executed = make_outcome(ActionStatus.EXECUTED, result, False)
        return None


class PostStage:
    def __init__(self, post: Sequence[Callable[[ToolCall, str], Awaitable[Any]]]):
        self._post = tuple(post)

    async def run(self, ticket: Ticket) -> ActionOutcome | None:
        executed = ticket.executed
        assert executed is not None
        text = executed.observation
        for position, post in enumerate(self._post):
            ticket.checkpoint()
            try:
                text = await post(ticket.call, text)
            except Exception as exc:
                return make_outcome(
                    ActionStatus.EXECUTED,
                    f"Observation withheld: post-processor {position} failed "
                    f"({type(exc).__name__}).",
                    True,
                )
            if not isinstance(text, str):
                return make_outcome(
                    ActionStatus.EXECUTED,
                    f"Observation withheld: post-processor {position} returned a value "
                    "that is not text.",
                    True,
                )
        ticket.checkpoint()
        return make_outcome(ActionStatus.EXECUTED, text, executed.observation_is_synthetic)


def _message(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


class StagedPolicyExecutor:
    """Runs the stage objects in order; the first that answers an outcome ends the call."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None) -> None:
        policy = ToolPolicy() if policy is None else policy
        if not isinstance(policy, ToolPolicy):
            raise TypeError(f"policy must be a ToolPolicy, not {type(policy).__name__}")
        handlers = {}
        for spec in registry.specs:
            if spec.handler is None:
                raise ValueError(
                    "tools without a handler: "
                    + ", ".join(s.name for s in registry.specs if s.handler is None)
                )
            handlers[spec.name] = spec.handler
        self.registry = registry
        self._stages: tuple[Stage, ...] = (
            DecideStage(policy.deciders, policy.default),
            ApproveStage(policy.approver),
            HandlerStage(handlers, policy.wrappers),
            PostStage(policy.post),
        )

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return denied("The action is not a tool call; nothing was run.")
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return make_outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        ticket = Ticket(call=call)
        inner = asyncio.ensure_future(_capture(self._through_stages(ticket)))
        try:
            ok, value = await asyncio.shield(inner)
        except asyncio.CancelledError:
            ticket.stopped = True
            inner.cancel()
            await _settle([inner])
            raise
        if not ok:
            raise value
        result: ActionOutcome = value
        return result

    async def _through_stages(self, ticket: Ticket) -> ActionOutcome:
        for stage in self._stages:
            outcome = await stage.run(ticket)
            if outcome is not None:
                return outcome
        raise AssertionError("PostStage always answers")  # pragma: no cover


def factory(registry: ToolRegistry, policy: ToolPolicy | None = None) -> StagedPolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return StagedPolicyExecutor(registry, policy)
