"""Unusual but correct policy executors: the kit must certify every one of them.

They stress the kit's tolerance, not its vigilance: deciders awaited concurrently, a fixed
order that stops at the first DENY (forwards or backwards), other fixed sentences, and an
approval flow run as a prompt task that the call waits on (the approver is itself a gate).
"""

from __future__ import annotations

import asyncio
from typing import Any

from polyloop import ActionOutcome, ActionStatus, ToolCall, Verdict
from zoo.policy_base import Cancelled, ZooPolicy, check, synthetic

__all__ = ["UNUSUAL_POLICY"]


async def _answer(decider: Any, call: ToolCall) -> tuple[str, Any]:
    try:
        return ("ok", await decider(call))
    except Exception as exc:
        return ("raised", exc)


class ConcurrentDeciders(ZooPolicy):
    """Awaits every decider at once (P3 allows it: each one to its answer, none cancelled)."""

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found = await asyncio.gather(*(_answer(d, call) for d in self.policy.deciders))
        check(cancelled)
        return list(enumerate(found))


class StopsAtFirstDeny(ZooPolicy):
    """One after another in order, stopping right after the first answer that denies."""

    def denies(self, position: int, answer: tuple[str, Any]) -> bool:
        if self.fault(position, answer) is not None:
            return True
        verdict = answer[1]
        return verdict is not None and verdict.decision.name == "DENY"

    async def answers(self, call: ToolCall, cancelled: Cancelled) -> list[tuple[int, Any]]:
        found: list[tuple[int, Any]] = []
        for position in self.visit():
            answer = await _answer(self.policy.deciders[position], call)
            check(cancelled)
            found.append((position, answer))
            if self.denies(position, answer):
                break
        return sorted(found, key=lambda pair: pair[0])

    def visit(self) -> list[int]:
        return list(range(len(self.policy.deciders)))


class BackwardsStopsAtFirstDeny(StopsAtFirstDeny):
    """The last decider first ("any fixed order"), stopping at the first DENY; the denial
    still lists reasons in the order of the deciders."""

    def visit(self) -> list[int]:
        return list(reversed(range(len(self.policy.deciders))))


class OtherSentences(ZooPolicy):
    """Its own fixed sentences, nothing like polyloop's."""

    DENIED = "Blocked by policy. Reasons follow"
    REFUSED = "Blocked: a person declined this action."
    NO_APPROVER = "Blocked: this action needs sign-off and nobody can give it."
    UNCLEAR = "Blocked: sign-off must be an explicit yes."
    WITHHELD = "Output hidden by a failing output filter"

    def fault(self, position: int, answer: tuple[str, Any]) -> str | None:
        how, value = answer
        if how == "raised":
            return f"hook #{position} crashed ({type(value).__name__})"
        if value is None or isinstance(value, Verdict):
            return None
        return f"hook #{position} gave an unreadable answer"

    def withheld(self, position: int, what: str, unprocessed: str) -> ActionOutcome:
        cause = what.replace("raised ", "")
        return synthetic(ActionStatus.EXECUTED, f"{self.WITHHELD} (filter #{position}: {cause})")


class PromptTaskApprover(ZooPolicy):
    """Runs the approver as a prompt task of its own and waits on the answer it posts (the
    approver is itself a gate); cancelled, it cancels the prompt and awaits it."""

    async def approve(self, approver: Any, call: ToolCall, asks: tuple[str, ...]) -> object:
        answer: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        async def prompt() -> None:
            try:
                answer.set_result(await approver(call, asks))
            except Exception as exc:
                answer.set_exception(exc)

        task = asyncio.get_running_loop().create_task(prompt())
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait((task,))
            raise


UNUSUAL_POLICY: tuple[type[ZooPolicy], ...] = (
    ConcurrentDeciders,
    StopsAtFirstDeny,
    BackwardsStopsAtFirstDeny,
    OtherSentences,
    PromptTaskApprover,
)
