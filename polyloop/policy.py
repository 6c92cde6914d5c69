"""Tool-call policy: decide, ask, wrap, post-process (contract section 11, P1–P12).

A valid call is not yet an allowed one. `ToolPolicy` puts fixed stages between validation and
the handler — deciders, an approver, wrappers around the handler, post-processors after it — so
rules attach without touching a tool, and so that the order of listeners can never turn a
denial back into permission (strictest wins). Every stage fails closed: a decider that raises
or answers garbage denies, an approver that answers anything but `True` refuses, and a
post-processor that fails withholds the observation it was meant to reshape.

The stages run on the executors' one dispatch path (`polyloop.tools`); this module holds the
values and their construction checks.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from polyloop._json import safe_repr, type_label
from polyloop.ports import ToolCall

__all__ = [
    "Approver",
    "Decider",
    "Decision",
    "PostProcessor",
    "ToolPolicy",
    "Verdict",
    "Wrapper",
]


class Decision(enum.Enum):
    """What a decider says about a call. Combined strictest-wins: DENY > ASK > ALLOW (P3)."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A decider's answer: a decision and, for the audit and the model, a reason."""

    decision: Decision
    reason: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.decision, Decision):
            raise TypeError(
                f"Verdict.decision must be a Decision (ALLOW, ASK or DENY), "
                f"got {type_label(self.decision)}"
            )
        if not isinstance(self.reason, str):
            raise TypeError(f"Verdict.reason must be a str, got {type_label(self.reason)}")


Decider = Callable[[ToolCall], Awaitable[Verdict | None]]
"""`async (call) -> Verdict | None`; `None` abstains."""

Approver = Callable[[ToolCall, tuple[str, ...]], Awaitable[bool]]
"""`async (call, reasons) -> bool`, asked when the combined decision is ASK; only `True` grants."""

Wrapper = Callable[[ToolCall, Callable[[], Awaitable[str]]], Awaitable[str]]
"""`async (call, proceed) -> str` around the handler; `proceed()` runs the rest of the chain."""

PostProcessor = Callable[[ToolCall, str], Awaitable[str]]
"""`async (call, observation) -> str`, reshaping an executed call's observation."""


def _listeners(field: str, value: object) -> tuple[object, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"ToolPolicy.{field} must be an iterable of async callables (e.g. a tuple), "
            f"got {type_label(value)}"
        )
    items = tuple(value)
    for position, item in enumerate(items):
        _check_async(f"{field}[{position}]", item)
    return items


def _check_async(where: str, item: object) -> None:
    from polyloop.tools import _is_async_callable  # tools imports this module

    if not callable(item):
        raise TypeError(f"ToolPolicy.{where} must be an async callable, got {type_label(item)}")
    if not _is_async_callable(item):
        raise TypeError(
            f"ToolPolicy.{where} must be an async callable; {safe_repr(item)} is not — "
            "declare it with `async def`"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """The stages every accepted tool call passes through (contract section 11).

    `ToolPolicy()` allows everything and behaves exactly like no policy. Arguments cannot be
    rewritten by any stage (P7): history, audit, the approver and the handler must agree on
    what ran, so an approver that wants other arguments denies and the model calls again.
    """

    deciders: tuple[Decider, ...] = ()
    approver: Approver | None = None
    wrappers: tuple[Wrapper, ...] = ()
    post: tuple[PostProcessor, ...] = ()
    default: Decision = Decision.ALLOW

    def __post_init__(self) -> None:
        object.__setattr__(self, "deciders", _listeners("deciders", self.deciders))
        if self.approver is not None:
            _check_async("approver", self.approver)
        object.__setattr__(self, "wrappers", _listeners("wrappers", self.wrappers))
        object.__setattr__(self, "post", _listeners("post", self.post))
        if not isinstance(self.default, Decision):
            raise TypeError(
                "ToolPolicy.default must be a Decision (Decision.ALLOW, ASK or DENY), "
                f"got {type_label(self.default)}"
            )
