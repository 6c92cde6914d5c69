"""A correct tool-call policy executor, written from contract section 11, one method per stage.

Every broken policy executor in ``policy.py`` subclasses :class:`ZooPolicy` and overrides one
method, so the bug is the only difference from an implementation that certifies. Admission is
``ToolRegistry.validate`` (section 5 is not what this zoo plants bugs in); the stages run in a
child task, so a cancellation of the caller is seen even when a listener swallows it, on every
Python the project supports.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

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
)
from zoo.base import thaw

__all__ = ["ZooPolicy", "synthetic"]

Cancelled = Callable[[], bool]


def synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _own(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=False,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def check(cancelled: Cancelled) -> None:
    if cancelled():
        raise asyncio.CancelledError()


class ZooPolicy:
    """A policy executor: factory ``ZooPolicy(registry, policy)``."""

    VIOLATES: ClassVar[tuple[str, ...]] = ()
    REPORT: ClassVar[str] = ""
    """The bug report of ``policy-pipeline.md`` section 3 a broken one is modelled on."""
    DENIED = "the tool policy denied this call"
    REFUSED = "the tool policy denied this call: the approver said no"
    NO_APPROVER = "the tool policy denied this call: approval needed, no approver"
    UNCLEAR = "the tool policy denied this call: the approver's answer was not True"
    WITHHELD = "the observation was withheld"

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy) -> None:
        self.registry = registry
        self.policy = policy
        self.handlers = {spec.name: spec.handler for spec in registry.specs}

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self.registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return synthetic(ActionStatus.NOT_EXECUTED, "this executor runs tool calls only")
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return synthetic(ActionStatus.NOT_EXECUTED, str(exc))
        return await self.guarded(call)

    async def guarded(self, call: ToolCall) -> ActionOutcome:
        seen: list[bool] = []
        child = asyncio.get_running_loop().create_task(self.stages(call, lambda: bool(seen)))
        try:
            await asyncio.wait((child,))
        except asyncio.CancelledError:
            seen.append(True)
            child.cancel()
            while not child.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait((child,))
            if not child.cancelled():
                child.exception()
            raise
        return child.result()

    async def stages(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome:
        denial = await self.decide(call, cancelled)
        if denial is not None:
            return denial
        outcome = await self.chain(call, cancelled)
        return await self.post_process(call, outcome, cancelled)

    # --- deciding ------------------------------------------------------------------------------

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        """Each decider's answer, as ("ok", answer) or ("raised", exc), in decider order."""
        found: list[tuple[int, Any]] = []
        for position, decider in enumerate(self.policy.deciders):
            try:
                answer: Any = ("ok", await decider(call))
            except Exception as exc:
                answer = ("raised", exc)
            check(cancelled)
            found.append((position, answer))
        return found

    def fault(self, position: int, answer: tuple[str, Any]) -> str | None:
        how, value = answer
        if how == "raised":
            return f"decider {position} raised {type(value).__name__}"
        if value is None or isinstance(value, Verdict):
            return None
        return f"decider {position} answered {type(value).__name__}, not a Verdict"

    def combine(self, answers: list[tuple[int, Any]]) -> tuple[str, list[str], list[str]]:
        denials: list[str] = []
        asks: list[str] = []
        allowed = False
        for position, answer in answers:
            fault = self.fault(position, answer)
            if fault is not None:
                denials.append(fault)
                continue
            verdict = answer[1]
            if verdict is None:
                continue
            if verdict.decision is Decision.DENY:
                denials.append(self.deny_text(position, verdict))
            elif verdict.decision is Decision.ASK:
                asks.append(verdict.reason)
            else:
                allowed = True
        if denials:
            return "DENY", denials, asks
        if asks:
            return "ASK", denials, asks
        return ("ALLOW" if allowed else self.policy.default.name), denials, asks

    def deny_text(self, position: int, verdict: Verdict) -> str:
        return verdict.reason or f"decider {position}"

    async def decide(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome | None:
        answers = await self.answers(call, cancelled)
        decided, denials, asks = self.combine(answers)
        if decided == "ALLOW":
            return None
        if decided == "DENY":
            return self.denied(denials)
        return await self.ask(call, tuple(asks), cancelled)

    def denied(self, denials: list[str]) -> ActionOutcome:
        text = f"{self.DENIED}: " + "; ".join(denials) if denials else self.DENIED
        return synthetic(ActionStatus.NOT_EXECUTED, text[:1900])

    async def ask(
        self, call: ToolCall, asks: tuple[str, ...], cancelled: Cancelled
    ) -> ActionOutcome | None:
        approver = self.policy.approver
        if approver is None:
            return synthetic(ActionStatus.NOT_EXECUTED, self.NO_APPROVER)
        try:
            granted = await self.approve(approver, call, asks)
        except Exception as exc:
            check(cancelled)
            return synthetic(
                ActionStatus.NOT_EXECUTED,
                f"{self.DENIED}: the approver raised {type(exc).__name__}",
            )
        check(cancelled)
        return self.granted(granted)

    async def approve(self, approver: Any, call: ToolCall, asks: tuple[str, ...]) -> object:
        return await approver(call, asks)

    def granted(self, granted: object) -> ActionOutcome | None:
        if granted is True:
            return None
        text = self.REFUSED if granted is False else self.UNCLEAR
        return synthetic(ActionStatus.NOT_EXECUTED, text)

    # --- running -------------------------------------------------------------------------------

    def order(self) -> tuple[Any, ...]:
        """The wrappers, outermost first."""
        return tuple(self.policy.wrappers)

    async def enter(self, call: ToolCall) -> object:
        handler = self.handlers[call.name]
        assert handler is not None
        return await handler(thaw(call.arguments))

    def proceed_at(
        self, call: ToolCall, wrappers: tuple[Any, ...], at: int, cancelled: Cancelled
    ) -> Callable[[], Awaitable[object]]:
        async def proceed() -> object:
            check(cancelled)
            if at == len(wrappers):
                return await self.enter(call)
            return await wrappers[at](call, self.proceed_at(call, wrappers, at + 1, cancelled))

        return proceed

    async def chain(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome:
        try:
            result = await self.proceed_at(call, self.order(), 0, cancelled)()
        except ToolEnvironmentError as exc:
            check(cancelled)
            return _own(ActionStatus.ENV_ERROR, str(exc))
        except Exception as exc:
            check(cancelled)
            return _own(ActionStatus.EXECUTED, f"{type(exc).__name__}: {exc}")
        check(cancelled)
        if not isinstance(result, str):
            raise TypeError(
                f"the handler of tool {call.name!r} returned {type(result).__name__}, not str"
            )
        return _own(ActionStatus.EXECUTED, str(result))

    async def post_process(
        self, call: ToolCall, outcome: ActionOutcome, cancelled: Cancelled
    ) -> ActionOutcome:
        if outcome.status is not ActionStatus.EXECUTED:
            return outcome
        observation = outcome.observation
        for position, post in enumerate(self.policy.post):
            try:
                reshaped = await post(call, observation)
            except Exception as exc:
                check(cancelled)
                return self.withheld(position, f"raised {type(exc).__name__}", observation)
            check(cancelled)
            if not isinstance(reshaped, str):
                return self.withheld(position, "returned a non-str", observation)
            observation = str(reshaped)
        return _own(ActionStatus.EXECUTED, observation)

    def withheld(self, position: int, what: str, unprocessed: str) -> ActionOutcome:
        return synthetic(
            ActionStatus.EXECUTED, f"{self.WITHHELD}: post-processor {position} {what}"
        )
