"""Broken policy executors: each is `ZooPolicy` with one planted bug, and names the P clauses
that bug breaks (`VIOLATES`). The per-clause set plants the smallest bug that breaks exactly
one clause; entries with a `REPORT` are modelled on a bug report of
``../shared/policy-pipeline.md`` section 3 (the realistic set).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolValidationError,
    Verdict,
)
from zoo.policy_base import Cancelled, ZooPolicy, _own, check, synthetic

__all__ = ["BROKEN_POLICY", "REALISTIC_POLICY"]

_HAS_CANCELLING = sys.version_info >= (3, 11)
"""`Task.cancelling()` exists: the bugs that misread it can be planted (not on 3.10)."""


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
    REPORT = "cuga-project/cuga-agent#176 (a guard exception was logged and the call proceeded)"

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found = await super().answers(call, cancelled)
        return [(p, ("ok", None) if a[0] == "raised" else a) for p, a in found]


class NoneApproves(ZooPolicy):
    """An approver's None executes the call (P5)."""

    VIOLATES = ("P5",)
    REPORT = "pydantic/pydantic-ai#8060 (a missing approval decision executes the tool)"

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


class CancellingCountsEarlierCancels(ZooPolicy):
    """Reads "is this call cancelled?" as ``Task.cancelling() > 0``: a call made from a task
    that swallowed an earlier cancellation (a cleanup path) is cancelled before it runs, though
    nothing cancelled the task while it awaited execute (P9; 3.11+, which has the count)."""

    VIOLATES = ("P9",)

    async def guarded(self, call: ToolCall) -> ActionOutcome:
        outer: Any = asyncio.current_task()
        seen: list[bool] = []
        child = asyncio.get_running_loop().create_task(
            self.stages(call, lambda: bool(seen) or outer.cancelling() > 0)
        )
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


class CleanupCallsRunUnguarded(ZooPolicy):
    """A call made while its task already counts a cancellation (``Task.cancelling() > 0``, a
    cleanup path) runs its stages inline with no guard, so the cleanup is not cut short; a
    second cancellation that a listener swallows then becomes an outcome (P9; 3.11+)."""

    VIOLATES = ("P9",)

    async def guarded(self, call: ToolCall) -> ActionOutcome:
        task: Any = asyncio.current_task()
        if task is not None and task.cancelling() > 0:
            return await self.stages(call, lambda: False)
        return await super().guarded(call)


class FailingDeciderEndsTheRound(ZooPolicy):
    """Stops consulting deciders at the first one that raises or answers garbage (a crashing
    hook ends the hook loop), but not at a DENY verdict: after a DENY, a raise leaves the
    deciders behind it uncalled (P3: stop right after the first DENY, or call every one)."""

    VIOLATES = ("P3",)

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found: list[tuple[int, Any]] = []
        for position, decider in enumerate(self.policy.deciders):
            try:
                answer: Any = ("ok", await decider(call))
            except Exception as exc:
                answer = ("raised", exc)
            check(cancelled)
            found.append((position, answer))
            if self.fault(position, answer) is not None:
                break
        return found


class FailedRedactionLeaks(ZooPolicy):
    """A post-processor that fails leaves the observation as it was (P10)."""

    VIOLATES = ("P10",)
    REPORT = "anthropics/claude-code#86753 (a dropped PostToolUse rewrite shows the original)"

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


# --- realistic: modelled on policy-pipeline.md section 3 ----------------------------------------


class OrderedWaterfall(ZooPolicy):
    """The first decider that does not abstain decides, as an ordered rule list does."""

    VIOLATES = ("P2", "P3", "P4", "P5", "P6")
    REPORT = "google-gemini/gemini-cli policy tiers (a higher-priority allow beats a deny)"

    def combine(self, answers: list[tuple[int, Any]]) -> tuple[str, list[str], list[str]]:
        for position, answer in answers:
            if self.fault(position, answer) is not None or answer[1] is not None:
                return super().combine([(position, answer)])
        return super().combine([])


