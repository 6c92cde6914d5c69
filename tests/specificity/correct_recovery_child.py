"""One lifetime of one batch on one runtime, for test_correct_recovery_smoke.

The test calls `lifetime` in a forked child process; by hand:
    python correct_recovery_child.py RUNTIME DIRECTORY LEDGER BATCH_ID SCENARIO [VARIANT]
prints the outcomes (or the error) as JSON. A handler may SIGKILL the process.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from polyloop import Action, ReplayPolicy, ToolCall, ToolEnvironmentError, ToolRegistry, ToolSpec

MAX_ATTEMPTS = 2
_LEDGER = Path(os.devnull)  # set by `lifetime`: where the handlers note every entry


def _note(line: str) -> None:
    with _LEDGER.open("a", encoding="utf-8") as ledger:
        ledger.write(line + "\n")
        ledger.flush()
        os.fsync(ledger.fileno())


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def echo(arguments: dict[str, Any]) -> str:
    _note(f"echo {arguments['x']}")
    return f"echo:{arguments['x']}"


async def send(arguments: dict[str, Any]) -> str:
    _note(f"send {arguments['x']}")
    if arguments["x"] == "die":
        _die()
    return f"sent:{arguments['x']}"


async def fetch(arguments: dict[str, Any]) -> str:
    _note(f"fetch {arguments['x']}")
    marker = _LEDGER.with_suffix(".killed-once")
    if not marker.exists():
        marker.touch()
        _die()
    return f"fetched:{arguments['x']}"


async def loop(arguments: dict[str, Any]) -> str:
    _note("loop")
    _die()
    return "unreachable"


async def pair(arguments: dict[str, Any]) -> str:
    _note(f"pair {arguments['x']}")
    if arguments["x"] == "first":
        await asyncio.sleep(0.3)
        _die()
    await asyncio.sleep(30)
    return "unreachable"


async def pair_down(arguments: dict[str, Any]) -> str:
    _note(f"pair {arguments['x']}")
    raise ToolEnvironmentError("backend down")


async def quick(arguments: dict[str, Any]) -> str:
    _note(f"quick {arguments['x']}")
    return f"quick:{arguments['x']}"


def _spec(name: str, handler: Any, policy: ReplayPolicy, *, safe: bool = False) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=name,
        parameters={"type": "object", "properties": {"x": {"type": "string"}}},
        handler=handler,
        replay_policy=policy,
        concurrency_safe=safe,
    )


def registry(variant: str) -> ToolRegistry:
    """The tools of one lifetime; a variant changes the registry between lifetimes (J6, J4)."""
    fetch_policy = ReplayPolicy.NEVER if variant == "fetch-never" else ReplayPolicy.SAFE
    specs = [
        _spec("echo", echo, ReplayPolicy.SAFE),
        _spec("send", send, ReplayPolicy.NEVER),
        _spec("fetch", fetch, fetch_policy),
        _spec("loop", loop, ReplayPolicy.SAFE),
    ]
    if variant == "no-fetch":
        del specs[2]
    specs.append(_spec("quick", quick, ReplayPolicy.NEVER, safe=True))
    if variant == "pair-down":  # now exclusive, and the first call reports ENV_ERROR
        specs.append(_spec("pair", pair_down, ReplayPolicy.SAFE))
    else:
        specs.append(_spec("pair", pair, ReplayPolicy.SAFE, safe=True))
    return ToolRegistry(specs)


def _call(name: str, x: str) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments={"x": x}))


SCENARIOS = {
    "never": [_call("echo", "a"), _call("send", "die"), _call("echo", "c")],
    "safe": [_call("echo", "a"), _call("fetch", "b"), _call("echo", "c")],
    "changed": [_call("echo", "a"), _call("fetch", "CHANGED"), _call("echo", "c")],
    "loop": [_call("echo", "a"), _call("loop", "b"), _call("echo", "c")],
    "pair": [_call("pair", "first"), _call("pair", "second")],
    "tri": [
        _call("echo", "a"),
        _call("pair", "first"),
        _call("pair", "second"),
        _call("echo", "d"),
    ],
    "limit": [_call("pair", "first"), _call("quick", "q"), _call("echo", "c")],
    "mixed": [
        _call("echo", "a"),
        _call("send", "die"),
        Action(code="print(1)"),
        _call("nope", "x"),
        _call("echo", "c"),
    ],
}


def lifetime(
    runtime: str, directory: str, ledger: str, batch_id: str, scenario: str, variant: str
) -> dict[str, Any]:
    """Run or resume `batch_id`; the outcomes as rows, or the error's class and message."""
    global _LEDGER
    _LEDGER = Path(ledger)
    package = f"{__package__}.correct_recovery" if __package__ else "correct_recovery"
    module = importlib.import_module(f"{package}.{runtime}")
    target = module.factory(registry(variant), directory, max_attempts=MAX_ATTEMPTS)
    try:
        outcomes = asyncio.run(target.run(batch_id, SCENARIOS[scenario]))
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    rows = [
        [o.status.value, o.observation, o.observation_is_synthetic, o.env_reported_completion]
        for o in outcomes
    ]
    return {"outcomes": rows}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    variant = sys.argv[6] if len(sys.argv) > 6 else "default"
    runtime, directory, ledger, batch_id, scenario = sys.argv[1:6]
    print(json.dumps(lifetime(runtime, directory, ledger, batch_id, scenario, variant)))
