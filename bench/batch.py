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
from typing import Any

from polyloop import Action, ActionOutcome, ActionStatus, ToolCall, ToolRegistry, ToolSpec

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
    start = time.perf_counter()
    for _ in range(repeats):
        await run()
    return (time.perf_counter() - start) / (repeats * batch_size)


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
            + "; install the pins of tests/field/requirements.txt into a separate venv)"
        )
    else:
        print("skipped: the openai-agents / pydantic-ai rows are not written yet (docs/batch.md)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
