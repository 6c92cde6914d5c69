"""Side-by-side policy benchmark: what `ToolPolicy` costs on `execute` and on a batch.

Run:  python bench/policy.py [--rounds 7] [--calls 20000] [--batches 300]

Every path is measured in one process, round by round and interleaved, so machine noise hits
them alike; the ratios are the result, not the absolute times (goals from issue 31: ToolPolicy()
<= 1.05x no policy; three deciders, an auto-approver, one wrapper and one post-processor <=
2.5x; a batch of 100 safe calls under the three deciders <= 2x the same batch without). Nothing
here gates CI.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from polyloop import (
    Action,
    ActionStatus,
    Decision,
    RegistryBatchExecutor,
    RegistryExecutor,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

CLOCK = time.thread_time
"""CPU time of this thread: on a shared machine another process's turn does not count, so a
long loop is not charged for preemption a short one escapes (the event loop and every call
measured here run in this one thread)."""

PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "exact": {"type": "boolean"},
    },
    "required": ["query"],
    "additionalProperties": False,
}
ARGUMENTS = {"query": "weather in Lisbon", "limit": 5, "exact": False}
_ALLOW = Verdict(decision=Decision.ALLOW, reason="read-only")
_ASK = Verdict(decision=Decision.ASK, reason="limit above 3")


async def handler(arguments: dict[str, Any]) -> str:
    return "sunny"


async def deny_writes(call: ToolCall) -> Verdict | None:
    return Verdict(decision=Decision.DENY, reason="writes") if call.name == "write" else None


async def allow_search(call: ToolCall) -> Verdict | None:
    return _ALLOW if call.name == "search" else None


async def ask_large(call: ToolCall) -> Verdict | None:
    return _ASK if call.arguments.get("limit", 0) > 3 else None


async def approve_all(call: ToolCall, reasons: tuple[str, ...]) -> bool:
    return True


async def tracing(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
    return await proceed()


async def redact(call: ToolCall, observation: str) -> str:
    return observation.replace("secret", "[redacted]")


DECIDERS = (deny_writes, allow_search, ask_large)
FULL = ToolPolicy(deciders=DECIDERS, approver=approve_all, wrappers=(tracing,), post=(redact,))
DECIDING_ONLY = ToolPolicy(deciders=DECIDERS, approver=approve_all)


async def time_execute(executor: RegistryExecutor, action: Action, calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        await executor.execute(action)
    return (CLOCK() - start) / calls


async def time_batch(executor: RegistryBatchExecutor, actions: list[Action], batches: int) -> float:
    start = CLOCK()
    for _ in range(batches):
        await executor.execute_batch(actions)
    return (CLOCK() - start) / batches


async def measure(rounds: int, calls: int, batches: int) -> dict[str, float]:
    spec = ToolSpec(
        name="search",
        description="Search.",
        parameters=PARAMETERS,
        handler=handler,
        concurrency_safe=True,
    )
    registry = ToolRegistry([spec])
    action = Action(tool_call=ToolCall(name="search", arguments=ARGUMENTS))
    executors = {
        "none": registry.executor(),
        "empty": registry.executor(policy=ToolPolicy()),
        "full": registry.executor(policy=FULL),
    }
    for executor in executors.values():
        outcome = await executor.execute(action)
        assert outcome.status is ActionStatus.EXECUTED and outcome.observation == "sunny"
    many = [action] * 100
    batch_none = registry.batch_executor()
    batch_policy = registry.batch_executor(policy=DECIDING_ONLY)
    for batch in (batch_none, batch_policy):
        assert all(o.observation == "sunny" for o in await batch.execute_batch(many))
    samples: dict[str, list[float]] = {
        "none": [],
        "empty": [],
        "full": [],
        "batch_none": [],
        "batch_policy": [],
    }
    for _ in range(rounds):
        for name, executor in executors.items():
            samples[name].append(await time_execute(executor, action, calls))
        samples["batch_none"].append(await time_batch(batch_none, many, batches))
        samples["batch_policy"].append(await time_batch(batch_policy, many, batches))
    return {name: statistics.median(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median kept)")
    parser.add_argument("--calls", type=int, default=20_000, help="execute() calls per round")
    parser.add_argument("--batches", type=int, default=300, help="batches of 100 per round")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1 or args.batches < 1:
        parser.error("--rounds, --calls and --batches must be >= 1")
    print(f"Python {sys.version.split()[0]}; {args.rounds} rounds, median kept")
    result = asyncio.run(measure(args.rounds, args.calls, args.batches))
    none, empty, full = result["none"], result["empty"], result["full"]
    print("execute() of a valid 3-argument call, time per call:")
    print(f"  no policy                                  {none * 1e6:8.3f} us")
    print(f"  ToolPolicy()                               {empty * 1e6:8.3f} us")
    print(f"  3 deciders + approver + wrapper + post     {full * 1e6:8.3f} us")
    print(f"  ToolPolicy() / no policy   = {empty / none:5.2f}x   (goal <= 1.05x)")
    print(f"  full policy / no policy    = {full / none:5.2f}x   (goal <= 2.5x)")
    b_none, b_policy = result["batch_none"], result["batch_policy"]
    print("execute_batch() of 100 concurrency-safe calls, time per batch:")
    print(f"  no policy                                  {b_none * 1e6:8.1f} us")
    print(f"  3 deciders + approver                      {b_policy * 1e6:8.1f} us")
    print(f"  3-decider batch / no policy = {b_policy / b_none:5.2f}x  (goal <= 2x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
