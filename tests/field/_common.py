"""What every field adapter shares: the `ActionExecutor` frame, argument thawing, outcomes.

The adapters in this package are the code an integrator would write to put polyloop's
`ActionExecutor` port in front of a real tool runtime. Everything runtime-specific lives in the
adapter module (`FieldExecutor.call_tool`); this module only holds the decisions that are the
same for all four, so the divergences the kit reports come from the runtimes, not from four
different glue layers.
"""

from __future__ import annotations

import copy
import itertools
from abc import ABC, abstractmethod
from typing import Any

import _helpers

from conformance._core.data import thaw
from polyloop import Action, ActionOutcome, ActionStatus, ToolHandler, ToolRegistry, ToolSpec

__all__ = [
    "NO_TOOL_CALL",
    "FieldExecutor",
    "executed",
    "handler_of",
    "not_executed",
    "plain_json",
    "thaw",
    "unknown_tool",
]

NO_TOOL_CALL = "The action has no tool call; this executor runs tool calls only, not code."


def plain_json(value: Any) -> Any:
    """A plain copy of the call's deep-frozen arguments: dicts and lists, as a JSON decoder
    would have produced them (every runtime expects what came off the wire, not polyloop's
    read-only mappings and tuples), with private copies of non-JSON leaves (`_owned`)."""
    return _helpers.thaw(value, _owned)


def _owned(value: Any) -> Any:
    """A leaf of the caller's own: anything but a JSON scalar deep-copied, so a handler that
    mutates a non-JSON leaf (a set member, an object's attribute) changes neither the recorded
    call nor the next call's arguments (E13)."""
    return value if type(value) in (str, int, float, bool, type(None)) else copy.deepcopy(value)


def _outcome(status: ActionStatus, text: str, *, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def executed(text: str) -> ActionOutcome:
    """The tool ran (or the runtime answered the model as if it had): the model sees `text`."""
    return _outcome(ActionStatus.EXECUTED, text, synthetic=False)


def not_executed(text: str) -> ActionOutcome:
    """The runtime refused the call before any tool code ran."""
    return _outcome(ActionStatus.NOT_EXECUTED, text, synthetic=True)


def handler_of(spec: ToolSpec) -> ToolHandler:
    """The spec's handler, which every registry the kit certifies with has (it scripts them)."""
    handler = spec.handler
    assert handler is not None, f"tool {spec.name!r} has no handler; the adapters need one"
    return handler


class FieldExecutor(ABC):
    """The frame of every adapter: built from a registry, `parameters()` in the shape polyloop's
    own executor reports, a code action refused, and a tool call handed to the runtime
    (`call_tool`) with the call's deep-frozen arguments as plain JSON data — dicts and lists, as
    a JSON decoder would have produced them: every runtime expects what came off the wire."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._call_ids = itertools.count(1)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self._registry.names())}

    def next_call_id(self) -> str:
        """A fresh tool-call id (``call_1``, ``call_2``, ...), as a model's tool calls carry."""
        return f"call_{next(self._call_ids)}"

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return not_executed(NO_TOOL_CALL)
        return await self.call_tool(call.name, plain_json(call.arguments))

    @abstractmethod
    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        """Run the call through the runtime and map its result back to an `ActionOutcome`.
        `arguments` is usually a dict, but the kit also sends str, list and null (V3)."""


def _short(name: str, limit: int = 80) -> str:
    text = repr(name)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(name)} chars)"


def unknown_tool(name: str, registry: ToolRegistry) -> str:
    """The integrator's own message for a name that is not a tool, where the runtime has no
    dispatcher by name (LangChain): the tool and the visible tools, names only, long names
    shortened, so this glue does not decide V2 or V8 for the runtime."""
    visible = ", ".join(_short(n) for n in registry.names()[:20])
    return f"unknown tool {_short(name)}; available tools: {visible or 'none'}"
