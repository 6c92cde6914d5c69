"""The seam between a run and whatever executes its actions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from polyloop._json import freeze_arguments, thaw, type_label
from polyloop.types import ActionOutcome

__all__ = [
    "Action",
    "ActionExecutor",
    "BatchExecutor",
    "BatchJournal",
    "ToolCall",
    "plain_arguments",
]


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call as the model sent it.

    `arguments` is kept whatever its type (judging it is `ToolRegistry.validate`'s job), but
    mappings and lists inside it are stored deep-frozen and every other leaf that is not an
    exact JSON scalar as a private deep copy, so the recorded call can never change after the
    fact — not even when a handler mutates what it was given (E13). A leaf of which no private
    copy can be made raises `TypeError` naming its path (see `freeze_arguments` for why
    refusing beats sharing).
    """

    name: str
    arguments: Any

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"ToolCall.name must be a str, got {type_label(self.name)}")
        object.__setattr__(self, "arguments", freeze_arguments(self.arguments))


@dataclass(frozen=True, kw_only=True)
class Action:
    """One step of an agent: either a tool call or a block of code, never both."""

    tool_call: ToolCall | None = None
    code: str | None = None

    def __post_init__(self) -> None:
        if self.tool_call is not None and not isinstance(self.tool_call, ToolCall):
            raise TypeError(
                f"Action.tool_call must be a ToolCall, got {type_label(self.tool_call)}"
            )
        if self.code is not None and not isinstance(self.code, str):
            raise TypeError(f"Action.code must be a str, got {type_label(self.code)}")
        if (self.tool_call is None) == (self.code is None):
            raise ValueError("an Action needs exactly one of tool_call= or code=")


@runtime_checkable
class ActionExecutor(Protocol):
    """Anything that turns an action into an outcome."""

    async def execute(self, action: Action) -> ActionOutcome:
        """Run `action` and describe what happened."""
        ...

    def parameters(self) -> Mapping[str, str]:
        """Settings that a run must record to be reproducible."""
        ...


class BatchJournal(Protocol):
    """The durable record a loop keeps of one model turn's calls (contract section 10).

    `started(i, action)` comes immediately before call *i*'s handler is entered and
    `committed(i, outcome)` once per call in model order, so after a crash a call with a
    `started` and no `committed` is exactly one whose effects are unknown.
    """

    async def started(self, index: int, action: Action) -> None:
        """Record that call `index` is about to run."""
        ...

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        """Record call `index`'s final outcome."""
        ...


@runtime_checkable
class BatchExecutor(Protocol):
    """Anything that runs one model turn's actions and answers each in model order."""

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        """Run `actions`; `out[i]` answers `actions[i]`."""
        ...

    def parameters(self) -> Mapping[str, str]:
        """Settings that a run must record to be reproducible."""
        ...


def plain_arguments(call: ToolCall) -> Any:
    """A fresh plain copy of `call.arguments`: `dict`s and `list`s, JSON leaves unchanged.

    `ToolCall` stores its arguments read-only (mappings as `MappingProxyType`, lists as
    tuples), which is right for a record but not for code that expects JSON data: `jsonschema`
    rejects a tuple as an `array`, and `json.dumps` cannot write a read-only mapping. This gives
    the executor what a handler gets (E13): a new tree on every call, so mutating it changes
    neither the call nor a later copy; a leaf the call keeps as a private copy (a set, an
    object) comes back as a fresh copy of its own.
    """
    if not isinstance(call, ToolCall):
        raise TypeError(f"plain_arguments() takes a ToolCall, got {type_label(call)}")
    return thaw(call.arguments)
