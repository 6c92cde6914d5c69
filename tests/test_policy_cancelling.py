"""P9 (and E6/P4) on `RegistryExecutor.execute` for callers whose task was cancelled before.

P9 speaks of a cancellation of the task awaiting `execute` "at any stage" of the call. A task
may already carry a cancellation it swallowed before the call began (asyncio counts it until
someone calls `uncancel()`): that one is no stage's, so the call runs as any other, while a
cancellation arriving during the call is still seen when a listener swallows it. A call whose
stages neither suspend nor are cancelled behaves the same whoever drives it, and a
`BaseException` that is not an `Exception` leaves `execute` itself (E6, P4), never the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

import pytest
from _policy_harness import Recorder, Script, act, cancel_at_gate, oracle, settle

from polyloop import (
    Action,
    ActionOutcome,
    Decision,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

_HAS_UNCANCEL = sys.version_info >= (3, 11)  # Task.cancelling() and Task.uncancel()

_FULL = Script(
    deciders=("ask",),
    approver=True,
    wrappers=("swallow", "retry"),
    post=("replace", "replace"),
)

_SCRIPTS = {
    "full": _FULL,
    "decider-only": Script(deciders=("allow",)),
    "default-ask": Script(default=Decision.ASK, approver=True),
    "wrapper-only": Script(wrappers=("pass",)),
    "post-only": Script(post=("replace",)),
}

_STAGES = ["decide", "approve", "wrap", "handler", "post"]


async def _swallow_own_cancellation() -> asyncio.Task[Any]:
    """Cancel the current task and swallow the CancelledError without `uncancel()`, as code
    that ignores a cancellation does; return the task (on 3.11+ it still counts one)."""
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(0)
    if _HAS_UNCANCEL:
        assert task.cancelling() == 1  # type: ignore[attr-defined,unused-ignore]
    return task


# --- a cancellation from before the call ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(_SCRIPTS))
def test_P9_a_cancellation_pending_before_the_call_does_not_count(name: str) -> None:
    script = _SCRIPTS[name]
    recorder = Recorder()
    executor = recorder.registry().executor(policy=recorder.policy(script))

    async def caller() -> ActionOutcome:
        await _swallow_own_cancellation()
        return await executor.execute(act(0))

    expected = oracle(script)
    assert asyncio.run(caller()) == expected.outcome
    assert recorder.stages() == expected.stages


@pytest.mark.parametrize("name", sorted(_SCRIPTS))
def test_P9_two_calls_after_a_swallowed_cancellation_both_run(name: str) -> None:
    script = _SCRIPTS[name]
    recorder = Recorder()
    executor = recorder.registry().executor(policy=recorder.policy(script))

    async def caller() -> tuple[ActionOutcome, ActionOutcome]:
        await _swallow_own_cancellation()
        first = await executor.execute(act(0))
        return first, await executor.execute(act(1))

    first, second = asyncio.run(caller())
    assert first == oracle(script, 0).outcome
    assert second == oracle(script, 1).outcome
    assert recorder.stages(0) == oracle(script, 0).stages
    assert recorder.stages(1) == oracle(script, 1).stages


@pytest.mark.parametrize("swallow", [False, True])
@pytest.mark.parametrize("where", _STAGES)
def test_P9_a_cancellation_arriving_after_an_earlier_swallowed_one_is_seen(
    where: str, swallow: bool
) -> None:
    recorder = Recorder()
    gate_at = oracle(_FULL).stages.index((where, 0))
    recorder.gates[gate_at] = asyncio.Event()
    if swallow:
        recorder.swallow_at.add(gate_at)
    executor = recorder.registry().executor(policy=recorder.policy(_FULL))

    async def caller() -> ActionOutcome:
        await _swallow_own_cancellation()
        return await executor.execute(act(0))

    cancel_at_gate(recorder, gate_at, caller)


@pytest.mark.skipif(not _HAS_UNCANCEL, reason="Task.uncancel() is new in 3.11")
@pytest.mark.parametrize("where", _STAGES)
def test_P9_withdrawing_the_earlier_cancellation_during_the_call_is_no_cancellation(
    where: str,
) -> None:
    """The caller's own `uncancel()` of the cancellation it swallowed before the call lowers
    the task's count below its value when the call began: that is no cancellation."""
    recorder = Recorder()
    expected = oracle(_FULL)
    gate_at = expected.stages.index((where, 0))
    gate = recorder.gates[gate_at] = asyncio.Event()
    executor = recorder.registry().executor(policy=recorder.policy(_FULL))
    tasks: list[asyncio.Task[Any]] = []

    async def caller() -> ActionOutcome:
        tasks.append(await _swallow_own_cancellation())
        return await executor.execute(act(0))

    async def scenario() -> ActionOutcome:
        task = asyncio.create_task(caller())
        await settle()
        assert len(recorder.stages()) == gate_at + 1
        assert tasks[0].uncancel() == 0  # type: ignore[attr-defined,unused-ignore]
        gate.set()
        return await task

    assert asyncio.run(scenario()) == expected.outcome
    assert recorder.stages() == expected.stages


