"""Where each tool of a JSON tool file starts: line numbers for check-tools' annotations."""

from __future__ import annotations

import json

_WHITESPACE = " \t\n\r"
"""What JSON counts as whitespace between tokens (RFC 8259), exactly what `json` skips."""


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _after(text: str, end: int, close: str) -> int | None:
    """Where the next member starts after one that ended at `end`, or None at `close`."""
    at = _skip(text, end)
    if text[at] == close:
        return None
    if text[at] != ",":
        raise ValueError(f"expected ',' or '{close}' at offset {at}")
    return _skip(text, at + 1)


def _array_items(text: str, at: int, decoder: json.JSONDecoder) -> list[tuple[object, int]]:
    """(value, offset) of each item of the JSON array opening at ``text[at]``."""
    items: list[tuple[object, int]] = []
    first = _skip(text, at + 1)
    if text[first] == "]":
        return items
    start: int | None = first
    while start is not None:
        value, end = decoder.raw_decode(text, start)
        items.append((value, start))
        start = _after(text, end, "]")
    return items


def _tools_array(text: str, at: int, decoder: json.JSONDecoder) -> int | None:
    """The offset of the value of the top-level object's last ``"tools"`` key (the one
    `json.loads` keeps), or None when it has none."""
    found = None
    first = _skip(text, at + 1)
    if text[first] == "}":
        return None
    start: int | None = first
    while start is not None:
        key, end = decoder.raw_decode(text, start)
        at = _skip(text, end)
        if text[at] != ":":
            raise ValueError(f"expected ':' at offset {at}")
        at = _skip(text, at + 1)
        if key == "tools":
            found = at
        _value, end = decoder.raw_decode(text, at)
        start = _after(text, end, "}")
    return found


def json_tool_entries(text: str) -> list[tuple[object, int]] | None:
    """(entry, line) of each tool definition in a JSON tool file, in the order
    `load_tool_file` reads them (a list, MCP's ``{"tools": [...]}``, or one definition); None
    when the text is not such a file. `json` keeps no positions, so the few top-level tokens
    are scanned here and every value is decoded by `json` itself (`raw_decode` at its offset)."""
    decoder = json.JSONDecoder()
    try:
        data = decoder.decode(text)
        start = _skip(text, 0)
        if isinstance(data, list):
            located = _array_items(text, start, decoder)
        elif isinstance(data, dict) and isinstance(data.get("tools"), list):
            at = _tools_array(text, start, decoder)
            located = [] if at is None else _array_items(text, at, decoder)
        elif isinstance(data, dict) and ("name" in data or "function" in data):
            located = [(data, start)]
        else:
            return None
    except (ValueError, IndexError, RecursionError):
        return None
    entries, line, counted = [], 1, 0
    for value, at in located:  # offsets ascend: count each stretch of text once
        line += text.count("\n", counted, at)
        counted = at
        entries.append((value, line))
    return entries
