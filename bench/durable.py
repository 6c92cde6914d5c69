"""Crash-recovery benchmark: what `run_durable` costs per call, against the fsync floor.

Run:  python bench/durable.py [--rounds 7] [--calls 100] [--dir DIRECTORY]

Three paths over the same batch of trivial concurrency-safe calls, interleaved per round so
machine noise hits them alike, medians compared:

- `run_durable` over `RegistryBatchExecutor` and `SqliteJournalStore` (a header, then one
  `started` and one `committed` record per call: 2n+1 records, each its own transaction);
- the fsync floor: a bare `sqlite3` loop with the same settings (WAL, `synchronous=FULL`)
  committing the same number of small records, one transaction each, in the same directory;
- `execute_batch` without a journal (what durability costs at all);
- when `langgraph` and `langgraph-checkpoint-sqlite` are importable (`pip install -r
  tests/field/requirements.txt langgraph-checkpoint-sqlite==3.1.2`; the bench never installs
  them): LangGraph's `SqliteSaver`
  checkpointing one `ToolNode` step that runs the same calls, in the same directory, with its
  default durability. It writes per step, not per call, so a crash inside the step loses every
  result of it and re-runs them all on resume: cheaper per call, and not the same guarantee.

The store and the floor live in one directory (`--dir`, default a temporary directory under the
current one), so they pay the same disk. Nothing here gates CI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from polyloop import Action, SqliteJournalStore, ToolCall, ToolRegistry, ToolSpec, run_durable


async def handler(arguments: dict[str, Any]) -> str:
    return "sunny"


def floor(path: Path, records: int, tag: str) -> float:
    """Seconds for `records` one-row transactions with the store's durability settings."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=60)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("CREATE TABLE IF NOT EXISTS r (k TEXT, seq INTEGER, body TEXT)")
    start = time.perf_counter()
    for seq in range(records):
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO r VALUES (?, ?, ?)", (tag, seq, '{"i":0}'))
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


def langgraph_step(directory: Path, calls: int) -> Any:
    """A function running one checkpointed `ToolNode` step of `calls` calls (seconds), or None
    when LangGraph is not installed."""
    try:
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode
    except ImportError:
        return None

    @tool
    def weather(i: int) -> str:
        """Weather."""
        return "sunny"

    saver = SqliteSaver(sqlite3.connect(directory / "langgraph.db", check_same_thread=False))
    graph: Any = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([weather]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile(checkpointer=saver)
    turn = AIMessage(
        content="",
        tool_calls=[{"name": "weather", "args": {"i": i}, "id": f"c{i}"} for i in range(calls)],
    )

    def step(tag: str) -> float:
        start = time.perf_counter()
        app.invoke({"messages": [turn]}, {"configurable": {"thread_id": tag}})
        return time.perf_counter() - start

    return step


def measure(rounds: int, calls: int, directory: Path) -> dict[str, float]:
    spec = ToolSpec(
        name="weather",
        description="Weather.",
        parameters={"type": "object"},
        handler=handler,
        concurrency_safe=True,
    )
    registry = ToolRegistry([spec])
    executor = registry.batch_executor()
    actions = [Action(tool_call=ToolCall(name="weather", arguments={"i": i})) for i in range(calls)]
    store = SqliteJournalStore(directory / "journal.db")
    times: dict[str, list[float]] = {"run_durable": [], "fsync floor": [], "execute_batch": []}
    langgraph = langgraph_step(directory, calls)
    if langgraph is not None:
        times["LangGraph step"] = []
    for round_ in range(rounds + 1):  # round 0 warms up and is dropped
        start = time.perf_counter()
        asyncio.run(run_durable(executor, actions, store=store, batch_id=f"round-{round_}"))
        durable = time.perf_counter() - start
        bare = floor(directory / "floor.db", 2 * calls + 1, f"round-{round_}")
        start = time.perf_counter()
        asyncio.run(executor.execute_batch(actions))
        plain = time.perf_counter() - start
        checkpointed = langgraph(f"round-{round_}") if langgraph is not None else 0.0
        if round_:
            if langgraph is not None:
                times["LangGraph step"].append(checkpointed / calls)
            times["run_durable"].append(durable / calls)
            times["fsync floor"].append(bare / calls)
            times["execute_batch"].append(plain / calls)
    store.close()
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--dir", type=Path, default=None, help="where the store files go")
    arguments = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="bench-durable-", dir=arguments.dir or Path.cwd()))
    try:
        medians = measure(arguments.rounds, arguments.calls, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    floor_cost = medians["fsync floor"]
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, "
        f"{arguments.calls} calls per batch, {arguments.rounds} rounds, median per call, "
        f"{os.cpu_count()} cpus"
    )
    for name, cost in medians.items():
        print(
            f"  {name:<14} {cost * 1e6:10.1f} us/call   {cost / floor_cost:6.2f}x the fsync floor"
        )
    if "LangGraph step" not in medians:
        print(
            "  (LangGraph not installed: pip install -r tests/field/requirements.txt "
            "langgraph-checkpoint-sqlite==3.1.2 to add it)"
        )
    print(
        f"  run_durable / fsync floor = {medians['run_durable'] / floor_cost:.2f} (goal <= 1.5); "
        f"run_durable / execute_batch = {medians['run_durable'] / medians['execute_batch']:.0f}"
    )


if __name__ == "__main__":
    main()
