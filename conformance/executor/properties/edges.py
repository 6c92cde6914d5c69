"""Hand-picked inputs at the edges of the dispatch clauses, which every run tries first: code
that reads like a tool call (E1), texts an executor that "tidies" would change (E5), and keys,
values and leaves that attack the code handling them (E2, E13) — a key whose ``__eq__`` raises,
a value whose class hides its ``__name__``, leaves that are not JSON and that a handler can
mutate (the last found by mutation analysis, docs/detection.md)."""

from __future__ import annotations

import json
from typing import Any

from conformance.executor.behaviours import (
    HOSTILE_ERROR_KINDS,
    HOSTILE_NON_STR_KINDS,
    HOSTILE_STR_RAISES_KINDS,
    MutateArguments,
    RaiseError,
    RaiseUnprintable,
    ReturnNonStr,
    ReturnText,
)
from conformance.executor.properties.scenarios import Scenario, object_tool, trap, twice
from conformance.executor.properties.scenarios import call as _call

__all__ = [
    "CODE_LIKE_CALLS",
    "EXACT_TEXTS",
    "STR_SUBCLASS_TEXT",
    "hostile_arguments",
    "hostile_traps",
    "json_leaves",
    "non_json_leaves",
]

EXACT_TEXTS = (
    "x" * 120_000,
    "a\r\nb\r\n",
    "cafe\u0301",  # NFD: NFC would make it "caf\u00e9"
    "x  \n\ty\t\n",
    "tail  ",
    "\x7f\x85\u2028\u2029",
    "\x00\x1b[31m red",
)
"""E5: texts an executor that "tidies" its observation changes."""


class _OwnText(str):
    """A handler's text of a `str` subclass (an `enum.StrEnum` member, a markup string)."""


STR_SUBCLASS_TEXT: str = _OwnText("the text of a str subclass")
"""E5: a `str` subclass is a `str`, as `isinstance` sees it (contract, "What certification
judges"): the observation is its text, EXECUTED, not synthetic."""

CODE_LIKE_CALLS = (
    json.dumps({"name": "search", "arguments": {"q": "x"}}),
    json.dumps({"type": "function", "function": {"name": "search", "arguments": "{}"}}),
    '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>',
    'search(q="x")',
    'Action: search\nAction Input: {"q": "x"}',
)
"""E1: code that reads like a call of one of the trap tools."""


class _HostileKey:
    """A key hashed like ``"q"`` whose ``__eq__`` raises: ``"q" in arguments`` runs it (E2)."""

    def __hash__(self) -> int:
        return hash("q")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("a hostile key's __eq__ was called")

    def __repr__(self) -> str:
        return "<key hashed like 'q' whose __eq__ raises>"


class _HostileStr(str):
    """A str subclass key whose ``__eq__`` raises: it is the key ``"q"`` to validation (E2)."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("a hostile str key's __eq__ was called")


class _NamelessMeta(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("this value's class hides its __name__")


class _NamelessValue(metaclass=_NamelessMeta):
    """A value of no JSON type whose class's ``__name__`` raises: a rejection message that
    names the type it got must not crash (E2)."""

    def __repr__(self) -> str:
        return "<a value whose class hides its __name__>"


class _Box:
    """A non-JSON leaf hashed by identity that holds a list a handler can append to (E13)."""

    __hash__ = object.__hash__

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __repr__(self) -> str:
        return f"<box items={self.items!r}>"


class _NotedStr(str):
    """A str subclass leaf carrying a mutable attribute (E13)."""

    notes: list[Any]


def _noted(text: str) -> _NotedStr:
    noted = _NotedStr(text)
    noted.notes = []
    return noted


_KEYED = object_tool(
    "keyed", {"q": {"type": "string"}}, description="A tool requiring q.", required=["q"]
)
_CLOSED_KEYED = object_tool(
    "closed_keyed",
    {"q": {"type": "string"}},
    description="A closed tool.",
    additionalProperties=False,
)
_OPEN = object_tool("open", {}, description="An open tool.")


def hostile_arguments() -> list[Scenario]:
    """E2: calls validation must reject whose keys or values attack the validator itself — a
    key whose hash is a declared key's and whose ``__eq__`` raises, a str subclass key with a
    raising ``__eq__``, a value whose class's ``__name__`` raises. ``execute`` must still return
    a rejection: validation raises only ToolValidationError."""
    tools = (_KEYED, _CLOSED_KEYED)
    return [
        trap(_call("keyed", {_HostileKey(): "x"}), among=tools),
        trap(_call("keyed", {_HostileStr("q"): 1}), among=tools),
        trap(_call("keyed", {"q": _NamelessValue()}), among=tools),
        trap(_call("closed_keyed", {_HostileKey(): "x"}), among=tools),
    ]


def json_leaves() -> list[Scenario]:
    """E13: JSON arguments nested as a decoded call nests them, sent twice to a handler that
    mutates whatever it can reach: a shallow copy lets the mutation reach the recorded call
    and the next call."""
    vandal = MutateArguments(then=ReturnText(text="mutated"))
    return [
        twice(_OPEN, {"q": "x"}, vandal),
        twice(_OPEN, {"tags": ["a", "b"], "meta": {"k": "v"}}, vandal),
        twice(_OPEN, {"deep": {"list": [{"n": 1}, [2, 3]], "none": None}, "ok": True}, vandal),
    ]


def non_json_leaves() -> list[Scenario]:
    """E13: arguments with leaves that are not JSON — a set of objects with a mutable list, a
    str subclass with a list attribute, a bytearray, an object as a key — sent twice to a
    handler that mutates whatever it can reach: an executor that shares such a leaf with the
    handler lets the mutation reach the recorded call and the next call."""
    vandal = MutateArguments(then=ReturnText(text="mutated"))
    return [
        twice(_OPEN, {"tags": {_Box()}}, vandal),
        twice(_OPEN, {"label": _noted("x"), "raw": bytearray(b"ab")}, vandal),
        twice(_OPEN, {_Box(): "object key", "q": "x"}, vandal),
        # Only a non-str key, and scalar values: a flat-call fast path must still copy the key.
        twice(_OPEN, {_Box(): "the only key"}, vandal),
    ]


def hostile_traps() -> dict[str, list[Scenario]]:
    """Clause ID -> traps built from objects that lie about themselves, tried only at level
    ``hardened``: no JSON-decoded call or real handler produces them, so a ``core``/``strict``
    verdict never rests on them (CONTRACT.md section 5, "What certification judges")."""
    return {
        "E2": hostile_arguments(),
        "E4": [
            trap(_call("search", {"q": "x"}), RaiseError(kind=kind, message="x"))
            for kind in HOSTILE_ERROR_KINDS
        ],
        "E9": [
            trap(_call("search", {"q": "x"}), ReturnNonStr(kind=kind))
            for kind in HOSTILE_NON_STR_KINDS
        ],
        "E12": [
            trap(_call("search", {}), RaiseUnprintable(environment=environment, raises=raises))
            for raises in HOSTILE_STR_RAISES_KINDS
            for environment in (False, True)
        ],
        "E13": non_json_leaves(),
    }
