"""A gated harness for batch dispatch (contract section 10): scripted handlers, one trace.

Every handler records `("enter", i)` when it starts and `("exit", i)` when it ends, then waits
for its gate, which the test opens. The journal and the classifier write to the same trace, so
one list shows the whole order of events. `settle()` yields to the event loop until nothing
changes: verdicts never depend on wall-clock time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryBatchExecutor,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)
from polyloop.batch import INTERRUPTED, NOT_RUN_CANCELLED

__all__ = [
    "BEHAVIOURS",
    "INTERRUPTED",
    "LIVE",
    "NOT_RUN_CANCELLED",
    "STOPPING",
    "Harness",
    "Journal",
    "Stop",
    "act",
    "bad",
    "code",
    "settle",
    "unknown",
]

LIVE: list[Harness] = []
"""Every harness built in this process, so a test's teardown can release them all."""

SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "do": {"type": "string"}},
    "required": ["id"],
}

BEHAVIOURS = ("return", "raise", "env", "ignore_cancel", "nonstr", "base", "cancel_self")
"""What a gated handler does once its gate opens: return text (E5), raise an ordinary exception
(E4), raise ToolEnvironmentError (E3), survive one cancellation and then return, return a
non-str (E9), raise its own BaseException (B15) or its own CancelledError (B15)."""


STOPPING = ("env", "nonstr", "base", "cancel_self")
"""Behaviours that stop the batch (B13, B15, B16)."""


class Stop(BaseException):
    """A handler's own BaseException that is not an Exception (B15)."""


class Journal:
    """A BatchJournal writing `("starting", i)`, `("started", i)` and `("committed", i)` into the
    harness trace.

    `started_gates` make `started(i)` wait; `fail_started` / `fail_committed` make it raise.
    """

    def __init__(self, trace: list[tuple[str, int]]) -> None:
        self.trace = trace
        self.committed_outcomes: dict[int, ActionOutcome] = {}
        self.started_gates: dict[int, asyncio.Event] = {}
        self.committed_gates: dict[int, asyncio.Event] = {}
        self.fail_started: dict[int, BaseException] = {}
        self.fail_committed: dict[int, BaseException] = {}

    async def started(self, index: int, action: Action) -> None:
        # "starting" when asked, "started" once recorded: a started() that raised is no record.
        self.trace.append(("starting", index))
        gate = self.started_gates.get(index)
        if gate is not None:
            await gate.wait()
        if index in self.fail_started:
            raise self.fail_started[index]
        self.trace.append(("started", index))

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        gate = self.committed_gates.get(index)
        if gate is not None:
            await gate.wait()
        if index in self.fail_committed:
            raise self.fail_committed[index]
        assert index not in self.committed_outcomes, f"call {index} committed twice"
        self.committed_outcomes[index] = outcome
        self.trace.append(("committed", index))


