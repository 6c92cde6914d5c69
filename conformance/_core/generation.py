"""The kit's one door to hypothesis-jsonschema.

Every use of hypothesis-jsonschema in the kit goes through `from_schema` here (the valid-argument
generator in `conformance.strategies`, and through it the tool checks' H3/H4/H6). The library
itself is reached only through `conformance._hjs_compat`, the bridge to current Hypothesis.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

__all__ = ["from_schema", "schema_strategy"]


def from_schema(schema: Any) -> st.SearchStrategy[Any]:
    """hypothesis-jsonschema's strategy for `schema`, built eagerly.

    hypothesis-jsonschema reports a schema it cannot handle (unresolvable, unsupported) only when
    drawing; its internal entry point raises at once, so such a schema is a property of the
    schema, not a crash later. Raises whatever hypothesis-jsonschema raises."""
    from conformance._hjs_compat import hjs_module as _hj

    build = getattr(_hj, "__from_schema", None)
    if build is None:
        return _hj.from_schema(schema)
    alphabet = _hj.CharStrategy.from_args(allow_x00=True, codec="utf-8")
    strategy: st.SearchStrategy[Any] = build(schema, alphabet=alphabet, custom_formats=None)
    return strategy


@lru_cache(maxsize=512)
def schema_strategy(schema_json: str) -> st.SearchStrategy[Any] | None:
    """`from_schema` for a schema given as JSON text, or None when it cannot build one."""
    try:
        return from_schema(json.loads(schema_json))
    except Exception:
        return None