class CrashingHookProceeds(ZooPolicy):
    """A decider that raises or answers something unreadable is skipped: the call proceeds."""

    VIOLATES = ("P4",)
    REPORT = "openai/codex#41979 (a crashed or unparseable PreToolUse hook lets the call run)"

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found = await super().answers(call, cancelled)
        return [(p, a if self.fault(p, a) is None else ("ok", None)) for p, a in found]


class HookAllowSkipsTheRules(ZooPolicy):
    """Any decider's ALLOW allows the call, whatever the others say."""

    VIOLATES = ("P3", "P4", "P6")
    REPORT = "anthropics/claude-code#35136 (a PreToolUse allow bypassed deny rules)"

    def combine(self, answers: list[tuple[int, Any]]) -> tuple[str, list[str], list[str]]:
        decided, denials, asks = super().combine(answers)
        allows = any(
            self.fault(p, a) is None and a[1] is not None and a[1].decision.name == "ALLOW"
            for p, a in answers
        )
        return ("ALLOW" if allows else decided), denials, asks


class CachesApprovals(ZooPolicy):
    """Remembers an approval for an identical call and does not ask again."""

    VIOLATES = ("P5",)
    REPORT = "pydantic/pydantic-ai#6241 (one approval bound to two calls)"

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy) -> None:
        super().__init__(registry, policy)
        self.approved: set[str] = set()

    async def ask(
        self, call: ToolCall, asks: tuple[str, ...], cancelled: Cancelled
    ) -> ActionOutcome | None:
        key = repr(call)
        if key in self.approved:
            return None
        refusal = await super().ask(call, asks, cancelled)
        if refusal is None:
            self.approved.add(key)
        return refusal


class ApprovesBeforeValidating(ZooPolicy):
    """Asks the deciders and the approver before validation, then rejects an invalid call."""

    VIOLATES = ("P1",)
    REPORT = "openai/openai-agents-js#1335 (approval asked for calls a guardrail then rejects)"

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return await super().execute(action)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            with contextlib.suppress(Exception):
                await self.decide(call, lambda: False)
            return synthetic(ActionStatus.NOT_EXECUTED, str(exc))
        return await self.guarded(call)


