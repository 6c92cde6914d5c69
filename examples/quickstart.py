"""polyloop in one screen: register three tools, send actions, print each outcome.

Run:  python examples/quickstart.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from polyloop import (
    Action,
    ReplayPolicy,
    SyntheticObservations,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    observation_for_history,
)


async def greet(arguments: dict[str, Any]) -> str:
    times = int(arguments.get("times", 1))  # JSON allows 3.0 for an integer
    return " ".join([f"Hello, {arguments['name']}!"] * times)


async def read_sensor(arguments: dict[str, Any]) -> str:
    # The backend is down: this is the environment's fault, not the call's.
    raise ToolEnvironmentError("sensor gateway unreachable (connection refused)")


async def divide(arguments: dict[str, Any]) -> str:
    if arguments["b"] == 0:
        raise ValueError("cannot divide by zero")
    return str(arguments["a"] / arguments["b"])


def arguments(
    types: dict[str, str], *, required: tuple[str, ...] = (), closed: bool = False
) -> dict[str, Any]:
    """A tool's `parameters`: plain JSON Schema for an object with these keys and JSON types.

    `closed` forbids undeclared keys (`"additionalProperties": false`).
    """
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in types.items()},
    }
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def build_registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolSpec(
                name="greet",
                description="Greet someone by name.",
                parameters=arguments(
                    {"name": "string", "times": "integer"}, required=("name",), closed=True
                ),
                replay_policy=ReplayPolicy.SAFE,
                handler=greet,
            ),
            ToolSpec(
                name="read_sensor",
                description="Read the temperature sensor.",
                parameters=arguments({}),
                handler=read_sensor,
            ),
            ToolSpec(
                name="divide",
                description="Divide a by b.",
                parameters=arguments({"a": "number", "b": "number"}, required=("a", "b")),
                handler=divide,
            ),
        ]
    )


def call(tool: str, **arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name=tool, arguments=arguments))


ACTIONS = [
    ("valid call", call("greet", name="Ada")),
    ("3.0 is an integer", call("greet", name="Bo", times=3.0)),
    ("missing key", call("greet", times=2)),
    ("undeclared key", call("greet", name="Cy", tone="warm")),
    ("true is no integer", call("greet", name="Di", times=True)),
    ("unknown tool", call("Greet", name="Ed")),
    ("environment down", call("read_sensor")),
    ("handler ValueError", call("divide", a=1, b=0)),
    ("valid division", call("divide", a=7, b=2)),
    ("code action", Action(code="print('hi')")),
]


async def main() -> None:
    registry = build_registry()
    executor = registry.executor()
    synthetic = SyntheticObservations()
    print("tools the model sees:", ", ".join(registry.names()))
    print()
    for label, action in ACTIONS:
        outcome = await executor.execute(action)
        print(
            f"{label:20} {outcome.status.name:13} synthetic={outcome.observation_is_synthetic!s:5}"
        )
        print(f"{'':20} observation: {outcome.observation}")
        print(f"{'':20} history:     {observation_for_history(outcome, synthetic)}")


if __name__ == "__main__":
    asyncio.run(main())
