"""A tool-call policy on one model turn: a deny rule, an approval callback, a redaction.

The turn holds five calls. The policy denies deleting anything outside `/tmp`, asks a person
(here: a callback that approves only `/tmp` paths) before any other delete, and redacts API
keys from every observation. A second policy shows what happens when the redaction itself
fails: the observation is withheld, never leaked. For each call the example prints the
outcome (what a journal records for audit) and what the model's history shows (N1).

Run:  python examples/policy.py
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    Decision,
    SyntheticObservations,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
    observation_for_history,
)

FILES = {"/tmp/cache.txt": "old cache", "/etc/passwd": "root:x:0:0"}
ENV = "DEBUG=1 API_KEY=sk-live-4f9a2c7e1b REGION=eu-west-1"


async def read_env(arguments: dict[str, Any]) -> str:
    return ENV  # a tool that returns a secret the model must not see


async def delete(arguments: dict[str, Any]) -> str:
    FILES.pop(arguments["path"], None)
    return f"deleted {arguments['path']}"


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
            name="read_env",
            description="Read the service's environment.",
            parameters=schema(),
            handler=read_env,
            concurrency_safe=True,
        ),
        ToolSpec(
            name="delete",
            description="Delete a file.",
            parameters=schema(path="string"),
            handler=delete,
        ),
    ]
)


# --- the policy: each stage is one small async function -----------------------------------------


async def deny_outside_tmp(call: ToolCall) -> Verdict | None:
    """A deny rule. Strictest wins: no other decider's ALLOW can override it."""
    if call.name == "delete" and not str(call.arguments["path"]).startswith("/tmp/"):
        return Verdict(decision=Decision.DENY, reason="deletes are limited to /tmp")
    return None  # abstain


async def ask_before_delete(call: ToolCall) -> Verdict | None:
    if call.name == "delete":
        return Verdict(decision=Decision.ASK, reason="deleting a file needs a person's approval")
    return None


async def person(call: ToolCall, reasons: tuple[str, ...]) -> bool:
    """The approval callback: a real one would prompt someone. Only `True` approves."""
    answer = str(call.arguments["path"]) == "/tmp/cache.txt"
    print(f"  approver asked about {call.name}({dict(call.arguments)}) because {reasons}")
    print(f"  approver answered {answer}")
    return answer


API_KEY = re.compile(r"sk-[a-z]+-[0-9a-f]+")


async def redact_keys(call: ToolCall, observation: str) -> str:
    return API_KEY.sub("[redacted]", observation)


async def broken_redaction(call: ToolCall, observation: str) -> str:
    raise RuntimeError(f"regex engine down while reading {observation!r}")


POLICY = ToolPolicy(
    deciders=(deny_outside_tmp, ask_before_delete),
    approver=person,
    post=(redact_keys,),
)


def turn() -> list[Action]:
    calls = [
        ToolCall(name="read_env", arguments={}),
        ToolCall(name="delete", arguments={"path": "/etc/passwd"}),  # denied by the rule
        ToolCall(name="delete", arguments={"path": "/tmp/cache.txt"}),  # asked, approved
        ToolCall(name="delete", arguments={"path": "/tmp/other.txt"}),  # asked, refused
        ToolCall(name="delete", arguments={"path": 7}),  # invalid: rejected before any policy
    ]
    return [Action(tool_call=call) for call in calls]


# The model never sees a NOT_EXECUTED observation (N1): it sees this one fixed sentence, for
# rejected and denied calls alike, while the journal keeps the executor's exact words. The
# default sentence speaks of invalid calls only, so a policy user words it for both.
SYNTHETIC = SyntheticObservations(
    not_executed="The action was not executed: the call was invalid or the tool policy refused it."
)


def show(actions: list[Action], outcomes: tuple[ActionOutcome, ...]) -> None:
    for index, (action, outcome) in enumerate(zip(actions, outcomes, strict=True)):
        assert action.tool_call is not None
        print(f"  #{index} {action.tool_call.name}")
        print(f"     outcome: {outcome.status.name}: {outcome.observation}")
        print(f"     history: {observation_for_history(outcome, SYNTHETIC)}")


async def main() -> None:
    actions = turn()
    print("One turn under the policy (deciding runs call by call, in model order):")
    outcomes = await REGISTRY.batch_executor(policy=POLICY).execute_batch(actions)
    show(actions, outcomes)

    print("\nThe same read when the redaction fails (the observation is withheld):")
    failing = ToolPolicy(post=(broken_redaction,))
    outcome = await REGISTRY.executor(policy=failing).execute(actions[0])
    show(actions[:1], (outcome,))


if __name__ == "__main__":
    asyncio.run(main())
