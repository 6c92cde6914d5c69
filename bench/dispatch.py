"""Side-by-side dispatch benchmark: polyloop vs a bare await vs a hand-written jsonschema path.

Run:  python bench/dispatch.py [--rounds 7] [--calls 20000]

Everything is measured in one process, round by round, with the three paths interleaved, so
machine noise hits them alike; the ratios are the result, not the absolute times. Nothing here
gates CI.
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
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
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


async def handler(arguments: dict[str, Any]) -> str:
    return "sunny"


def make_jsonschema_path() -> Callable[[ToolCall], Awaitable[ActionOutcome]]:
    """What a user would write by hand: a cached validator, try/except, build the outcome."""
    from jsonschema import Draft202012Validator

    validators = {"search": Draft202012Validator(PARAMETERS)}
    handlers = {"search": handler}

    def outcome(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
        return ActionOutcome(
            status=status,
            observation=text,
            observation_is_synthetic=synthetic,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )

    async def execute(call: ToolCall) -> ActionOutcome:
        validator = validators.get(call.name)
        if validator is None:
            return outcome(ActionStatus.NOT_EXECUTED, f"unknown tool {call.name}", True)
        arguments = dict(call.arguments)
        error = next(validator.iter_errors(arguments), None)
        if error is not None:
            return outcome(ActionStatus.NOT_EXECUTED, error.message, True)
        try:
            text = await handlers[call.name](arguments)
        except ToolEnvironmentError as exc:
            return outcome(ActionStatus.ENV_ERROR, str(exc), False)
        except Exception as exc:
            return outcome(ActionStatus.EXECUTED, f"{type(exc).__name__}: {exc}", False)
        return outcome(ActionStatus.EXECUTED, text, False)

    return execute


async def time_bare(calls: int) -> float:
    arguments = dict(ARGUMENTS)
    start = CLOCK()
    for _ in range(calls):
        await handler(arguments)
    return (CLOCK() - start) / calls


async def time_polyloop(executor: RegistryExecutor, action: Action, calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        await executor.execute(action)
    return (CLOCK() - start) / calls


async def time_jsonschema(
    execute: Callable[[ToolCall], Awaitable[ActionOutcome]], call: ToolCall, calls: int
) -> float:
    start = CLOCK()
    for _ in range(calls):
        await execute(call)
    return (CLOCK() - start) / calls


async def dispatch(rounds: int, calls: int) -> dict[str, float]:
    spec = ToolSpec(name="search", description="Search.", parameters=PARAMETERS, handler=handler)
    executor = ToolRegistry([spec]).executor()
    call = ToolCall(name="search", arguments=ARGUMENTS)
    action = Action(tool_call=call)
    by_hand = make_jsonschema_path()
    outcome = await executor.execute(action)
    assert outcome.status is ActionStatus.EXECUTED and outcome.observation == "sunny"
    assert (await by_hand(call)).observation == "sunny"
    samples: dict[str, list[float]] = {"bare": [], "polyloop": [], "jsonschema": []}
    for _ in range(rounds):
        samples["bare"].append(await time_bare(calls))
        samples["polyloop"].append(await time_polyloop(executor, action, calls))
        samples["jsonschema"].append(await time_jsonschema(by_hand, call, calls // 4))
    return {name: statistics.median(values) for name, values in samples.items()}


def make_specs(count: int) -> list[ToolSpec]:
    return [
        ToolSpec(
            name=f"tool_{index:05d}",
            description=f"Tool number {index}.",
            parameters=PARAMETERS,
            handler=handler,
        )
        for index in range(count)
    ]


def best_of(repeats: int, action: Callable[[], object]) -> float:
    """The least CPU time (this thread's) of `repeats` runs of `action`.

    CPU time, not wall time: at 10,000 tools one run outlasts a scheduler slice, so on a shared
    machine wall time would count other processes' turns and make the per-tool cost look
    superlinear. Garbage collection stays on (it is part of the cost).
    """
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        action()
        times.append(time.thread_time() - start)
    return min(times)


def scaling() -> list[tuple[int, float, float, float]]:
    rows = []
    for count in (100, 1_000, 10_000):
        specs = make_specs(count)
        registry = ToolRegistry(specs)
        half = {spec.name for spec in specs[::2]}
        repeats = 9 if count < 10_000 else 5
        rows.append(
            (
                count,
                best_of(repeats, lambda specs=specs: ToolRegistry(specs)),
                best_of(repeats, lambda registry=registry, half=half: registry.restrict_to(half)),
                best_of(repeats, registry.schema_for_model),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median kept)")
    parser.add_argument("--calls", type=int, default=20_000, help="calls per round and path")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 4:
        parser.error("--rounds must be >= 1 and --calls >= 4")

    print(f"Python {sys.version.split()[0]}; {args.rounds} rounds x {args.calls} calls")
    print("execute() of a valid 3-argument call (string, integer, boolean; one required;")
    print("additionalProperties: false), median time per call:")
    result = asyncio.run(dispatch(args.rounds, args.calls))
    bare, ours, by_hand = result["bare"], result["polyloop"], result["jsonschema"]
    print(f"  bare `await handler(args)`          {bare * 1e6:8.3f} us")
    print(f"  RegistryExecutor.execute            {ours * 1e6:8.3f} us")
    print(f"  cached Draft202012Validator path    {by_hand * 1e6:8.3f} us")
    print(f"  polyloop / bare await     = {ours / bare:6.2f}x   (target <= 20x)")
    print(f"  polyloop / jsonschema path = {ours / by_hand:6.3f}x  (target <= 0.25x)")
    print()
    print("Registry operations (least CPU time of several runs):")
    header = ("tools", "ToolRegistry()", "restrict_to(half)", "schema_for_model")
    print("  {:>6}  {:>15}  {:>18}  {:>17}".format(*header))
    per_tool: dict[int, tuple[float, float]] = {}
    for count, build, restrict, schema in scaling():
        print(
            f"  {count:>6}  {build * 1e3:12.2f} ms  {restrict * 1e3:15.2f} ms"
            f"  {schema * 1e3:14.2f} ms   per tool: {build / count * 1e6:.2f} / "
            f"{restrict / count * 1e6:.2f} / {schema / count * 1e6:.2f} us"
        )
        per_tool[count] = (build / count, schema / count)
    for index, name in enumerate(("ToolRegistry()", "schema_for_model")):
        ratio = per_tool[10_000][index] / per_tool[100][index]
        print(f"  {name} per tool, 10,000 / 100 tools = {ratio:5.2f}x   (goal <= 1.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
