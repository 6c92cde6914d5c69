"""One lifetime of a durable batch, for the crash tests: run or resume, maybe SIGKILL itself.

Run as `python tests/_durable_child.py CONFIG.json`. The config names the store, the ledger (a
file outside the store, one `os.write` per line on an `O_APPEND` descriptor), the batch, the
registry's policies this lifetime, and the event at which this process kills itself:
`enter`, `effect`, `return` (inside handler *i*), `started`, `committed` (after the store made
record *i* durable). The outcomes go to `out` as JSON when the lifetime ends normally.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from polyloop import (
    Action,
    ReplayPolicy,
    SqliteJournalStore,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    run_durable,
)

# tool name -> (default policy, concurrency_safe)
TOOLS: dict[str, tuple[str, bool]] = {
    "safe": ("SAFE", True),
    "never": ("NEVER", True),
    "safe_x": ("SAFE", False),
    "never_x": ("NEVER", False),
    "env": ("SAFE", True),
    "bomb": ("SAFE", False),  # kills its process on every entry (J13)
}


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(config_path: str) -> None:
    with open(config_path, encoding="utf-8") as file:
        config: dict[str, Any] = json.load(file)
    life = config["life"]
    crash = config.get("crash")  # [event, index] or None
    ledger = os.open(config["ledger"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def note(call: int, event: str, observation: str | None = None) -> None:
        line = {"life": life, "pid": os.getpid(), "call": call, "event": event}
        if observation is not None:
            line["obs"] = observation
        os.write(ledger, (json.dumps(line) + "\n").encode())
        if crash is not None and crash[0] == event and crash[1] == call:
            _die()

    def make_handler(name: str) -> Any:
        async def handler(arguments: dict[str, Any]) -> str:
            call = arguments["i"]
            note(call, "enter")
            if name == "bomb":
                for _ in range(3):
                    await asyncio.sleep(0)  # lets the scheduler commit earlier calls first
                _die()
            for _ in range(3):
                await asyncio.sleep(0)  # lets the scheduler commit earlier calls first
            note(call, "effect")
            if name == "env":
                note(call, "return", "ENV")
                raise ToolEnvironmentError(f"backend down for call {call}")
            observation = f"{name}:{call}:{arguments.get('x', 0)}"
            note(call, "return", observation)
            return observation

        return handler

    policies = config.get("policies", {})
    specs = []
    for name, (policy, concurrent) in TOOLS.items():
        chosen = policies.get(name, policy)
        if chosen == "absent":
            continue
        specs.append(
            ToolSpec(
                name=name,
                description=name,
                parameters={"type": "object"},
                replay_policy=ReplayPolicy[chosen],
                concurrency_safe=concurrent,
                handler=make_handler(name),
            )
        )
    registry = ToolRegistry(specs)

    class CrashingStore(SqliteJournalStore):
        def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
            super().append(batch_id, kind, index, body)
            if crash is not None and crash[0] == kind and crash[1] == index:
                _die()

    actions = [
        Action(tool_call=ToolCall(name=name, arguments={"i": index, **extra}))
        for index, (name, extra) in enumerate(config["calls"])
    ]
    store = CrashingStore(config["store"])
    outcomes = asyncio.run(
        run_durable(
            registry.batch_executor(max_concurrency=config.get("max_concurrency", 3)),
            actions,
            store=store,
            batch_id=config["batch_id"],
            max_attempts=config.get("max_attempts", 3),
        )
    )
    with open(config["out"], "w", encoding="utf-8") as file:
        json.dump(
            [[o.status.name, o.observation, o.observation_is_synthetic] for o in outcomes],
            file,
        )


if __name__ == "__main__":
    main(sys.argv[1])
