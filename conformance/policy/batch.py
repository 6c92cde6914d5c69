"""P11 on a batch policy factory, ``factory(registry, max_concurrency=N, policy=...)``, and
the one-call view through which such a factory answers P1-P10 and P12 (B4: a batch of one is
``execute``).

A batch example is a list of calls, each with its own scripted answers: every decider and the
approver read the call's ``id`` and answer what the plan says for that call, so one policy
decides several calls differently. Listeners, handlers and the journal write one trace, with
the call's index where the single-call trace has a position.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance._core.one_call import OneCallBatch
from conformance.policy.harness import (
    TOOL,
    Recorder,
    Schedule,
    Stack,
    play_awaitable,
)
from conformance.policy.judge import Kit, fail_first, show
from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    Decision,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

__all__ = ["BatchCase", "batch_cases", "check_P11", "one_call_factory"]

KEYWORD = "max_concurrency"
CAP_FOR_ONE_CALL = 4


def one_call_factory(factory: Callable[..., Any]) -> Callable[..., Any]:
    """The ``factory(registry, policy)`` that P1-P10 and P12 certify for a batch factory."""

    def make(registry: ToolRegistry, policy: ToolPolicy) -> Any:
        return OneCallBatch(factory(registry, **{KEYWORD: CAP_FOR_ONE_CALL, "policy": policy}))

    make.__qualname__ = getattr(factory, "__qualname__", "factory")
    return make


@dataclass(frozen=True)
class Plan:
    """One call of a batch: valid or rejected, each decider's answer, the approver's."""

    valid: bool = True
    answers: tuple[str, ...] = ()
    approve: bool = True

    def decision(self) -> str:
        for kind in ("deny", "ask", "allow"):
            if kind in self.answers:
                return kind.upper()
        return "ALLOW"

    def allowed(self) -> bool:
        decided = self.decision()
        return decided == "ALLOW" or (decided == "ASK" and self.approve)


@dataclass(frozen=True)
class BatchCase:
    plans: tuple[Plan, ...]
    deciders: int = 1
    cap: int = 2
    schedule: Schedule = field(default_factory=Schedule)

    def describe(self) -> str:
        calls = "; ".join(
            f"call {i}: "
            + (f"answers {list(p.answers)}, approver {p.approve}" if p.valid else "rejected")
            for i, p in enumerate(self.plans)
        )
        return (
            f"a batch of {len(self.plans)} (max_concurrency={self.cap}), {self.deciders} "
            f"decider(s), default ALLOW; {calls}; {self.schedule.describe()}"
        )

    def actions(self) -> list[Action]:
        return [
            Action(
                tool_call=ToolCall(
                    name=TOOL if plan.valid else "no_such_tool", arguments={"id": index}
                )
            )
            for index, plan in enumerate(self.plans)
        ]


class _BatchListeners:
    def __init__(self, case: BatchCase, recorder: Recorder) -> None:
        self.case = case
        self.recorder = recorder

    def plan(self, call: ToolCall) -> tuple[int, Plan]:
        index = int(call.arguments["id"])
        return index, self.case.plans[index]

    def decider(self, position: int) -> Callable[[ToolCall], Any]:
        async def decider(call: ToolCall) -> Verdict | None:
            index, plan = self.plan(call)
            await self.step("decide", index)
            kind = plan.answers[position] if position < len(plan.answers) else "abstain"
            if kind == "abstain":
                return None
            return Verdict(decision=Decision[kind.upper()], reason=f"call-{index}-{kind}")

        return decider

    async def approver(self, call: ToolCall, reasons: tuple[str, ...]) -> bool:
        index, plan = self.plan(call)
        await self.step("approve", index)
        return plan.approve

    async def handler(self, arguments: Any) -> str:
        index = int(arguments["id"])
        await self.step("handler", index)
        return f"handler-out:{index}"

    async def step(self, stage: str, index: int) -> None:
        self.recorder.trace.append(("call", stage, index))
        try:
            await self.recorder.hold(stage, index)
        finally:
            self.recorder.trace.append(("end", stage, index))

    async def started(self, index: int, action: Action) -> None:
        self.recorder.trace.append(("started", "journal", index))

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        self.recorder.trace.append(("committed", "journal", index))


@st.composite
def batch_cases(draw: Any) -> BatchCase:
    deciders = draw(st.integers(1, 2))
    answer = st.sampled_from(("abstain", "allow", "ask", "deny"))
    plans = draw(
        st.lists(
            st.builds(
                Plan,
                st.booleans().map(lambda b: not b),
                st.lists(answer, min_size=deciders, max_size=deciders).map(tuple),
                st.booleans(),
            ),
            min_size=1,
            max_size=4,
        )
    )
    ranks = draw(st.lists(st.integers(0, 7), max_size=8).map(tuple))
    return BatchCase(tuple(plans), deciders, draw(st.integers(1, 4)), Schedule(ranks=ranks))


def _span(trace: list[tuple[str, str, int]], index: int) -> tuple[int, int] | None:
    at = [
        i
        for i, (_, stage, owner) in enumerate(trace)
        if stage in ("decide", "approve") and owner == index
    ]
    return (at[0], at[-1]) if at else None


async def check_P11(kit: Kit, case: BatchCase) -> None:
    """P11: deciding is per call and in model order; it ends before started(i); a call not
    allowed takes no slot and gets no started; a rejected call reaches no listener."""
    assert kit.batch is not None
    recorder = Recorder(Stack(), case.schedule)
    listeners = _BatchListeners(case, recorder)
    policy = ToolPolicy(
        deciders=tuple(listeners.decider(p) for p in range(case.deciders)),
        approver=listeners.approver,
    )
    spec = ToolSpec(
        name=TOOL,
        description="The kit's probe.",
        parameters={"type": "object", "properties": {"id": {"type": "integer"}}},
        handler=listeners.handler,
        concurrency_safe=True,
    )
    executor = kit.build_batch(ToolRegistry([spec]), case.cap, policy)
    played = await play_awaitable(
        executor.execute_batch(case.actions(), listeners), recorder, kit.touch, kit.deadline
    )
    trace = recorder.trace
    spans = {i: _span(trace, i) for i in range(len(case.plans))}
    seen = [(i, s) for i, s in spans.items() if s is not None]
    for (i, one), (j, two) in itertools.pairwise(seen):
        fail_first(
            (
                two[0] < one[1],
                f"the deciding stages of call {j} started before those of call {i} ended",
                "deciding per call, in model order",
                f"trace {trace}",
            )
        )
    for i, plan in enumerate(case.plans):
        started = ("started", "journal", i) in trace
        entered = ("call", "handler", i) in trace
        span = spans[i]
        fail_first(
            (
                not plan.valid and span is not None,
                f"rejected call {i} reached a listener",
                "no listener for a rejected call",
                f"trace {trace}",
            ),
            (
                plan.valid and not plan.allowed() and (started or entered),
                f"call {i}, not allowed, was journalled as started or entered",
                "no started, no handler",
                f"trace {trace}",
            ),
            (
                plan.valid and plan.allowed() and not entered,
                f"call {i}, allowed, never ran",
                "every allowed call runs (a denial is no stop)",
                f"trace {trace}",
            ),
            (
                started and span is not None and trace.index(("started", "journal", i)) < span[1],
                f"started({i}) came before call {i}'s deciding ended",
                "deciding ends before started(i)",
                f"trace {trace}",
            ),
        )
    out = played.returned
    if isinstance(out, tuple) and len(out) == len(case.plans):
        for i, plan in enumerate(case.plans):
            o = out[i]
            denied = plan.valid and not plan.allowed()
            fail_first(
                (
                    denied
                    and isinstance(o, ActionOutcome)
                    and (
                        o.status is not ActionStatus.NOT_EXECUTED or not o.observation_is_synthetic
                    ),
                    f"call {i}, not allowed, is not a synthetic NOT_EXECUTED outcome",
                    "NOT_EXECUTED, synthetic",
                    show(played),
                )
            )