class HooksSeeACopy(ZooPolicy):
    """Hands the deciders and the approver a re-serialised copy of the call, the wrappers and
    the handler the original: what was approved is not the object that runs."""

    VIOLATES = ("P7",)
    REPORT = "pydantic/pydantic-ai#6968 (the approver sees other arguments than the tool runs)"

    async def decide(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome | None:
        return await super().decide(ToolCall(name=call.name, arguments=call.arguments), cancelled)


class RetryOnInterrupt(ZooPolicy):
    """A built-in retry around the handler that also retries an interrupted attempt."""

    VIOLATES = ("P9",)
    REPORT = "langchain-ai/langchain#38722 (ToolRetryMiddleware swallowed the interrupt)"

    async def enter(self, call: ToolCall) -> object:
        try:
            return await super().enter(call)
        except asyncio.CancelledError:
            return await super().enter(call)


class PostProcessesEverything(ZooPolicy):
    """Runs the post-processors on every outcome, denials and ENV_ERROR included."""

    VIOLATES = ("P2", "P6", "P10")
    REPORT = "pydantic/pydantic-ai#5111 (an after-execute hook fired where it should not)"

    async def stages(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome:
        denial = await self.decide(call, cancelled)
        outcome = denial if denial is not None else await self.chain(call, cancelled)
        observation = outcome.observation
        for post in self.policy.post:
            try:
                reshaped = await post(call, observation)
            except Exception:
                break
            if isinstance(reshaped, str):
                observation = reshaped
        return dataclasses.replace(outcome, observation=observation)


class EchoesTheMessage(ZooPolicy):
    """Puts the decider's or the approver's exception message into the denial."""

    VIOLATES = ("P4", "P5")
    REPORT = "policy-pipeline.md item 13 (an exception message echoed in the denial sentence)"

    def fault(self, position: int, answer: tuple[str, Any]) -> str | None:
        text = super().fault(position, answer)
        return f"{text}: {answer[1]}" if text is not None and answer[0] == "raised" else text

    async def ask(
        self, call: ToolCall, asks: tuple[str, ...], cancelled: Cancelled
    ) -> ActionOutcome | None:
        approver = self.policy.approver
        if approver is None:
            return synthetic(ActionStatus.NOT_EXECUTED, self.NO_APPROVER)
        try:
            granted = await approver(call, asks)
        except Exception as exc:
            check(cancelled)
            text = f"{self.DENIED}: the approver raised {type(exc).__name__}: {exc}"
            return synthetic(ActionStatus.NOT_EXECUTED, text)
        check(cancelled)
        return self.granted(granted)


class NoApproverMeansYes(ZooPolicy):
    """A call that needs approval runs when no approver is configured."""

    VIOLATES = ("P5",)
    REPORT = "MCP elicitation degrading to no confirmation (Couchbase MCP server docs)"

    async def ask(
        self, call: ToolCall, asks: tuple[str, ...], cancelled: Cancelled
    ) -> ActionOutcome | None:
        if self.policy.approver is None:
            return None
        return await super().ask(call, asks, cancelled)


class AcceptsANonStrResult(ZooPolicy):
    """Turns a non-str chain result into text instead of raising E9's TypeError."""

    VIOLATES = ("P8",)
    REPORT = "google-gemini/gemini-cli#19505 (an override with no restriction on its format)"

    def proceed_at(
        self, call: ToolCall, wrappers: tuple[Any, ...], at: int, cancelled: Cancelled
    ) -> Any:
        inner = super().proceed_at(call, wrappers, at, cancelled)
        if at:
            return inner

        async def proceed() -> object:
            return str(await inner())

        return proceed


class AbandonsTheApprover(ZooPolicy):
    """Cancelled while the approver is asked, returns at once and leaves the prompt running."""

    VIOLATES = ("P9",)
    REPORT = "agentscope-ai/agentscope#2767 (a cancel while a call waited in middleware)"

    async def approve(self, approver: Any, call: ToolCall, asks: tuple[str, ...]) -> object:
        return await asyncio.shield(asyncio.ensure_future(approver(call, asks)))


class DenialBlocksTheSession(ZooPolicy):
    """After one denial, refuses every later call on the same executor."""

    VIOLATES = ("P6",)
    REPORT = "langchain-ai/langchainjs#11391 (a rejection skipped the auto-approved siblings)"

    blocked = False

    async def decide(self, call: ToolCall, cancelled: Cancelled) -> ActionOutcome | None:
        if self.blocked:
            return self.denied(["an earlier call was denied"])
        denial = await super().decide(call, cancelled)
        if denial is not None and denial.observation.startswith(self.DENIED + ":"):
            self.blocked = True
        return denial


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
    *((CancellingCountsEarlierCancels, CleanupCallsRunUnguarded) if _HAS_CANCELLING else ()),
    FailingDeciderEndsTheRound,
    FailedRedactionLeaks,
    FirstFinishedFaultNamed,
    OrderedWaterfall,
    CrashingHookProceeds,
    HookAllowSkipsTheRules,
    CachesApprovals,
    ApprovesBeforeValidating,
    HooksSeeACopy,
    RetryOnInterrupt,
    PostProcessesEverything,
    EchoesTheMessage,
    NoApproverMeansYes,
    AcceptsANonStrResult,
    AbandonsTheApprover,
    DenialBlocksTheSession,
)
REALISTIC_POLICY: tuple[type[ZooPolicy], ...] = tuple(c for c in BROKEN_POLICY if c.REPORT)
