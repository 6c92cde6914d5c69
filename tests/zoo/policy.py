"""Broken policy executors: each is `ZooPolicy` with one planted bug, and names the P clauses
that bug breaks (`VIOLATES`). The per-clause set plants the smallest bug that breaks exactly
one clause; entries with a `REPORT` are modelled on a bug report of
``../shared/policy-pipeline.md`` section 3 (the realistic set).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from polyloop import Action, ActionOutcome, ActionStatus, ToolCall, ToolValidationError, Verdict
from zoo.policy_base import Cancelled, ZooPolicy, _own, check, synthetic

__all__ = ["BROKEN_POLICY", "REALISTIC_POLICY"]


# --- one per clause ---------------------------------------------------------------------------


class ListensToRejected(ZooPolicy):
    """Shows a call to the deciders (for the audit log) before validating it (P1)."""

    VIOLATES = ("P1",)

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is not None:
            try:
                self.registry.validate(call)
            except ToolValidationError as exc:
                for decider in self.policy.deciders:
                    with contextlib.suppress(Exception):
                        await decider(call)
                return synthetic(ActionStatus.NOT_EXECUTED, str(exc))
        return await super().execute(action)


class AsksEveryCall(ZooPolicy):
    """Shows every accepted call to the approver (an audit prompt), and uses its answer only
    when the deciders said ASK (P2: the approver only on ASK)."""

    VIOLATES = ("P2",)

    async def decide(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome | None:
        answers = await self.answers(call, cancelled)
        decided, denials, asks = self.combine(answers)
        if decided == "ASK":
            return await self.ask(call, tuple(asks), cancelled)
        if self.policy.approver is not None:
            with contextlib.suppress(Exception):
                await self.policy.approver(call, tuple(asks))
            check(cancelled)
        return None if decided == "ALLOW" else self.denied(denials)


class IgnoresTheDefault(ZooPolicy):
    """With no decider answering, allows the call whatever `default` says (P3)."""

    VIOLATES = ("P3",)

    def combine(self, answers: list[tuple[int, Any]]) -> tuple[str, list[str], list[str]]:
        decided, denials, asks = super().combine(answers)
        return (
            (
                "ALLOW"
                if decided == self.policy.default.name and not asks and not denials
                else decided
            ),
            denials,
            asks,
        )


class ExceptionFailsOpen(ZooPolicy):
    """A decider that raises counts as abstaining (P4)."""

    VIOLATES = ("P4",)

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found = await super().answers(call, cancelled)
        return [(p, ("ok", None) if a[0] == "raised" else a) for p, a in found]


class NoneApproves(ZooPolicy):
    """An approver's None executes the call (P5)."""

    VIOLATES = ("P5",)

    def granted(self, granted: object) -> ActionOutcome | None:
        return super().granted(True if granted is None else granted)


class DenialWithoutReasons(ZooPolicy):
    """The denial names the deciders but drops their reasons (P6)."""

    VIOLATES = ("P6",)

    def deny_text(self, position: int, verdict: Verdict) -> str:
        return f"decider {position}"


class HandlerGetsTheFrozenCall(ZooPolicy):
    """Hands the handler the call's own read-only arguments instead of a plain copy (P7)."""

    VIOLATES = ("P7",)

    async def enter(self, call: ToolCall) -> object:
        handler = self.handlers[call.name]
        assert handler is not None
        return await handler(call.arguments)


class InnermostWrapperFirst(ZooPolicy):
    """Nests the wrappers the other way round: wrappers[-1] outermost (P8)."""

    VIOLATES = ("P8",)

    def order(self) -> tuple[Any, ...]:
        return tuple(reversed(self.policy.wrappers))


class SwallowedCancelBecomesAnOutcome(ZooPolicy):
    """Cancelled, returns whatever the stages made of it when a listener swallowed it (P9)."""

    VIOLATES = ("P9",)

    async def guarded(self, call: ToolCall) -> ActionOutcome:
        child = asyncio.get_running_loop().create_task(self.stages(call, lambda: False))
        try:
            await asyncio.wait((child,))
        except asyncio.CancelledError:
            child.cancel()
            while not child.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait((child,))
            if child.cancelled() or child.exception() is not None:
                raise
        return child.result()


class FailedRedactionLeaks(ZooPolicy):
    """A post-processor that fails leaves the observation as it was (P10)."""

    VIOLATES = ("P10",)

    def withheld(self, position: int, what: str, unprocessed: str) -> ActionOutcome:
        return _own(ActionStatus.EXECUTED, unprocessed)


class FirstFinishedFaultNamed(ZooPolicy):
    """Awaits the deciders concurrently and, of several failing ones, names the one that
    failed first in time (P12)."""

    VIOLATES = ("P12",)

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        self.finished: list[int] = []

        async def one(position: int, decider: Any) -> tuple[int, Any]:
            try:
                answer: Any = ("ok", await decider(call))
            except Exception as exc:
                answer = ("raised", exc)
            self.finished.append(position)
            return position, answer

        found = await asyncio.gather(*(one(p, d) for p, d in enumerate(self.policy.deciders)))
        check(cancelled)
        return list(found)

    def combine(self, answers: list[tuple[int, Any]]) -> tuple[str, list[str], list[str]]:
        decided, denials, asks = super().combine(answers)
        faults = [p for p in self.finished if self.fault(p, dict(answers)[p]) is not None]
        if len(faults) > 1:
            keep = self.fault(faults[0], dict(answers)[faults[0]])
            denials = [d for d in denials if not d.startswith("decider ") or d == keep]
        return decided, denials, asks


BROKEN_POLICY: tuple[type[ZooPolicy], ...] = (
    ListensToRejected,
    AsksEveryCall,
    IgnoresTheDefault,
    ExceptionFailsOpen,
    NoneApproves,
    DenialWithoutReasons,
    HandlerGetsTheFrozenCall,
    InnermostWrapperFirst,
    SwallowedCancelBecomesAnOutcome,
    FailedRedactionLeaks,
    FirstFinishedFaultNamed,
)
REALISTIC_POLICY: tuple[type[ZooPolicy], ...] = ()
