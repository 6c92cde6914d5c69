"""Correct policy executor 3: an explicit state machine over a fixed list of stages.

Written from CONTRACT.md sections 5, 6 and 11 alone. Deciders are awaited one at a time in a
fixed order that is deliberately *not* `deciders` order (last to first), stopping at the first
DENY, which P3 permits; ASK reasons are still handed to the approver in decider order. The
machine runs in one inner task; `execute` waits on it without cancelling it, so a cancellation
swallowed by any listener still reaches `execute`, which raises the stop flag, forwards the
cancellation, waits for the machine to end and raises `CancelledError` (P9).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
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


class _State(enum.Enum):
    DECIDE = "decide"
    APPROVE = "approve"
    RUN = "run"
    POST = "post"
    DONE = "done"


@dataclass
class _Machine:
    call: ToolCall
    state: _State = _State.DECIDE
    stopped: bool = False
    asks: dict[int, str] = field(default_factory=dict)
    allowed_by_verdict: bool = False
    outcome: ActionOutcome | None = None
    failure: BaseException | None = None

    def guard(self) -> None:
        if self.stopped:
            raise asyncio.CancelledError


def _final(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    if synthetic and len(text) >= 2000:
        text = text[:1996] + "..."
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _not_executed(text: str) -> ActionOutcome:
    return _final(ActionStatus.NOT_EXECUTED, text, True)


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


class StateMachinePolicyExecutor:
    """Each state is one method; `_advance` maps a state to the method that leaves it."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None) -> None:
        if policy is not None and not isinstance(policy, ToolPolicy):
            raise TypeError("policy= takes a ToolPolicy or None")
        without = [s.name for s in registry.specs if s.handler is None]
        if without:
            raise ValueError(f"no handler for: {', '.join(without)}")
        self.registry = registry
        self._policy = policy or ToolPolicy()
        self._advance: dict[_State, Callable[[_Machine], Awaitable[None]]] = {
            _State.DECIDE: self._decide,
            _State.APPROVE: self._approve,
            _State.RUN: self._run,
            _State.POST: self._post,
        }

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(spec.name for spec in self.registry.specs)}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return _not_executed("No tool call was given, so nothing was executed.")
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return _final(ActionStatus.NOT_EXECUTED, str(exc), True)
        machine = _Machine(call=call)
        task = asyncio.ensure_future(self._drive(machine))
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            machine.stopped = True
            while not task.done():
                task.cancel()
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    continue
            raise
        task.result()
        if machine.failure is not None:
            raise machine.failure
        assert machine.outcome is not None
        return machine.outcome

    async def _drive(self, machine: _Machine) -> None:
        try:
            while machine.state is not _State.DONE:
                machine.guard()
                await self._advance[machine.state](machine)
                machine.guard()
        except BaseException as exc:
            machine.failure = exc

    def _deny(self, machine: _Machine, text: str) -> None:
        machine.outcome = _not_executed(text)
        machine.state = _State.DONE

    async def _decide(self, machine: _Machine) -> None:
        deciders = self._policy.deciders
        for position in reversed(range(len(deciders))):
            machine.guard()
            try:
                answer = await deciders[position](machine.call)
            except Exception as exc:
                text = f"Policy denied the call: decider at position {position} raised "
                return self._deny(machine, text + f"{type(exc).__name__}.")
            machine.guard()
            if answer is None:
                continue
            if not isinstance(answer, Verdict):
                text = f"Policy denied the call: decider at position {position} returned "
                return self._deny(machine, text + "an unrecognised answer.")
            if answer.decision is Decision.DENY:
                suffix = f" Reason: {answer.reason}" if answer.reason else ""
                return self._deny(machine, "Policy denied the call." + suffix)
            if answer.decision is Decision.ASK:
                machine.asks[position] = answer.reason
            else:
                machine.allowed_by_verdict = True
        if machine.asks:
            machine.state = _State.APPROVE
        elif machine.allowed_by_verdict:
            machine.state = _State.RUN
        else:
            machine.state = {
                Decision.ALLOW: _State.RUN,
                Decision.ASK: _State.APPROVE,
                Decision.DENY: _State.DONE,
            }[self._policy.default]
            if machine.state is _State.DONE:
                self._deny(machine, "Policy denied the call.")
        return None

    async def _approve(self, machine: _Machine) -> None:
        approver = self._policy.approver
        if approver is None:
            return self._deny(machine, "Policy required approval, but no approver is set.")
        reasons = tuple(machine.asks[p] for p in sorted(machine.asks))
        try:
            answer = await approver(machine.call, reasons)
        except Exception as exc:
            return self._deny(machine, f"The approver failed ({type(exc).__name__}).")
        if answer is True:
            machine.state = _State.RUN
        elif answer is False:
            self._deny(machine, "The approver declined the call.")
        else:
            self._deny(machine, "The approver's answer was not a clear yes.")
        return None

    async def _run(self, machine: _Machine) -> None:
        call = machine.call
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        handler = spec.handler
        wrappers = self._policy.wrappers

        def proceed_at(level: int) -> Callable[[], Awaitable[Any]]:
            async def proceed() -> Any:
                machine.guard()
                if level == len(wrappers):
                    return await handler(plain_arguments(call))
                return await wrappers[level](call, proceed_at(level + 1))

            return proceed

        machine.state = _State.DONE
        try:
            result = await proceed_at(0)()
        except ToolEnvironmentError as exc:
            machine.outcome = _final(ActionStatus.ENV_ERROR, _safe_str(exc), False)
            return
        except Exception as exc:
            text = f"{type(exc).__name__}: {_safe_str(exc)}"
            machine.outcome = _final(ActionStatus.EXECUTED, text, False)
        else:
            machine.guard()
            if not isinstance(result, str):
                raise TypeError(
                    f"handler of tool {call.name!r} returned {type(result).__name__}, expected str"
                )
            machine.outcome = _final(ActionStatus.EXECUTED, result, False)
        machine.state = _State.POST

    async def _post(self, machine: _Machine) -> None:
        assert machine.outcome is not None
        text = machine.outcome.observation
        machine.state = _State.DONE
        for position, post in enumerate(self._policy.post):
            machine.guard()
            try:
                text = await post(machine.call, text)
            except Exception as exc:
                machine.outcome = _final(
                    ActionStatus.EXECUTED,
                    f"Output suppressed: post-processor at position {position} raised "
                    f"{type(exc).__name__}.",
                    True,
                )
                return
            if not isinstance(text, str):
                machine.outcome = _final(
                    ActionStatus.EXECUTED,
                    f"Output suppressed: post-processor at position {position} did not "
                    "return text.",
                    True,
                )
                return
        machine.outcome = _final(ActionStatus.EXECUTED, text, False)


def factory(registry: ToolRegistry, policy: ToolPolicy | None = None) -> StateMachinePolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return StateMachinePolicyExecutor(registry, policy)
