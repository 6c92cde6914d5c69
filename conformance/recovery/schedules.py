"""What one recovery example is: the batch, the crash schedule, the registry changes, and what
happens between lifetimes (a changed batch for J9, store damage for J10).

A `Schedule` is plain data (hashable, JSON-able): the search draws it, the trial caches what
running it observed, and the report prints it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "CRASH_EVENTS",
    "DEFAULT_MAX_ATTEMPTS",
    "TOOLS",
    "TOOL_SCHEMA",
    "Call",
    "Schedule",
    "Tool",
]

CRASH_EVENTS = ("enter", "effect", "return", "started", "committed")
"""Where a lifetime kills itself, inside handler *i*: on entry, after its effect, just before
it returns; or just after the runtime reports call *i*'s ``started`` or ``committed`` record
durable (a runtime with ``observe_journal``; for one without, on the handler's entry or just
before it returns)."""

DEFAULT_MAX_ATTEMPTS = 3
"""J13's bound when the runtime does not say its own (`max_attempts` attribute)."""


@dataclass(frozen=True)
class Tool:
    name: str
    policy: str
    concurrent: bool
    kind: str
    """``ok`` returns its observation, ``env`` raises ToolEnvironmentError, ``bomb`` kills its
    process on every entry."""


TOOLS: Mapping[str, Tool] = MappingProxyType(
    {
        tool.name: tool
        for tool in (
            Tool("safe_par", "SAFE", True, "ok"),
            Tool("safe_seq", "SAFE", False, "ok"),
            Tool("never_par", "NEVER", True, "ok"),
            Tool("never_seq", "NEVER", False, "ok"),
            Tool("env_safe", "SAFE", True, "env"),
            Tool("env_never", "NEVER", False, "env"),
            Tool("bomb", "SAFE", False, "bomb"),
        )
    }
)
"""The kit's tools: both policies, both classifications, ordinary, ENV_ERROR and crash-loop
handlers."""

TOOL_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "properties": {"i": {"type": "integer"}, "x": {"type": "integer"}},
        "required": ["i"],
    }
)
"""Every kit tool's parameters (the lifetime's copy, `_lifetime.SCHEMA`, must match): the call's
index in the batch and a small payload."""

GHOST = "ghost"
"""A tool name no registry holds: the call is rejected (E2)."""


@dataclass(frozen=True)
class Call:
    tool: str | None
    """A name of `TOOLS`, `GHOST`, or None for a code action (E1)."""
    x: int = 0

    def as_json(self) -> dict[str, Any]:
        if self.tool is None:
            return {"code": f"print({self.x})"}
        return {"tool": self.tool, "x": self.x}

    def accepted(self) -> bool:
        return self.tool in TOOLS


@dataclass(frozen=True)
class Schedule:
    """One example: the batch, the lifetimes' crash points, and what changes between them."""

    calls: tuple[Call, ...]
    crashes: tuple[tuple[str, int], ...] = ()
    """One crash lifetime per entry, in order; a clean resume follows."""
    change: tuple[tuple[str, str], ...] = ()
    """From the second lifetime on, these tools have this policy (``absent``: unregistered;
    ``exclusive``: their policy kept, no longer concurrency-safe)."""
    other_batch: int | None = None
    """J9: after the crashes, one lifetime resumes the batch id with other calls, the first
    difference at index `other_batch`: that call changed (a code action becomes a tool call), or,
    at the batch's length, one call appended."""
    cut: bool = False
    """J9: the batch resumed ends just before index `other_batch` instead (a shorter batch)."""
    damage: bool = False
    """J10: after the batch is complete, one letter of call 0's recorded observation is
    changed in the target's files and the batch resumed once more."""
    notes: tuple[str, ...] = field(default=(), compare=False)

    def policy(self, tool: str, life: int) -> str:
        """The tool's replay policy in lifetime `life` (``absent`` when unregistered)."""
        if tool not in TOOLS:
            return "absent"
        if life > 0:
            for name, policy in self.change:
                if name == tool and policy != "exclusive":
                    return policy
        return TOOLS[tool].policy

    def concurrent(self, tool: str, life: int) -> bool:
        """Whether the tool is concurrency-safe in lifetime `life`."""
        exclusive = life > 0 and (tool, "exclusive") in self.change
        return TOOLS[tool].concurrent and not exclusive

    def tools_json(self, life: int) -> list[dict[str, Any]]:
        return [
            {
                "name": tool.name,
                "policy": self.policy(tool.name, life),
                "concurrent": self.concurrent(tool.name, life),
                "kind": tool.kind,
            }
            for tool in TOOLS.values()
        ]

    def other_calls(self) -> tuple[Call, ...]:
        """The changed batch J9 resumes with."""
        index = self.other_batch
        assert index is not None
        if self.cut:
            return self.calls[:index]
        if index >= len(self.calls):
            return (*self.calls, Call("safe_par", 7))
        changed = list(self.calls)
        old = changed[index]
        changed[index] = Call(old.tool, old.x + 1) if old.tool is not None else Call("safe_par")
        return tuple(changed)

    def has_bomb(self) -> bool:
        return any(call.tool == "bomb" for call in self.calls)

    def describe(self) -> str:
        """The schedule as a reader replays it in their head."""
        parts = []
        for index, (event, call) in enumerate(self.crashes):
            where = f"{event} record" if event in ("started", "committed") else event
            parts.append(f"lifetime {index}: SIGKILL at call {call}'s {where}")
        if self.change:
            changes = ", ".join(f"{tool} -> {policy}" for tool, policy in self.change)
            parts.append(f"from lifetime 1 on the registry has {changes}")
        if self.other_batch is not None and self.cut:
            parts.append(f"then a resume with the batch cut to {self.other_batch} call(s) (J9)")
        elif self.other_batch is not None:
            parts.append(f"then a resume with call {self.other_batch} changed (J9)")
        parts.append("then clean resumes until one returns, and one more")
        if self.damage:
            parts.append("then one letter of call 0's recorded observation changed, resume")
        return "; ".join(parts)

    def as_json(self) -> list[dict[str, Any]]:
        return [call.as_json() for call in self.calls]
