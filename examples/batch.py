"""One model turn with four tool calls, run by `execute_batch`, then the same turn cancelled.

The turn holds two read-only searches (concurrency-safe: they overlap), a write (exclusive: it
runs alone, after the searches), and a call with invalid arguments (rejected, never run). The
journal prints what a durable log would record; the last lines show what the model's history
would hold for each call (N1).

Run:  python examples/batch.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    SyntheticObservations,
    ToolCall,
    ToolRegistry,
    ToolSpec,
    observation_for_history,
)

DOCS = {"intro.md": "polyloop runs tool calls", "batch.md": "in model order"}
GATE: asyncio.Event | None = None  # lets the example cancel while the write is running


async def search(arguments: dict[str, Any]) -> str:
    await asyncio.sleep(0)  # a real search awaits I/O; siblings overlap here
    hits = [name for name, text in DOCS.items() if arguments["query"] in text]
    return ", ".join(hits) or "no match"


async def write(arguments: dict[str, Any]) -> str:
    if GATE is not None:
        await GATE.wait()  # a slow write: the example cancels the batch meanwhile
    DOCS[arguments["path"]] = arguments["text"]
    return f"wrote {arguments['path']}"


def schema(**types: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in types.items()},
        "required": list(types),
        "additionalProperties": False,
    }


REGISTRY = ToolRegistry(
    [
        ToolSpec(
            name="search",
            description="Search the docs.",
            parameters=schema(query="string"),
            handler=search,
            concurrency_safe=True,  # read-only: may overlap other safe calls
        ),
        ToolSpec(
            name="write",
            description="Write a doc.",
            parameters=schema(path="string", text="string"),
            handler=write,  # concurrency_safe defaults to False: runs alone
        ),
    ]
)


class PrintingJournal:
    """A BatchJournal that prints instead of writing to durable storage."""

    def __init__(self) -> None:
        self.outcomes: list[ActionOutcome] = []

    async def started(self, index: int, action: Action) -> None:
        assert action.tool_call is not None
        print(f"  journal: started   #{index} {action.tool_call.name}")

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        print(f"  journal: committed #{index} {outcome.status.name}: {outcome.observation}")
        self.outcomes.append(outcome)  # committed in model order: position == index


def turn() -> list[Action]:
    calls = [
        ToolCall(name="search", arguments={"query": "tool"}),
        ToolCall(name="search", arguments={"query": "order"}),
        ToolCall(name="write", arguments={"path": "new.md", "text": "hello"}),
        ToolCall(name="write", arguments={"path": 42}),  # invalid: rejected, never run
    ]
    return [Action(tool_call=call) for call in calls]


def show_history(actions: list[Action], outcomes: tuple[ActionOutcome, ...]) -> None:
    synthetic = SyntheticObservations()
    print("  what the model's history shows:")
    for index, (action, outcome) in enumerate(zip(actions, outcomes, strict=True)):
        assert action.tool_call is not None
        text = observation_for_history(outcome, synthetic)
        print(f"    #{index} {action.tool_call.name}: {text}")


async def main() -> None:
    global GATE
    executor = REGISTRY.batch_executor(max_concurrency=4)
    actions = turn()

    print("A whole turn:")
    outcomes = await executor.execute_batch(actions, PrintingJournal())
    show_history(actions, outcomes)

    print("\nThe same turn, cancelled while the write runs:")
    GATE = asyncio.Event()
    journal = PrintingJournal()
    batch = asyncio.ensure_future(executor.execute_batch(actions, journal))
    for _ in range(20):  # let the searches finish and the write start
        await asyncio.sleep(0)
    batch.cancel()
    try:
        await batch
    except asyncio.CancelledError:
        print("  execute_batch raised CancelledError after committing every call")
    show_history(actions, tuple(journal.outcomes))


if __name__ == "__main__":
    asyncio.run(main())
