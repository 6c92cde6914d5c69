"""Scripted, recorded, optionally gated listeners for tool-call policy tests (contract section 11).

A `Script` names what each listener does; `Recorder.policy(script)` builds the `ToolPolicy`
whose listeners do exactly that and write every invocation into one trace: `(stage, position,
call id, what it saw)`. `oracle(script, handler)` computes, one step at a time and without any
asyncio, the outcome and the trace section 11 requires. A gate (an `asyncio.Event` per trace
step) lets a test hold any listener or handler where it is and cancel there; verdicts never
depend on wall-clock time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)
from polyloop.tools import DENIED, WITHHELD

SECRET = "SECRET-7f3a"
"""Put into exception messages and handler output: it must never reach a sentence that
section 11 says withholds it (P4, P5, P10)."""

DECIDER_ANSWERS = ("allow", "ask", "deny", "abstain", "bool", "str", "bare", "raise")
APPROVER_ANSWERS = ("missing", True, False, None, 1, "yes", "raise")
WRAPPER_KINDS = ("pass", "retry", "short", "swallow")
POST_KINDS = ("replace", "raise", "nonstr")
HANDLER_KINDS = ("return", "raise", "env")

LISTENER_STAGES = frozenset({"decide", "approve", "wrap", "handler", "post"})

SCHEMA = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}


class DeciderBoom(RuntimeError):
    pass


class ApproverBoom(RuntimeError):
    pass


class PostBoom(RuntimeError):
    pass


@dataclass
class Script:
    deciders: tuple[str, ...] = ()
    approver: object = "missing"
    wrappers: tuple[str, ...] = ()
    post: tuple[str, ...] = ()
    default: Decision = Decision.ALLOW
    handler: str = "return"


@dataclass
class Recorder:
    """The trace of every listener and handler invocation, and the gates that hold them."""

    trace: list[tuple[str, int, int, Any]] = field(default_factory=list)
    gates: dict[int, asyncio.Event] = field(default_factory=dict)
    swallow_at: set[int] = field(default_factory=set)
    active: dict[str, int] = field(default_factory=dict)
    overlap: dict[str, int] = field(default_factory=dict)
    calls_seen: list[ToolCall] = field(default_factory=list)
    hold: bool = False
    steps: int = 0
    waiting: dict[int, asyncio.Event] = field(default_factory=dict)

    async def step(self, stage: str, position: int, call_id: int, seen: Any) -> None:
        """Record one invocation; wait at its gate if the test set one at this step."""
        index = self.steps  # gates count listener and handler steps only
        self.steps += 1
        self.trace.append((stage, position, call_id, seen))
        kind = "deciding" if stage in ("decide", "approve") else stage
        self.active[kind] = self.active.get(kind, 0) + 1
        self.overlap[kind] = max(self.overlap.get(kind, 0), self.active[kind])
        if self.hold:
            self.gates[index] = self.waiting[index] = asyncio.Event()
        try:
            gate = self.gates.get(index)
            if gate is not None:
                try:
                    await gate.wait()
                except asyncio.CancelledError:
                    if index not in self.swallow_at:
                        raise
                    self.trace.append(("swallowed", position, call_id, stage))
        finally:
            self.active[kind] -= 1
            self.waiting.pop(index, None)

    def policy(self, script: Script) -> ToolPolicy:
        return ToolPolicy(
            deciders=[self.decider(i, answer) for i, answer in enumerate(script.deciders)],
            approver=None if script.approver == "missing" else self.approver(script.approver),
            wrappers=[self.wrapper(i, kind) for i, kind in enumerate(script.wrappers)],
            post=[self.post(i, kind) for i, kind in enumerate(script.post)],
            default=script.default,
        )

    def decider(self, position: int, answer: str) -> Callable[[ToolCall], Awaitable[Any]]:
        async def decide(call: ToolCall) -> Any:
            self.calls_seen.append(call)
            await self.step("decide", position, call.arguments["id"], None)
            return decider_answer(position, answer)

        return decide

    def approver(self, answer: object) -> Callable[[ToolCall, tuple[str, ...]], Awaitable[Any]]:
        async def approve(call: ToolCall, reasons: tuple[str, ...]) -> Any:
            self.calls_seen.append(call)
            await self.step("approve", 0, call.arguments["id"], reasons)
            if answer == "raise":
                raise ApproverBoom(f"approver saw {SECRET}")
            return answer

        return approve

    def wrapper(self, position: int, kind: str) -> Callable[..., Awaitable[Any]]:
        async def wrap(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> Any:
            self.calls_seen.append(call)
            await self.step("wrap", position, call.arguments["id"], kind)
            if kind == "short":
                return f"short-{position}"
            if kind == "retry":
                with contextlib.suppress(Exception):
                    await proceed()
                return await proceed()
            if kind == "swallow":
                try:
                    return await proceed()
                except asyncio.CancelledError:
                    self.trace.append(("swallowed", position, call.arguments["id"], "wrap"))
                    return f"swallowed-{position}"
            return await proceed()

        return wrap

    def post(self, position: int, kind: str) -> Callable[[ToolCall, str], Awaitable[Any]]:
        async def process(call: ToolCall, observation: str) -> Any:
            self.calls_seen.append(call)
            await self.step("post", position, call.arguments["id"], observation)
            if kind == "raise":
                raise PostBoom(f"could not redact {observation}")
            if kind == "nonstr":
                return {"observation": observation}
            return f"{observation.replace(SECRET, '[redacted]')}|p{position}"

        return process

    def handler(self, kind: str) -> Callable[[dict[str, Any]], Awaitable[str]]:
        async def handle(arguments: dict[str, Any]) -> str:
            await self.step("handler", 0, arguments["id"], dict(arguments))
            if kind == "raise":
                raise ValueError(f"bad {arguments['id']}")
            if kind == "env":
                raise ToolEnvironmentError(f"backend down {arguments['id']}")
            return f"out-{arguments['id']}-{SECRET}"

        return handle

    def registry(self, kind: str = "return", safe: bool = True) -> ToolRegistry:
        def classify(arguments: Any) -> bool:
            self.trace.append(("classify", 0, arguments["id"], None))
            return safe

        return ToolRegistry(
            [
                ToolSpec(
                    name="t",
                    description="scripted",
                    parameters=SCHEMA,
                    handler=self.handler(kind),
                    concurrency_safe=classify,
                )
            ]
        )

    def journal(self) -> Journal:
        return Journal(self)

    def stages(self, call_id: int | None = None) -> list[tuple[str, int]]:
        return [
            (stage, position)
            for stage, position, seen_id, _ in self.trace
            if stage in LISTENER_STAGES and (call_id is None or seen_id == call_id)
        ]


class Journal:
    """A BatchJournal writing `started` and `committed` into the recorder's trace."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.committed_outcomes: dict[int, ActionOutcome] = {}

    async def started(self, index: int, action: Action) -> None:
        self.recorder.trace.append(("started", 0, index, None))

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        self.recorder.trace.append(("committed", 0, index, outcome))
        self.committed_outcomes[index] = outcome


