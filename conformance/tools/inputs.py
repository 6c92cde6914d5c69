"""What the tool checks accept: tool drafts, JSON tool files, and their normalisation.

Accepted input: a `ToolSpec`; a `ToolDraft` (the same fields, unchecked, so a tool that
`ToolSpec` itself would refuse can still be diagnosed); a mapping in MCP (`inputSchema`),
OpenAI/BFCL (`parameters`), OpenAI `{"type": "function", "function": {...}}` or Anthropic
(`input_schema`) form; or any object with `name` and `parameters` attributes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance._core.text import describe_exception
from polyloop import ReplayPolicy, ToolRegistry, ToolSpec
from polyloop.tools import _is_async_callable as _spec_rule

__all__ = ["Tool", "ToolDraft", "as_items", "is_async_callable", "load_tool_file", "normalise"]


@dataclass(frozen=True, kw_only=True)
class ToolDraft:
    """A tool as its author wrote it, before `ToolSpec` checks it.

    The fields mirror `ToolSpec` (same names, order and defaults) without any validation, so a
    draft that passes every check converts with `ToolSpec(**vars(draft))`. Use it to diagnose a
    tool `ToolSpec` would refuse outright (a sync handler, S5; a set inside the schema, S4).
    """

    name: str
    description: str
    parameters: object
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER
    completes_run: bool = False
    handler: object = None

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any]) -> ToolDraft:
        """A draft from an MCP, OpenAI/BFCL or Anthropic tool definition (no handler)."""
        if entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
            entry = entry["function"]
        for key in ("inputSchema", "parameters", "input_schema"):
            if key in entry:
                parameters = entry[key]
                break
        else:
            raise ValueError(
                f"tool {entry.get('name')!r} has no schema: expected one of the keys "
                "'inputSchema' (MCP), 'parameters' (OpenAI/BFCL) or 'input_schema' (Anthropic)"
            )
        if "name" not in entry:
            raise ValueError(f"a tool definition has no 'name' (keys: {sorted(entry)})")
        return cls(
            name=entry["name"], description=entry.get("description", ""), parameters=parameters
        )


@dataclass(frozen=True, kw_only=True)
class Tool:
    """One tool under check, normalised from whatever the caller passed."""

    label: str
    name: object
    description: object
    parameters: object
    replay_policy: object
    handler: object
    registry: ToolRegistry | None
    registry_error: str | None
    model_entry: object = None
    has_model_entry: bool = False
    same_name: int = 1
    """How many tools of the list checked together have this tool's name (R2 allows one)."""

    @property
    def calls_handler(self) -> bool:
        """Whether the checks can call the handler (it is an async callable)."""
        return self.handler is not None and is_async_callable(self.handler)


def is_async_callable(handler: object) -> bool:
    """S5's rule, the very one `ToolSpec` applies (an `async def` function, an object with
    `async def __call__`, or a `functools.partial` of either), also for objects that never went
    through `ToolSpec`."""
    return _spec_rule(handler)


def _draft_of(item: object) -> ToolDraft | ToolSpec:
    if isinstance(item, (ToolSpec, ToolDraft)):
        return item
    if isinstance(item, Mapping):
        return ToolDraft.from_mapping(item)
    if hasattr(item, "name") and hasattr(item, "parameters"):
        return ToolDraft(
            name=item.name,
            description=getattr(item, "description", ""),
            parameters=item.parameters,
            replay_policy=getattr(item, "replay_policy", ReplayPolicy.NEVER),
            completes_run=getattr(item, "completes_run", False),
            handler=getattr(item, "handler", None),
        )
    raise TypeError(
        f"cannot check a {type(item).__name__}: pass a ToolSpec, a ToolDraft, a ToolRegistry, "
        "a tool definition mapping (MCP/OpenAI/BFCL), or an iterable of these"
    )


