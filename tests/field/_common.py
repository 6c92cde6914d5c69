"""What every field adapter shares: argument thawing, outcome constructors, parameters().

The adapters in this package are the code an integrator would write to put polyloop's
`ActionExecutor` port in front of a real tool runtime. Everything runtime-specific lives in the
adapter module; this module only holds the decisions that are the same for all four, so the
divergences the kit reports come from the runtimes, not from four different glue layers.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from polyloop import ActionOutcome, ActionStatus, ToolRegistry

NO_TOOL_CALL = "The action has no tool call; this executor runs tool calls only, not code."


def plain_json(value: Any) -> Any:
    """A plain copy of the call's deep-frozen arguments: dicts and lists, as a JSON decoder
    would have produced them. Every runtime expects what came off the wire, not polyloop's
    read-only mappings and tuples."""
    if isinstance(value, Mapping):
        return {_owned(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(item) for item in value]
    return _owned(value)


def _owned(value: Any) -> Any:
    """A leaf of the caller's own: anything but a JSON scalar deep-copied, so a handler that
    mutates a non-JSON leaf (a set member, an object's attribute) changes neither the recorded
    call nor the next call's arguments (E13)."""
    return value if type(value) in (str, int, float, bool, type(None)) else copy.deepcopy(value)


def executed(text: str) -> ActionOutcome:
    """The tool ran (or the runtime answered the model as if it had): the model sees `text`."""
    return ActionOutcome(
        status=ActionStatus.EXECUTED,
        observation=text,
        observation_is_synthetic=False,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def not_executed(text: str) -> ActionOutcome:
    """The runtime refused the call before any tool code ran."""
    return ActionOutcome(
        status=ActionStatus.NOT_EXECUTED,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def env_error(text: str) -> ActionOutcome:
    """The environment (the runtime's transport) is broken, not the call."""
    return ActionOutcome(
        status=ActionStatus.ENV_ERROR,
        observation=text,
        observation_is_synthetic=False,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def tool_parameters(registry: ToolRegistry) -> dict[str, str]:
    """Reproducibility parameters, the same shape polyloop's own executor reports."""
    return {"tools": ",".join(registry.names())}


def _short(name: str, limit: int = 80) -> str:
    text = repr(name)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(name)} chars)"


def unknown_tool(name: str, registry: ToolRegistry) -> str:
    """The integrator's own message for a name that is not a tool, where the runtime has no
    dispatcher by name (LangChain): the tool and the visible tools, names only, long names
    shortened, so this glue does not decide V2 or V8 for the runtime."""
    visible = ", ".join(_short(n) for n in registry.names()[:20])
    return f"unknown tool {_short(name)}; available tools: {visible or 'none'}"
