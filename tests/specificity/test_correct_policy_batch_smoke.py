"""Light smoke tests of the independent policy batch executor (sections 10 and 11, P11)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchExecutor,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

from .correct_policy import BATCH_FACTORIES, FACTORIES

BatchFactory = Callable[..., BatchExecutor]


class Journal:
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.outcomes: dict[int, ActionOutcome] = {}

    async def started(self, index: int, action: Action) -> None:
        self.events.append(("started", index))

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        self.events.append(("committed", index))
        self.outcomes[index] = outcome


class Tools:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.active = 0
        self.peak = 0
        self.gate = asyncio.Event()

        async def read(args: dict[str, Any]) -> str:
            return await self._run("read", args)

        async def write(args: dict[str, Any]) -> str:
            return await self._run("write", args)

        async def env(args: dict[str, Any]) -> str:
            self.log.append("env")
            raise ToolEnvironmentError("down")

        async def number(args: dict[str, Any]) -> Any:
            return 3

        def spec(name: str, handler: Any, safe: bool) -> ToolSpec:
            return ToolSpec(
                name=name,
                description=name,
                parameters={"type": "object"},
                handler=handler,
                concurrency_safe=safe,
            )

        self.registry = ToolRegistry(
            [
                spec("read", read, True),
                spec("write", write, False),
                spec("env", env, False),
                spec("number", number, True),
            ]
        )

    async def _run(self, name: str, args: dict[str, Any]) -> str:
        self.log.append(f"{name}>{args.get('n')}")
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            if args.get("wait"):
                await self.gate.wait()
            for _ in range(3):
                await asyncio.sleep(0)
        finally:
            self.active -= 1
        return f"{name} {args.get('n')}"


def act(name: str, **arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


@pytest.fixture(params=sorted(BATCH_FACTORIES))
def make(request: pytest.FixtureRequest) -> BatchFactory:
    return BATCH_FACTORIES[request.param]


def test_B1_empty_batch(make: BatchFactory) -> None:
    assert asyncio.run(make(Tools().registry, 2, ToolPolicy()).execute_batch([])) == ()


def test_P11_denied_call_resolves_in_place_and_safe_calls_overlap(make: BatchFactory) -> None:
    tools = Tools()
    decided: list[Any] = []

    async def decider(call: ToolCall) -> Verdict | None:
        decided.append(dict(call.arguments)["n"])
        if dict(call.arguments)["n"] == 1:
            return Verdict(decision=Decision.DENY, reason="no one")
        return None

    journal = Journal()
    actions = [
        act("read", n=0, wait=True),
        act("read", n=1),
        act("nope"),
        act("read", n=3, wait=True),
        act("read", n=4, wait=True),
    ]
    executor = make(tools.registry, 3, ToolPolicy(deciders=(decider,)))

    async def scenario() -> tuple[ActionOutcome, ...]:
        task = asyncio.ensure_future(executor.execute_batch(actions, journal))
        for _ in range(1000):  # B8: all three safe calls get entered while the gate is shut
            if tools.active == 3:
                break
            await asyncio.sleep(0)
        tools.gate.set()
        return await task

    out = asyncio.run(scenario())
    assert [o.status for o in out] == [
        ActionStatus.EXECUTED,
        ActionStatus.NOT_EXECUTED,
        ActionStatus.NOT_EXECUTED,
        ActionStatus.EXECUTED,
        ActionStatus.EXECUTED,
    ]
    assert "no one" in out[1].observation and out[0].observation == "read 0"
    assert out[1].observation_is_synthetic and out[2].observation_is_synthetic
    assert decided == [0, 1, 3, 4] and tools.peak == 3
    assert [i for kind, i in journal.events if kind == "committed"] == [0, 1, 2, 3, 4]
    assert [i for kind, i in journal.events if kind == "started"] == [0, 3, 4]
    assert all(journal.outcomes[i] == out[i] for i in range(5))


def test_B6_exclusive_call_runs_alone(make: BatchFactory) -> None:
    tools = Tools()
    actions = [act("read", n=0), act("write", n=1), act("read", n=2), act("read", n=3)]
    asyncio.run(make(tools.registry, 10, ToolPolicy()).execute_batch(actions))
    assert tools.log == ["read>0", "write>1", "read>2", "read>3"]


def test_B13_env_error_stops_later_calls(make: BatchFactory) -> None:
    tools = Tools()
    actions = [act("read", n=0), act("env"), act("read", n=2), act("nope")]
    out = asyncio.run(make(tools.registry, 10, ToolPolicy()).execute_batch(actions))
    assert [o.status for o in out] == [
        ActionStatus.EXECUTED,
        ActionStatus.ENV_ERROR,
        ActionStatus.NOT_EXECUTED,
        ActionStatus.NOT_EXECUTED,
    ]
    assert "1" in out[2].observation and out[2].observation_is_synthetic
    assert "read>2" not in tools.log


def test_B14_P9_cancel_interrupts_running_and_commits_everything(make: BatchFactory) -> None:
    tools = Tools()
    journal = Journal()

    async def swallow(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        try:
            return await proceed()
        except asyncio.CancelledError:
            return "pretend"

    actions = [act("read", n=0, wait=True), act("read", n=1, wait=True), act("write", n=2)]

    async def scenario() -> None:
        executor = make(tools.registry, 10, ToolPolicy(wrappers=(swallow,)))
        task = asyncio.ensure_future(executor.execute_batch(actions, journal))
        while tools.active < 2:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    out = journal.outcomes
    assert [out[i].status for i in range(3)] == [
        ActionStatus.ENV_ERROR,
        ActionStatus.ENV_ERROR,
        ActionStatus.NOT_EXECUTED,
    ]
    assert "pretend" not in out[0].observation and "write>2" not in tools.log


def test_B15_handler_base_exception_reraised_same_object(make: BatchFactory) -> None:
    class Halt(BaseException):
        pass

    halt = Halt()

    async def halting(args: dict[str, Any]) -> str:
        raise halt

    async def fine(args: dict[str, Any]) -> str:
        return "fine"

    registry = ToolRegistry(
        [
            ToolSpec(name="h", description="h", parameters={}, handler=halting),
            ToolSpec(name="f", description="f", parameters={}, handler=fine),
        ]
    )
    journal = Journal()
    with pytest.raises(Halt) as caught:
        asyncio.run(make(registry, 10, None).execute_batch([act("h"), act("f")], journal))
    assert caught.value is halt
    assert journal.outcomes[0].status is ActionStatus.ENV_ERROR
    assert journal.outcomes[1].status is ActionStatus.NOT_EXECUTED
    assert "Halt" in journal.outcomes[1].observation


def test_B16_E9_non_str_raises_type_error(make: BatchFactory) -> None:
    tools = Tools()
    with pytest.raises(TypeError, match="number"):
        asyncio.run(make(tools.registry, 10, None).execute_batch([act("number")]))


@pytest.mark.parametrize("single", sorted(FACTORIES))
def test_B4_batch_of_one_matches_execute(make: BatchFactory, single: str) -> None:
    async def ask(call: ToolCall) -> Verdict:
        return Verdict(decision=Decision.ASK, reason="?")

    async def no(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        return False

    async def post(call: ToolCall, text: str) -> str:
        return text.upper()

    for policy in (ToolPolicy(post=(post,)), ToolPolicy(deciders=(ask,), approver=no)):
        for action in (act("read", n=1), act("env"), act("nope"), Action(code="x")):
            one = asyncio.run(FACTORIES[single](Tools().registry, policy).execute(action))
            (batch,) = asyncio.run(make(Tools().registry, 1, policy).execute_batch([action]))
            assert (batch.status, batch.observation_is_synthetic) == (
                one.status,
                one.observation_is_synthetic,
            )
            if not one.observation_is_synthetic:
                assert batch.observation == one.observation


def test_P4_B15_decider_base_exception_stops_and_that_call_is_not_run(
    make: BatchFactory,
) -> None:
    class Halt(BaseException):
        pass

    halt = Halt()
    tools = Tools()

    async def decider(call: ToolCall) -> None:
        if dict(call.arguments)["n"] == 1:
            raise halt

    journal = Journal()
    actions = [act("read", n=0), act("read", n=1), act("nope"), act("read", n=3)]
    with pytest.raises(Halt) as caught:
        asyncio.run(
            make(tools.registry, 10, ToolPolicy(deciders=(decider,))).execute_batch(
                actions, journal
            )
        )
    assert caught.value is halt and "read>1" not in tools.log and "read>3" not in tools.log
    statuses = [journal.outcomes[i].status for i in range(4)]
    # call 0 may still be running when the stop comes (B15 cancels it, like B14) or be done
    assert statuses[0] in (ActionStatus.EXECUTED, ActionStatus.ENV_ERROR)
    assert statuses[1:] == [ActionStatus.NOT_EXECUTED] * 3
    assert "Halt" in journal.outcomes[1].observation and "Halt" in journal.outcomes[3].observation
    assert "Halt" not in journal.outcomes[2].observation  # rejected keeps its E2 text


def test_B16_journal_fault_raises_and_commits_nothing_more(make: BatchFactory) -> None:
    tools = Tools()
    boom = RuntimeError("journal down")

    class Faulty(Journal):
        async def committed(self, index: int, outcome: ActionOutcome) -> None:
            if index == 1:
                raise boom
            await super().committed(index, outcome)

    journal = Faulty()
    actions = [act("read", n=0), act("read", n=1), act("read", n=2)]
    with pytest.raises(RuntimeError) as caught:
        asyncio.run(make(tools.registry, 1, None).execute_batch(actions, journal))
    assert caught.value is boom and sorted(journal.outcomes) == [0]
