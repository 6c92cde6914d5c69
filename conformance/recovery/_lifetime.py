"""One lifetime of a recovery target, in a fresh process: build the kit's registry, run or resume
the batch, and SIGKILL this process at the chosen event (contract section 12).

Run by `conformance.recovery.lifetimes` (``python -c <runpy> FILE CONFIG.json``), never imported
by the kit's other modules: the file needs the standard library and polyloop only, so a lifetime
costs one interpreter start and the target's import. The config names the target (an
importable ``module:attr``), its directory, the kit's ledger (a file outside that directory),
the batch, this lifetime's registry (the kit's tools with their replay policies, some perhaps
changed or removed) and the crash point ``[event, index]``: ``enter``, ``effect`` or ``return``
inside handler *index*, or ``started``/``committed``: just after the runtime reports call
*index*'s record of that kind durable, for a runtime that lets the kit observe its journal
(``observe_journal``; for one that does not, the point is the handler's ``enter`` or ``return``
instead). Every handler appends ``{"life", "call", "event", "obs"}`` lines to the ledger with
one ``os.write`` on an ``O_APPEND`` descriptor, so a line is whole or absent; so does each
journal report. What ``run`` returned (or raised) is written to ``out`` when the lifetime ends
by itself.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import sys
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ReplayPolicy,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

SCHEMA = {
    "type": "object",
    "properties": {"i": {"type": "integer"}, "x": {"type": "integer"}},
    "required": ["i"],
}


JOURNAL_EVENTS = ("started", "committed")
_INSTEAD = {"started": "enter", "committed": "return"}
"""A journal crash point's handler event, for a runtime that does not report its journal."""


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class _Ledger:
    def __init__(self, path: str, life: int, crash: list[Any] | None) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._life = life
        self.crash = crash

    def journal(self, kind: object, index: object) -> None:
        """What the runtime reports through ``observe_journal``: a record made durable."""
        if kind in JOURNAL_EVENTS and isinstance(index, int) and not isinstance(index, bool):
            self.note(index, str(kind))

    def note(self, call: int, event: str, observation: str | None = None) -> None:
        line = {"life": self._life, "pid": os.getpid(), "call": call, "event": event}
        if observation is not None:
            line["obs"] = observation
        os.write(self._fd, (json.dumps(line) + "\n").encode())
        if self.crash is not None and self.crash == [event, call]:
            _die()


def _handler(ledger: _Ledger, name: str, kind: str, life: int) -> Any:
    async def handler(arguments: dict[str, Any]) -> str:
        call = int(arguments["i"])
        ledger.note(call, "enter")
        if kind == "bomb":
            _die()  # a call that keeps killing its process (J13)
        for _ in range(3):
            await asyncio.sleep(0)  # lets the runtime commit earlier calls meanwhile
        ledger.note(call, "effect")
        if kind == "env":
            observation = f"{name}#{call} backend down@{life}"
            ledger.note(call, "return", observation)
            raise ToolEnvironmentError(observation)
        observation = f"{name}#{call}:{arguments.get('x', 0)}@{life}"
        ledger.note(call, "return", observation)
        return observation

    return handler


def registry_for(tools: list[dict[str, Any]], ledger: _Ledger, life: int) -> ToolRegistry:
    """The kit's registry for this lifetime: a tool whose policy is ``absent`` is left out."""
    specs = []
    for tool in tools:
        if tool["policy"] == "absent":
            continue
        specs.append(
            ToolSpec(
                name=tool["name"],
                description=f"The conformance kit's {tool['kind']} tool {tool['name']}.",
                parameters=SCHEMA,
                replay_policy=ReplayPolicy[tool["policy"]],
                concurrency_safe=bool(tool["concurrent"]),
                handler=_handler(ledger, tool["name"], tool["kind"], life),
            )
        )
    return ToolRegistry(specs)


def actions_for(calls: list[dict[str, Any]]) -> list[Action]:
    actions = []
    for index, call in enumerate(calls):
        if "code" in call:
            actions.append(Action(code=call["code"]))
        else:
            arguments = {"i": index, "x": call.get("x", 0)}
            actions.append(Action(tool_call=ToolCall(name=call["tool"], arguments=arguments)))
    return actions


def _resolve(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def _outcome_json(outcome: object) -> Any:
    if not isinstance(outcome, ActionOutcome):
        return {"not_an_outcome": type(outcome).__name__}
    return [
        outcome.status.name,
        outcome.observation,
        outcome.observation_is_synthetic,
        outcome.env_reported_completion,
        outcome.observation_truncated_chars,
    ]


def main(config_path: str) -> None:
    with open(config_path, encoding="utf-8") as file:
        config: dict[str, Any] = json.load(file)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    life = int(config["life"])
    ledger = _Ledger(config["ledger"], life, config.get("crash"))
    registry = registry_for(config["tools"], ledger, life)
    factory = _resolve(config["target"])
    actions = actions_for(config["calls"])
    result: dict[str, Any] = {"in_factory": True}
    try:
        runtime = factory(registry, config["directory"])
        result["in_factory"] = False
        bound = getattr(runtime, "max_attempts", None)
        observe = getattr(runtime, "observe_journal", None)
        if callable(observe):
            observe(ledger.journal)
        elif ledger.crash is not None and ledger.crash[0] in _INSTEAD:
            ledger.crash = [_INSTEAD[ledger.crash[0]], ledger.crash[1]]
        with open(config["out"] + ".pre", "w", encoding="utf-8") as file:
            json.dump({"max_attempts": bound if isinstance(bound, int) else None}, file)
        outcomes = asyncio.run(runtime.run(config["batch_id"], actions))
    except Exception as exc:  # the verdict reads it: J9, J10 want an error, others none
        result["error"] = type(exc).__name__
        result["value_error"] = isinstance(exc, ValueError)
        result["message"] = str(exc)[:2000]
    else:
        if isinstance(outcomes, (tuple, list)):
            result["outcomes"] = [_outcome_json(o) for o in outcomes]
        else:
            result["outcomes"] = {"not_a_tuple": type(outcomes).__name__}
    with open(config["out"], "w", encoding="utf-8") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main(sys.argv[-1])
