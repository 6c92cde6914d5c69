"""The kit's one door to hypothesis-jsonschema.

Every use of hypothesis-jsonschema in the kit goes through `from_schema` here (the valid-argument
generator in `conformance._core.arguments`, and through it the tool checks' H3/H4/H6). The
library itself is reached only through `conformance._core.hjs_compat`, the bridge to current
Hypothesis.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from conformance._core.dialect import in_place_ref_cycle, unresolved_refs

__all__ = ["MAX_ENUM_ITEMS", "SchemaRefused", "from_schema", "refusal", "schema_strategy"]

MAX_ENUM_ITEMS = 2000
"""The most items one `enum` may list for the kit to generate from the schema.

hypothesis-jsonschema's canonicalisation is quadratic in an enum's length (8,000 items took
14 s, 1,000,000 never finished), so a longer enum is reported as not generated rather than
hanging the run. Real enums (countries, languages, time zones) stay well below."""


class SchemaRefused(ValueError):
    """The kit does not generate from this schema; the message says why (see `refusal`)."""


def refusal(schema: object) -> str | None:
    """Why the kit does not hand `schema` to hypothesis-jsonschema, or None when it does.

    A `$ref` that does not resolve within the schema (the kit never retrieves one), a `$ref`
    loop that never descends into the value (`in_place_ref_cycle`), or an `enum` longer than
    `MAX_ENUM_ITEMS`. Linear in the schema's size, never recursing."""
    largest = 0
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "enum" and isinstance(value, list):
                    largest = max(largest, len(value))
                elif key not in ("const", "default", "examples"):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    if largest > MAX_ENUM_ITEMS:
        return (
            f"schema too large ({largest} enum items; "
            f"the kit generates from at most {MAX_ENUM_ITEMS})"
        )
    unresolved = unresolved_refs(schema, limit=1)
    if unresolved:
        kind = "external " if unresolved[0].external else ""
        return f"{kind}$ref {unresolved[0].ref!r} is not resolved (the kit never retrieves one)"
    cycle = in_place_ref_cycle(schema)
    if cycle is not None:
        return f"$ref {cycle[1]!r} loops back to the same value (validation recurses forever)"
    return None


def from_schema(schema: Any) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for `schema`, built eagerly.

    hypothesis-jsonschema reports a schema it cannot handle (unresolvable, unsupported) only when
    drawing; its internal entry point raises at once, so such a schema is a property of the
    schema, not a crash later. Raises `SchemaRefused` for a schema the kit does not generate
    from (`refusal`), else whatever hypothesis-jsonschema raises."""
    from conformance._core.hjs_compat import hjs_module as _hj

    why = refusal(schema)
    if why is not None:
        raise SchemaRefused(why)
    build = getattr(_hj, "__from_schema", None)
    if build is None:
        return _hj.from_schema(schema)
    alphabet: Any = _hj.CharStrategy.from_characters_args(
        min_codepoint=0, categories=_UTF8_CATEGORIES
    )
    # What `CharStrategy.from_args(allow_x00=True, codec="utf-8")` makes, without its codec
    # table: Hypothesis builds that by encoding every code point (seconds, whenever its cache
    # directory is new, as in a fresh CI job), and UTF-8 encodes every code point but the
    # surrogates, which are exactly the ``Cs`` category left out here.
    alphabet.allow_x00 = True
    alphabet.codec = "utf-8"
    strategy: st.SearchStrategy[Any] = build(schema, alphabet=alphabet, custom_formats=None)
    return strategy


_UTF8_CATEGORIES: Any = (
    *("Cc", "Cf", "Cn", "Co", "Ll", "Lm", "Lo", "Lt", "Lu", "Mc", "Me", "Mn", "Nd", "Nl", "No"),
    *("Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "Sc", "Sk", "Sm", "So", "Zl", "Zp", "Zs"),
)
"""Every Unicode general category but ``Cs`` (surrogates): the characters UTF-8 encodes."""


@lru_cache(maxsize=512)
def schema_strategy(schema_json: str) -> st.SearchStrategy[Any] | None:
    """`from_schema` for a schema given as JSON text, or None when it cannot build one."""
    try:
        return from_schema(json.loads(schema_json))
    except Exception:
        return None