# --- no task --------------------------------------------------------------------------------


def test_P9_a_policed_call_driven_outside_any_task_runs_normally() -> None:
    """polyloop's own choice, outside the kit's contract (docs/policy-certification.md): a
    policed `execute` stepped by hand from a loop callback, where no task exists and so
    nothing can cancel it, gives the outcome the same call gives in a task."""
    script = Script(deciders=("ask",), approver=True, wrappers=("pass",), post=("replace",))
    recorder = Recorder()
    executor = recorder.registry().executor(policy=recorder.policy(script))

    async def scenario() -> ActionOutcome:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[ActionOutcome] = loop.create_future()

        def drive() -> None:
            assert asyncio.current_task() is None
            coroutine = executor.execute(act(0))
            try:
                coroutine.send(None)
            except StopIteration as stop:
                done.set_result(stop.value)
            except Exception as exc:
                done.set_exception(exc)
            else:
                coroutine.close()
                done.set_exception(AssertionError("no stage suspends, yet the call did"))

        loop.call_soon(drive)
        return await done

    expected = oracle(script)
    assert asyncio.run(scenario()) == expected.outcome
    assert recorder.stages() == expected.stages


# --- E6, P4: a BaseException leaves execute, not the event loop -----------------------------


_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}


@pytest.mark.parametrize("exit_", [SystemExit(7), KeyboardInterrupt()], ids=type)
@pytest.mark.parametrize("where", ["decide", "wrap", "handler"])
def test_E6_P4_a_system_exit_propagates_from_a_policed_execute_as_the_same_object(
    where: str, exit_: BaseException
) -> None:
    """On 3.10 a policed call runs in a child task (no Task.cancelling()), and asyncio re-raises
    a task's SystemExit or KeyboardInterrupt out of the event loop: polyloop hands it back."""
    entered: list[str] = []

    async def handler(arguments: dict[str, Any]) -> str:
        entered.append("handler")
        if where == "handler":
            raise exit_
        return "ran"

    async def decide(call: ToolCall) -> Verdict:
        if where == "decide":
            raise exit_
        return Verdict(decision=Decision.ALLOW)

    async def wrap(call: ToolCall, proceed: Any) -> str:
        if where == "wrap":
            raise exit_
        result: str = await proceed()
        return result

    registry = ToolRegistry(
        [ToolSpec(name="t", description="d", parameters=_SCHEMA, handler=handler)]
    )
    executor = registry.executor(policy=ToolPolicy(deciders=[decide], wrappers=[wrap]))

    async def caller() -> BaseException | None:
        try:
            await executor.execute(Action(tool_call=ToolCall(name="t", arguments={"id": 1})))
        except (SystemExit, KeyboardInterrupt) as exc:
            return exc
        return None

    try:
        raised = asyncio.run(caller())
    except (SystemExit, KeyboardInterrupt):
        pytest.fail(f"the {type(exit_).__name__} left the event loop instead of execute")
    assert raised is exit_
    assert entered == (["handler"] if where == "handler" else [])