def decider_answer(position: int, answer: str) -> Any:
    if answer == "allow":
        return Verdict(decision=Decision.ALLOW, reason=f"ok-{position}")
    if answer == "ask":
        return Verdict(decision=Decision.ASK, reason=f"ask-{position}")
    if answer == "deny":
        return Verdict(decision=Decision.DENY, reason=f"no-{position}")
    if answer == "abstain":
        return None
    if answer == "bool":
        return True
    if answer == "str":
        return "allow"
    if answer == "bare":
        return Decision.ALLOW
    raise DeciderBoom(f"decider {position} saw {SECRET}")


def act(call_id: int, name: str = "t") -> Action:
    return Action(tool_call=ToolCall(name=name, arguments={"id": call_id}))


_GARBAGE_LABEL = {"bool": "bool", "str": "str", "bare": "Decision"}


@dataclass
class Expected:
    outcome: ActionOutcome
    stages: list[tuple[str, int]]


def oracle(script: Script, call_id: int = 0) -> Expected:
    """Section 11 applied by hand, one stage after another (no cancellation)."""
    stages: list[tuple[str, int]] = []
    denials: list[str] = []
    asks: list[str] = []
    allowed = False
    for position, answer in enumerate(script.deciders):
        stages.append(("decide", position))
        if answer == "raise":
            denials.append(f"decider {position} raised DeciderBoom")
        elif answer in _GARBAGE_LABEL:
            denials.append(
                f"decider {position} answered {_GARBAGE_LABEL[answer]}, not a Verdict or None"
            )
        elif answer == "deny":
            denials.append(f"decider {position}: no-{position}")
        elif answer == "ask":
            asks.append(f"ask-{position}")
        elif answer == "allow":
            allowed = True

    def deny(text: str) -> Expected:
        return Expected(
            ActionOutcome(
                status=ActionStatus.NOT_EXECUTED,
                observation=text,
                observation_is_synthetic=True,
                env_reported_completion=False,
                observation_truncated_chars=0,
            ),
            stages,
        )

    if denials:
        return deny(f"{DENIED}: " + "; ".join(denials))
    decision = Decision.ASK if asks else Decision.ALLOW if allowed else script.default
    if decision is Decision.DENY:
        return deny(f"{DENIED}: no decider allowed the call and the default is DENY")
    if decision is Decision.ASK:
        if script.approver == "missing":
            return deny(f"{DENIED}: the call needs approval and no approver is configured")
        stages.append(("approve", 0))
        if script.approver == "raise":
            return deny(f"{DENIED}: the approver raised ApproverBoom")
        if script.approver is False:
            return deny(f"{DENIED}: the approver refused the call")
        if script.approver is not True:
            return deny(f"{DENIED}: the approver's answer was not True (only True approves)")

    def chain(position: int) -> str:
        if position == len(script.wrappers):
            stages.append(("handler", 0))
            if script.handler == "raise":
                raise ValueError(f"bad {call_id}")
            if script.handler == "env":
                raise ToolEnvironmentError(f"backend down {call_id}")
            return f"out-{call_id}-{SECRET}"
        kind = script.wrappers[position]
        stages.append(("wrap", position))
        if kind == "short":
            return f"short-{position}"
        if kind == "retry":
            with contextlib.suppress(Exception):
                chain(position + 1)
        return chain(position + 1)

    synthetic = False
    try:
        observation = chain(0)
        status = ActionStatus.EXECUTED
    except ToolEnvironmentError as exc:
        status, observation = ActionStatus.ENV_ERROR, str(exc)
    except ValueError as exc:
        status, observation = ActionStatus.EXECUTED, f"ValueError: {exc}"
    if status is ActionStatus.EXECUTED:
        for position, kind in enumerate(script.post):
            stages.append(("post", position))
            if kind == "raise":
                observation = f"{WITHHELD}: post-processor {position} raised PostBoom"
                synthetic = True
                break
            if kind == "nonstr":
                observation = f"{WITHHELD}: post-processor {position} returned dict, not str"
                synthetic = True
                break
            observation = f"{observation.replace(SECRET, '[redacted]')}|p{position}"
    return Expected(
        ActionOutcome(
            status=status,
            observation=observation,
            observation_is_synthetic=synthetic,
            env_reported_completion=False,
            observation_truncated_chars=0,
        ),
        stages,
    )