def _own_registry(tool: ToolDraft | ToolSpec) -> tuple[ToolRegistry | None, str | None]:
    """A one-tool registry for V1 validation; the handler is left out, as validation needs none."""
    try:
        spec = ToolSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,  # type: ignore[arg-type]
            replay_policy=tool.replay_policy,
            completes_run=tool.completes_run,
        )
        return ToolRegistry([spec]), None
    except Exception as exc:
        return None, f"ToolSpec refuses this tool ({describe_exception(exc)})"


def _field(item: object, name: str, default: object = None) -> object:
    try:
        return getattr(item, name)
    except AttributeError:  # a spec built with object.__new__ may lack slots
        return default


def normalise(items: Sequence[object], registry: ToolRegistry | None) -> list[Tool]:
    drafts = [_draft_of(item) for item in items]
    entries: list[object] | None = None
    if registry is not None:
        try:
            entries = list(registry.schema_for_model())
        except Exception:
            entries = None
    # A name that occurs twice (BFCL's corpus has such) gets its index, so labels stay unique.
    labels = [str(_field(draft, "name", "?")) for draft in drafts]
    counts = Counter(labels)
    repeated = {label for label, count in counts.items() if count > 1}
    tools = []
    for i, draft in enumerate(drafts):
        label = f"{labels[i]} #{i}" if labels[i] in repeated else labels[i]
        own, error = (registry, None) if registry is not None else _own_registry(draft)
        entry_known = entries is not None and i < len(entries)
        tools.append(
            Tool(
                label=label,
                name=_field(draft, "name"),
                description=_field(draft, "description", ""),
                parameters=_field(draft, "parameters"),
                replay_policy=_field(draft, "replay_policy", ReplayPolicy.NEVER),
                handler=_field(draft, "handler"),
                registry=own,
                registry_error=error,
                model_entry=entries[i] if entries is not None and entry_known else None,
                has_model_entry=entry_known,
                same_name=counts[labels[i]],
            )
        )
    return tools


def as_items(tools: object) -> tuple[list[object], ToolRegistry | None]:
    if isinstance(tools, ToolRegistry):
        return list(tools.specs), tools
    if isinstance(tools, (ToolSpec, ToolDraft, Mapping)):
        return [tools], None
    if isinstance(tools, (str, bytes)):
        raise TypeError("pass tools, not a string (for a JSON file use load_tool_file)")
    if isinstance(tools, Iterable):
        return list(tools), None
    return [tools], None


MAX_FILE_DEPTH = 200
"""The deepest nesting a tool file may have. Python's JSON parser recurses once per level, so a
JSON bomb (100,000 `[`) raises `RecursionError`; and data just short of the interpreter's limit
would make later recursive steps (copying, `json.dumps`, generation) raise instead. A tool's
schema deeper than S4's 64 levels but within this limit is read and reported per tool (H5)."""


def _depth_exceeded(data: object, limit: int) -> bool:
    """Whether parsed JSON data nests deeper than `limit` (iteratively: it never recurses)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _parse(text: str) -> object:
    """The JSON data of a tool file; `ValueError("nested too deeply")` for a JSON bomb."""
    too_deep = f"nested too deeply (more than {MAX_FILE_DEPTH} levels of arrays or objects)"
    try:
        data = json.loads(text)
    except RecursionError:  # the parser recurses once per level
        raise ValueError(too_deep) from None
    if _depth_exceeded(data, MAX_FILE_DEPTH):
        raise ValueError(too_deep)
    return data


def load_tool_file(path: str | os.PathLike[str]) -> list[ToolDraft]:
    """Tool definitions from a JSON file: a list of tools, or `{"tools": [...]}` (MCP
    `tools/list`). Each entry in MCP, OpenAI/BFCL or Anthropic form; none has a handler."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    data = _parse(text)
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if isinstance(data, Mapping) and ("name" in data or "function" in data):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of tool definitions or {{'tools': [...]}}")
    drafts = []
    for i, entry in enumerate(data):
        if not isinstance(entry, Mapping):
            raise ValueError(f"{path}: entry {i} is a {type(entry).__name__}, not an object")
        try:
            drafts.append(ToolDraft.from_mapping(entry))
        except ValueError as exc:
            raise ValueError(f"{path}: entry {i}: {exc}") from None
    return drafts
