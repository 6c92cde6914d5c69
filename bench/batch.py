"""Side-by-side batch-dispatch benchmark: `execute_batch` vs `asyncio.gather` of `execute`.

Run:  python bench/batch.py [--rounds 7] [--calls 20000]

Each round times every path on the same concurrency-safe trivial calls, interleaved, so machine
noise hits them alike; the medians' ratios are the result. The `gather` baseline has no model
order, no journal and no cap, so the ratio is the price of those guarantees. Nothing here gates
CI.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from polyloop import Action, ActionOutcome, ActionStatus, ToolCall, ToolRegistry, ToolSpec

CLOCK = time.thread_time
"""CPU time of this thread for the per-call paths: on a shared machine another process's turn
does not count (the event loop and every task measured run in this one thread). The field
rows below keep wall time: other runners may use threads of their own."""

PARAMETERS = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
}


async def handler(arguments: dict[str, Any]) -> str:
    return "sunny"


Timed = Callable[[], Awaitable[object]]


async def per_call(run: Timed, batch_size: int, calls: int) -> float:
    repeats = max(calls // batch_size, 1)
    start = CLOCK()
    for _ in range(repeats):
        await run()
    return (CLOCK() - start) / (repeats * batch_size)


async def measure(rounds: int, calls: int) -> dict[str, float]:
    spec = ToolSpec(
        name="search",
        description="Search.",
        parameters=PARAMETERS,
        handler=handler,
        concurrency_safe=True,
    )
    registry = ToolRegistry([spec])
    executor = registry.executor()
    batch = registry.batch_executor()  # max_concurrency=10, the default

    def actions(count: int) -> list[Action]:
        return [
            Action(tool_call=ToolCall(name="search", arguments={"query": f"q{i}", "limit": 5}))
            for i in range(count)
        ]

    def gather(group: Sequence[Action]) -> Timed:
        return lambda: asyncio.gather(*(executor.execute(action) for action in group))

    def batched(group: Sequence[Action]) -> Timed:
        return lambda: batch.execute_batch(group)

    one = actions(1)
    paths: dict[str, tuple[Timed, int]] = {
        "execute x1": (lambda: executor.execute(one[0]), 1),
        "batch x1": (batched(one), 1),
    }
    for size in (10, 100):
        group = actions(size)
        paths[f"gather x{size}"] = (gather(group), size)
        paths[f"batch x{size}"] = (batched(group), size)
    for name, (run, _) in paths.items():  # same answers before timing anything
        result = await run()
        outcomes = result if isinstance(result, (list, tuple)) else [result]
        assert all(isinstance(o, ActionOutcome) for o in outcomes), name
        assert all(o.status is ActionStatus.EXECUTED for o in outcomes), name
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(rounds):
        for name, (run, size) in paths.items():
            samples[name].append(await per_call(run, size, calls))
    return {name: statistics.median(values) for name, values in samples.items()}


async def marginal(run: Callable[[int], Awaitable[float]], rounds: int) -> float:
    """Per-call cost of one turn's tool calls: (T(100) - T(10)) / 90, medians over rounds."""
    await run(10)  # warm up imports and caches
    small = statistics.median([await run(10) for _ in range(rounds)])
    big = statistics.median([await run(100) for _ in range(rounds)])
    return (big - small) / 90


async def polyloop_run(count: int) -> float:
    spec = ToolSpec(
        name="search",
        description="Search.",
        parameters=PARAMETERS,
        handler=handler,
        concurrency_safe=True,
    )
    batch = ToolRegistry([spec]).batch_executor()
    actions = [
        Action(tool_call=ToolCall(name="search", arguments={"query": f"q{i}"}))
        for i in range(count)
    ]
    start = time.perf_counter()
    await batch.execute_batch(actions)
    return time.perf_counter() - start


def field_rows(rounds: int) -> str:
    """The same turn through openai-agents', pydantic-ai's and LangGraph's runners
    (bench/_field_batch.py); LangGraph's row only where it is installed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _field_batch import langgraph_run, openai_agents_run, pydantic_ai_run

    async def measure_all() -> dict[str, float]:
        costs = {
            # polyloop's runs are short, so more of them give the median the same footing.
            "polyloop execute_batch": await marginal(polyloop_run, rounds * 20),
            "openai-agents Runner.run": await marginal(openai_agents_run, rounds),
            "pydantic-ai Agent.run": await marginal(pydantic_ai_run, rounds),
        }
        if importlib.util.find_spec("langgraph") is not None:
            costs["LangGraph ToolNode step"] = await marginal(langgraph_run, rounds)
        return costs

    costs = asyncio.run(measure_all())
    ours = costs["polyloop execute_batch"]
    lines = ["one turn of N trivial tool calls, marginal cost per call ((T(100) - T(10)) / 90):"]
    for name, seconds in costs.items():
        lines.append(f"  {name:<26} {seconds * 1e6:10.1f} us")
    for name, seconds in costs.items():
        if name != "polyloop execute_batch":
            lines.append(f"  {name:<26} / polyloop = {seconds / ours:8.1f}x")
    fastest = min(costs["openai-agents Runner.run"], costs["pydantic-ai Agent.run"])
    lines.append(f"  faster of OA, PA / polyloop  = {fastest / ours:8.1f}x   (goal >= 10x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median kept)")
    parser.add_argument("--calls", type=int, default=20_000, help="calls per round and path")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 100:
        parser.error("--rounds must be >= 1 and --calls >= 100")
    print(f"Python {sys.version.split()[0]}; {args.rounds} rounds x {args.calls} calls per path")
    print("concurrency-safe trivial handler, median time per call:")
    result = asyncio.run(measure(args.rounds, args.calls))
    for name, seconds in result.items():
        print(f"  {name:<12} {seconds * 1e6:8.3f} us")
    print("ratios (per call):")
    for size in (10, 100):
        ratio = result[f"batch x{size}"] / result[f"gather x{size}"]
        print(f"  batch of {size:<3} / gather of execute = {ratio:5.2f}x   (goal <= 2x)")
    ratio = result["batch x1"] / result["execute x1"]
    print(f"  batch of 1   / execute             = {ratio:5.2f}x   (goal <= 1.3x)")
    missing = [name for name in ("agents", "pydantic_ai") if importlib.util.find_spec(name) is None]
    if missing:
        print(
            "skipped: the openai-agents / pydantic-ai rows (not installed here: "
            + ", ".join(missing)
            + "; install the pins of tests/field/requirements.txt into a separate venv, e.g. "
            "python3 -m venv .bench-venv && .bench-venv/bin/pip install openai-agents==0.24.0 "
            "pydantic-ai-slim==2.68.0 && .bench-venv/bin/pip install -e .)"
        )
    else:
        print(field_rows(min(args.rounds, 5)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