async def settle(limit: int = 500) -> None:
    """Yield until the loop's ready queue stays empty a few turns in a row (no wall clock)."""
    loop = asyncio.get_running_loop()
    quiet = 0
    for _ in range(limit):
        await asyncio.sleep(0)
        quiet = quiet + 1 if not getattr(loop, "_ready", ()) else 0
        if quiet >= 3:
            return
    raise AssertionError(f"the event loop did not settle within {limit} turns")


def leftover_tasks() -> set[asyncio.Task[Any]]:
    """Tasks other than the current one that are still alive."""
    current = asyncio.current_task()
    return {task for task in asyncio.all_tasks() if task is not current and not task.done()}


def cancel_at_gate(recorder: Recorder, gate_at: int, call: Callable[[], Awaitable[Any]]) -> None:
    """Run `call()` in a task until the recorder's stage `gate_at` waits at its gate, cancel the
    task, and check that `execute` ends with CancelledError, leaving no task behind, and that
    after the gate no handler was entered and nothing was post-processed (P9)."""

    async def scenario() -> None:
        task = asyncio.create_task(call())
        await settle()
        assert len(recorder.stages()) == gate_at + 1
        task.cancel()
        await settle()
        assert task.done(), "the chain was abandoned or is still running"
        with pytest.raises(asyncio.CancelledError):
            task.result()
        assert leftover_tasks() == set()

    asyncio.run(scenario())
    after = recorder.stages()[gate_at + 1 :]
    assert ("handler", 0) not in after, "a handler was entered after the cancellation"
    assert all(stage != "post" for stage, _ in after), "post-processed after the cancellation"
