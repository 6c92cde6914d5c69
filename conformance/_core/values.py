"""JSON values, names and the constants the other strategy modules share."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

DIALECTS: Mapping[str | None, str] = {
    "draft-07": "http://json-schema.org/draft-07/schema#",
    None: "",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft-04": "http://json-schema.org/draft-04/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft-04 (no #)": "http://json-schema.org/draft-04/schema",
    "draft-06 (no #)": "http://json-schema.org/draft-06/schema",
    "draft-07 (no #)": "http://json-schema.org/draft-07/schema",
    "2020-12 (#)": "https://json-schema.org/draft/2020-12/schema#",
    "2019-09 (#)": "https://json-schema.org/draft/2019-09/schema#",
}
"""Dialect name -> ``$schema`` URI (None: no ``$schema``, which means 2020-12), most common
first: 75 of 83 real MCP tool schemas declare draft-07. The "(no #)" and "(#)" names are the
other spellings jsonschema recognises for the same dialects (a validator that knows only one
spelling takes the other for 2020-12). ``https://json-schema.org/draft-07/schema#`` is left
out: jsonschema does not recognise it, so what it means is up to each validator."""

OLD_DIALECT_NAMES = frozenset(name for name in DIALECTS if name and name.startswith("draft-0"))
"""The dialects in which ``$ref`` silences its siblings."""

SENTINEL_MARK = "zqSENTINEL"
"""Every string value in an invalid call contains this mark; no key or tool name does. A
rejection message containing it has echoed an argument value (V8)."""

SENTINEL_NUMBER_BASE = 7_301_000_000
"""Every number in an invalid call is replaced by ``SENTINEL_NUMBER_BASE + n`` (n < 1000, plus
``.5`` for a non-integral float): digits no key, type name, count or length contains, so a
rejection message containing them has echoed a number (V8)."""
_SENTINEL_NUMBER = re.compile(r"7,?301,?000,?\d{3}")

INVALID_AIMS = ("V2", "V3", "V4", "V5", "V6")

BEHAVIOUR_KINDS = (
    "text",
    "environment_error",
    "error",
    "error_like",
    "unprintable",
    "base_exception",
    "suspend",
    "non_str",
    "mutate",
    "yield",
    "sleep",
)
"""What `handler_behaviours` can produce; see its docstring."""


def has_sentinel(text: str) -> bool:
    """Whether a text contains an argument value from an invalid call (see `SENTINEL_MARK`
    and `SENTINEL_NUMBER_BASE`)."""
    return SENTINEL_MARK in text or _SENTINEL_NUMBER.search(text) is not None


_LITERAL_PARTNER: Mapping[Any, Any] = {True: False, False: True, None: False}
_LITERAL_WORDS = re.compile(r"(?<![A-Za-z0-9_])(?:true|false|null|True|False|None)(?![A-Za-z0-9_])")


def flipped_literals(value: Any) -> Any:
    """`value` with every boolean flipped and every null made ``False``: the partner call of
    V8's check for echoed booleans and nulls (see `echoes_literals`). Keys stay."""
    if isinstance(value, Mapping):
        return {key: flipped_literals(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [flipped_literals(item) for item in value]
    if value is None or isinstance(value, bool):
        return _LITERAL_PARTNER[value]
    return value


def has_literals(value: Any) -> bool:
    """Whether `value` holds a boolean or a null anywhere (so `flipped_literals` changes it)."""
    if isinstance(value, Mapping):
        return any(has_literals(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_literals(item) for item in value)
    return value is None or isinstance(value, bool)


def echoes_literals(text: str, partner_text: str) -> bool:
    """Whether two rejection messages, for a call and for its `flipped_literals` partner,
    differ only in the spelling of booleans and nulls (``true``/``True``, ``null``/``None``).

    A message may name ``null`` or ``false`` for reasons of its own (a type name, an
    ``additionalProperties: false``), so a word alone proves nothing. But the two calls differ
    only in those values, so such a word is the same in both messages unless it came from the
    value; and a message that merely names the JSON *type* says ``boolean``/``null`` where its
    partner says ``boolean``/``boolean``, which is not a literal spelling, so the texts differ
    elsewhere too. Only a message that prints the values themselves differs in exactly those
    words. (An executor whose partner message differs in other ways too is not accused.)"""
    if text == partner_text or not _LITERAL_WORDS.search(text):
        return False
    return _LITERAL_WORDS.sub("\x00", text) == _LITERAL_WORDS.sub("\x00", partner_text)


def sentinel_number(value: int | float, index: int) -> int | float:
    """The `index`-th sentinel number standing for `value`: of the same Python type, and
    integral exactly when `value` is (so it keeps its JSON types, V6)."""
    if isinstance(value, int):
        return SENTINEL_NUMBER_BASE + index % 1000
    integral = value.is_integer() if math.isfinite(value) else False
    return float(SENTINEL_NUMBER_BASE + index % 1000) + (0.0 if integral else 0.5)


# ---------------------------------------------------------------------------------------------
# JSON values and names

_WORDS = (
    "alpha",
    "beta",
    "main",
    "open",
    "closed",
    "README.md",
    "src/app.py",
    "2024-01-31",
    "https://example.com",
    "asc",
    "desc",
    "json",
    "text",
    "auto",
    "none",
)

# Strategies are built on first use and then kept (lru_cache): building one that draws text
# loads Hypothesis's Unicode tables, which must not happen while pytest is still importing its
# plugins (this package is one), and reusing one object spares Hypothesis re-validating it.


@lru_cache(maxsize=1)
def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-1000, 1000),
        st.sampled_from(_WORDS),
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    )


@lru_cache(maxsize=16)
def json_values(*, max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values (dicts, lists, str, int, finite float, bool, None)."""
    return st.recursive(
        _scalars(),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(property_names(), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )


_PROPERTY_WORDS = (
    "path",
    "query",
    "limit",
    "owner",
    "repo",
    "content",
    "tags",
    "options",
    "url",
    "timeout",
    "recursive",
    "mode",
    "id",
    "page",
    "per_page",
    "branch",
    "message",
    "max_results",
    "format",
    "lang",
    "filters",
    "entities",
    "items",
    "name",
    "type",
    "value",
    "headers",
    "body",
    "accountId",
    "dryRun",
)


def _clean_key(key: str) -> bool:
    return not has_sentinel(key)


def _identifiers(first: str, rest: str, longest: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda a, b: a + b, st.sampled_from(first), st.text(alphabet=rest, max_size=longest)
    )


_LOWER = "abcdefghijklmnopqrstuvwxyz"


@lru_cache(maxsize=1)
def property_names() -> st.SearchStrategy[str]:
    """Realistic property names (snake_case, camelCase), and now and then an odd one."""
    return st.one_of(
        st.sampled_from(_PROPERTY_WORDS),
        st.sampled_from(_PROPERTY_WORDS),
        _identifiers(_LOWER, _LOWER + "ABCDEFGHIJ0123456789_", 14),
        st.text(max_size=10),
    ).filter(_clean_key)


_TOOL_WORDS = (
    "read_file",
    "write_file",
    "search",
    "fetch",
    "list_directory",
    "create_issue",
    "get_weather",
    "browser_navigate",
    "run_query",
    "send_email",
    "accounts_list",
    "memory.create_entities",
    "search_repositories",
    "calc",
)


def _long_name(length: int) -> str:
    return ("very_long_tool_name_" * (length // 20 + 1))[:length]


@lru_cache(maxsize=2)
def tool_names(*, allow_long: bool = True) -> st.SearchStrategy[str]:
    """Tool names: realistic identifiers, dotted and dashed names, any non-blank text, and
    (with allow_long) names of hundreds or thousands of characters."""
    options = [
        st.sampled_from(_TOOL_WORDS),
        st.sampled_from(_TOOL_WORDS),
        _identifiers(_LOWER, _LOWER + "0123456789_", 20),
        _identifiers(_LOWER + "ABCXYZ", _LOWER + "ABCXYZ0123456789_.-", 30),
        st.text(min_size=1, max_size=16),
    ]
    if allow_long:
        options.append(st.integers(100, 3000).map(_long_name))
    return st.one_of(options).filter(lambda name: bool(name.strip()) and _clean_key(name))


_CONFUSABLES = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"}


def _near_misses(name: str) -> list[str]:
    """Names a careless lookup would confuse with `name`."""
    misses = [
        name.swapcase(),
        name.upper(),
        name + " ",
        " " + name,
        name + "\n",
        name + "\u200b",
        name[:-1],
        name + "s",
        name + "_v2",
        "functions." + name,
        "github/" + name,
        "mcp:" + name,
        "server__" + name,
        "default_api." + name,
        name.replace("_", ""),
        name.replace("_", "-"),
        name.replace("-", "_"),
        name.replace(".", "_"),
    ]
    for ascii_char, lookalike in _CONFUSABLES.items():
        if ascii_char in name:
            misses.append(name.replace(ascii_char, lookalike, 1))
            break
    if name and "a" <= name[0].lower() <= "z":
        misses.append(chr(ord(name[0]) + 0xFEE0) + name[1:])  # full-width first letter
    return [miss for miss in dict.fromkeys(misses) if miss and miss != name]
