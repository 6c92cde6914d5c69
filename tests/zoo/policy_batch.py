"""Batch policy executors for P11: a plain one-call-at-a-time base (`ZooBatchPolicy`, the
stages of `ZooPolicy` per call, in model order) and broken ones modelled on the parallel-call
reports of ``../shared/policy-pipeline.md`` section 3 (class G and the batch items of the
issue's list). Each is certified on P11 only; polyloop's ``registry.batch_executor(policy=)``
is the correct batch reference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

from polyloop import Action, ActionOutcome, ActionStatus, ToolPolicy, ToolRegistry
from zoo.policy_base import ZooPolicy, synthetic

__all__ = ["BROKEN_BATCH_POLICY", "ZooBatchPolicy"]


def _never() -> bool:
    return False


class ZooBatchPolicy:
    """``factory(registry, max_concurrency=N, policy=...)``: each call decided, journalled,
    run and committed in turn."""

    VIOLATES: ClassVar[tuple[str, ...]] = ()
    REPORT: ClassVar[str] = ""

    def __init__(
        self, registry: ToolRegistry, max_concurrency: int = 10, policy: ToolPolicy | None = None
    ) -> None:
        self.one = ZooPolicy(registry, policy or ToolPolicy())
        self.registry = registry

    def rejected(self, action: Action) -> ActionOutcome | None:
        call = action.tool_call
        if call is None:
            return synthetic(ActionStatus.NOT_EXECUTED, "this executor runs tool calls only")
        try:
            self.registry.validate(call)
        except Exception as exc:
            return synthetic(ActionStatus.NOT_EXECUTED, str(exc))
        return None

    async def decide(self, action: Action) -> ActionOutcome | None:
        assert action.tool_call is not None
        return await self.one.decide(action.tool_call, _never)

    async def run(self, index: int, action: Action, journal: Any) -> ActionOutcome:
        call = action.tool_call
        assert call is not None
        if journal is not None:
            await journal.started(index, action)
        outcome = await self.one.chain(call, _never)
        return await self.one.post_process(call, outcome, _never)

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes: list[ActionOutcome] = []
        for index, action in enumerate(actions):
            outcome = self.rejected(action) or await self.decide(action)
            if outcome is None:
                outcome = await self.run(index, action, journal)
            if journal is not None:
                await journal.committed(index, outcome)
            outcomes.append(outcome)
        return tuple(outcomes)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self.registry.names())}


class ConcurrentApprovals(ZooBatchPolicy):
    """Decides (and asks about) every call of the batch at once."""

    VIOLATES = ("P11",)
    REPORT = "microsoft/agent-framework#6910, supabase/supabase#47008 (parallel approvals)"

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        async def decided(action: Action) -> ActionOutcome | None:
            return self.rejected(action) or await self.decide(action)

        first = await asyncio.gather(*(decided(a) for a in actions))
        outcomes = []
        for index, (action, outcome) in enumerate(zip(actions, first, strict=True)):
            if outcome is None:
                outcome = await self.run(index, action, journal)
            if journal is not None:
                await journal.committed(index, outcome)
            outcomes.append(outcome)
        return tuple(outcomes)


class StartedBeforeDeciding(ZooBatchPolicy):
    """Journals started(i) for every accepted call before deciding it, denied ones included."""

    VIOLATES = ("P11",)
    REPORT = "policy-pipeline.md, the issue's list: started journalled for a denied call"

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes: list[ActionOutcome] = []
        for index, action in enumerate(actions):
            outcome = self.rejected(action)
            if outcome is None:
                if journal is not None:
                    await journal.started(index, action)
                outcome = await self.decide(action)
                if outcome is None:
                    call = action.tool_call
                    assert call is not None
                    chained = await self.one.chain(call, _never)
                    outcome = await self.one.post_process(call, chained, _never)
            if journal is not None:
                await journal.committed(index, outcome)
            outcomes.append(outcome)
        return tuple(outcomes)


class DenialStopsTheBatch(ZooBatchPolicy):
    """After a denial, the calls after it are not run."""

    VIOLATES = ("P11",)
    REPORT = "langchain-ai/langchainjs#11391 (a rejection skipped the auto-approved siblings)"

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes: list[ActionOutcome] = []
        stopped = False
        for index, action in enumerate(actions):
            outcome = self.rejected(action)
            if outcome is None and stopped:
                outcome = synthetic(
                    ActionStatus.NOT_EXECUTED, "not run: an earlier call was denied"
                )
            if outcome is None:
                outcome = await self.decide(action)
                stopped = outcome is not None
                if outcome is None:
                    outcome = await self.run(index, action, journal)
            if journal is not None:
                await journal.committed(index, outcome)
            outcomes.append(outcome)
        return tuple(outcomes)


BROKEN_BATCH_POLICY: tuple[type[ZooBatchPolicy], ...] = (
    ConcurrentApprovals,
    StartedBeforeDeciding,
    DenialStopsTheBatch,
)
