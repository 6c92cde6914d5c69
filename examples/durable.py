"""A batch that survives a SIGKILL: the process kills itself mid-batch, a new one resumes it.

The turn holds a read-only lookup (SAFE: harmless to repeat), a payment (NEVER: must not
repeat) and a confirmation e-mail (NEVER). The first process is killed (SIGKILL, as an
out-of-memory killer would) inside the payment's handler, after its effect. A second process
resumes the same batch id: the lookup is committed, so it is replayed, not re-run; the payment
is in doubt and NEVER, so it is not run again but answered "interrupted"; the e-mail is not
run, naming the payment. `effects.log` (outside the store) shows the payment happened once.

Run:  python examples/durable.py  (POSIX: it needs SIGKILL)
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from polyloop import (
    Action,
    ReplayPolicy,
    SqliteJournalStore,
    SyntheticObservations,
    ToolCall,
    ToolRegistry,
    ToolSpec,
    observation_for_history,
    run_durable,
)


def build(directory: Path, crash: bool) -> tuple[ToolRegistry, list[Action]]:
    def effect(line: str) -> None:
        descriptor = os.open(directory / "effects.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(descriptor, f"pid {os.getpid()}: {line}\n".encode())
        os.close(descriptor)

    async def lookup(arguments: dict[str, Any]) -> str:
        effect(f"looked up {arguments['order']}")
        return f"order {arguments['order']}: 2 items, 30.00 EUR"

    async def pay(arguments: dict[str, Any]) -> str:
        effect(f"charged {arguments['amount']} EUR")
        if crash:
            os.kill(os.getpid(), signal.SIGKILL)  # dies before the result is recorded
        return "paid"

    async def send_mail(arguments: dict[str, Any]) -> str:
        effect(f"mailed {arguments['to']}")
        return "sent"

    obj = {"type": "object"}
    registry = ToolRegistry(
        [
            ToolSpec(name="lookup", description="Look up an order.", parameters=obj,
                     handler=lookup, replay_policy=ReplayPolicy.SAFE),
            ToolSpec(name="pay", description="Charge the customer.", parameters=obj,
                     handler=pay, replay_policy=ReplayPolicy.NEVER),
            ToolSpec(name="send_mail", description="Send a confirmation.", parameters=obj,
                     handler=send_mail, replay_policy=ReplayPolicy.NEVER),
        ]
    )  # fmt: skip
    actions = [
        Action(tool_call=ToolCall(name="lookup", arguments={"order": "A-17"})),
        Action(tool_call=ToolCall(name="pay", arguments={"amount": 30})),
        Action(tool_call=ToolCall(name="send_mail", arguments={"to": "ada@example.org"})),
    ]
    return registry, actions


def lifetime(directory: Path, crash: bool) -> None:
    registry, actions = build(directory, crash)
    with SqliteJournalStore(directory / "journal.db") as store:
        outcomes = asyncio.run(
            run_durable(registry.batch_executor(), actions, store=store, batch_id="turn-1")
        )
    synthetic = SyntheticObservations()
    print("what the model's history shows after the resume:")
    for action, outcome in zip(actions, outcomes, strict=True):
        assert action.tool_call is not None
        print(f"  {action.tool_call.name:<10} {outcome.status.name:<12} "
              f"{observation_for_history(outcome, synthetic)}")  # fmt: skip
        print(f"  {'':<10} journal: {outcome.observation}")


def main() -> None:
    if len(sys.argv) == 3:  # a child lifetime
        lifetime(Path(sys.argv[2]), crash=sys.argv[1] == "crash")
        return
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        first = subprocess.run([sys.executable, __file__, "crash", name], check=False)
        print(f"first process: exit {first.returncode} (SIGKILL is {-signal.SIGKILL})")
        subprocess.run([sys.executable, "-m", "polyloop.durable", "show",
                        str(directory / "journal.db")], check=True)  # fmt: skip
        print("second process resumes batch 'turn-1':")
        subprocess.run([sys.executable, __file__, "resume", name], check=True)
        print("effects.log:")
        print((directory / "effects.log").read_text(), end="")


if __name__ == "__main__":
    main()