class Harness:
    """A registry of gated tools, its batch executor and the shared trace.

    Tools: ``safe`` (concurrency_safe=True), ``excl`` (the default False), ``ask`` (a callable
    classifier answering the call's ``safe`` argument, or raising when it is ``"raise"``),
    ``finish`` (concurrency_safe=True but completes_run=True, so exclusive).
    """

    def __init__(self, cap: int = 10, journal: bool = True) -> None:
        self.trace: list[tuple[str, int]] = []
        self.gates: dict[int, asyncio.Event] = {}
        self.received: dict[int, dict[str, Any]] = {}
        self.mutate = False
        self.cancels_seen: dict[int, int] = {}
        self.error: BaseException | None = None
        LIVE.append(self)
        spec = {"description": "gated", "parameters": SCHEMA, "handler": self.handler}
        self.registry = ToolRegistry(
            [
                ToolSpec(name="safe", concurrency_safe=True, **spec),  # type: ignore[arg-type]
                ToolSpec(name="excl", **spec),  # type: ignore[arg-type]
                ToolSpec(name="ask", concurrency_safe=self.classify, **spec),  # type: ignore[arg-type]
                ToolSpec(
                    name="finish",
                    concurrency_safe=True,
                    completes_run=True,
                    **spec,  # type: ignore[arg-type]
                ),
            ]
        )
        self.executor: RegistryBatchExecutor = self.registry.batch_executor(max_concurrency=cap)
        self.journal: Journal | None = Journal(self.trace) if journal else None

    def release_everything(self) -> None:
        """Open every gate and journal record, so no handler can keep a failed test waiting."""
        for gate in self.gates.values():
            gate.set()
        if self.journal is not None:
            for gate in (
                *self.journal.started_gates.values(),
                *self.journal.committed_gates.values(),
            ):
                gate.set()
        self.open(*range(64))

    def gate(self, index: int) -> asyncio.Event:
        if index not in self.gates:
            self.gates[index] = asyncio.Event()
        return self.gates[index]

    def open(self, *indices: int) -> None:
        for index in indices:
            self.gate(index).set()

    def classify(self, arguments: Mapping[str, Any]) -> bool:
        self.trace.append(("classify", arguments["id"]))
        answer = arguments.get("safe")
        if answer == "raise":
            raise RuntimeError("classifier failed")
        return answer  # type: ignore[no-any-return]  # non-bool answers are the point

    async def handler(self, arguments: dict[str, Any]) -> str:
        index = arguments["id"]
        self.received[index] = arguments
        self.trace.append(("enter", index))
        try:
            if self.mutate:
                arguments["id"] = -1
                arguments.setdefault("nested", {})["x"] = index
            do = arguments.get("do", "return")
            try:
                await self.gate(index).wait()
            except asyncio.CancelledError:
                self.cancels_seen[index] = self.cancels_seen.get(index, 0) + 1
                if do not in ("ignore_cancel", "ignore_then_base"):
                    raise
                self.gate(index).clear()
                await self.gate(index).wait()  # ignores the cancellation: opened again later
                if do == "ignore_then_base":
                    raise Stop(f"stop {index}") from None
                return f"survived {index}"
            if do in STOPPING:
                self.trace.append(("stop", index))
            return self.behave(index, do)
        finally:
            self.trace.append(("exit", index))

    @staticmethod
    def behave(index: int, do: str) -> str:
        if do == "raise":
            raise ValueError(f"bad {index}")
        if do == "env":
            raise ToolEnvironmentError(f"down {index}")
        if do == "nonstr":
            return index  # type: ignore[return-value]  # E9
        if do == "base":
            raise Stop(f"stop {index}")
        if do == "cancel_self":
            raise asyncio.CancelledError(f"own {index}")
        return f"ok {index}"

    def start(self, actions: Sequence[Action]) -> asyncio.Task[tuple[ActionOutcome, ...]]:
        """Run the batch in its own task; `self.error` keeps the very object it raised."""

        async def batch() -> tuple[ActionOutcome, ...]:
            try:
                return await self.executor.execute_batch(actions, self.journal)
            except BaseException as error:
                self.error = error
                raise

        task = asyncio.ensure_future(batch())
        # Tests judge `self.error`; mark the task's exception as seen so asyncio stays quiet.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    # -- trace views ------------------------------------------------------------------------

    def events(self, kind: str) -> list[int]:
        return [index for event, index in self.trace if event == kind]

    def running(self) -> set[int]:
        alive: set[int] = set()
        for event, index in self.trace:
            if event == "enter":
                alive.add(index)
            elif event == "exit":
                alive.discard(index)
        return alive


def act(tool: str, index: int, do: str = "return", **extra: Any) -> Action:
    arguments: dict[str, Any] = {"id": index, "do": do, **extra}
    return Action(tool_call=ToolCall(name=tool, arguments=arguments))


def bad(tool: str, index: int) -> Action:
    """A call validation rejects (E2): `id` of the wrong type."""
    return Action(tool_call=ToolCall(name=tool, arguments={"id": f"not-an-int-{index}"}))


def unknown(index: int) -> Action:
    return Action(tool_call=ToolCall(name="nope", arguments={"id": index}))


def code(index: int) -> Action:
    return Action(code=f"print({index})")


async def settle(limit: int = 500) -> None:
    """Yield to the event loop until nothing is left to run (bounded; no wall-clock time).

    asyncio has no "wait until every task is blocked", so this yields until the loop's ready
    queue stays empty for a few turns in a row.
    """
    loop = asyncio.get_running_loop()
    quiet = 0
    for _ in range(limit):
        await asyncio.sleep(0)
        ready = len(getattr(loop, "_ready", ()))
        quiet = quiet + 1 if ready == 0 else 0
        if quiet >= 3:
            return
    raise AssertionError(f"the event loop did not settle within {limit} turns")


def not_run_env(index: int) -> str:
    return f"not run: call {index} reported an environment error"


def not_run_raised(index: int, name: str) -> str:
    return f"not run: call {index} raised {name}"


def is_synthetic(outcome: ActionOutcome, status: ActionStatus, text: str) -> bool:
    return (
        outcome.status is status
        and outcome.observation == text
        and outcome.observation_is_synthetic
    )
