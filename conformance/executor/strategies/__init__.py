"""Hypothesis strategies for tool schemas, registries, calls and handler behaviours.

These are public: a project can use them to test its own executor or tools beyond what
`certify` checks. The building blocks:

* `tool_schemas` — realistic ``parameters`` schemas: typed properties, nested objects and
  arrays, ``enum``/``const``, type lists, ``$defs``/``definitions`` with ``$ref`` (including the
  draft-07 trap of ``$ref`` with sibling keywords, at property level and at the root),
  ``patternProperties``, every form of ``additionalProperties``, the non-standard type names
  real schemas carry (``"dict"``, ``"float"``), under every dialect from draft-04 to 2020-12.
* `tool_definitions`, `tool_specs`, `registries` — tools built from those schemas.
* `valid_arguments` / `valid_calls` — what full JSON Schema accepts (V1): drawn from
  hypothesis-jsonschema and from the kit's own generator, always filtered through
  ``jsonschema`` under the schema's dialect, plus mutations neither generator produces on its
  own: int -> float (``3`` -> ``3.0``) and edge numbers (``1e16``, ``-0.0``, ``2**64 + 1``,
  ``10**400``), kept when the schema still accepts them. A schema nothing can satisfy simply
  yields nothing.
* `invalid_calls` — calls validation must reject, aimed at one of V2–V6 (near-miss tool names
  included), with every string value replaced by a `SENTINEL_MARK` string and every number
  by one near `SENTINEL_NUMBER_BASE`, so a rejection message that echoes a value is caught (V8).
* `beyond_subset_calls` — calls full JSON Schema rejects but the contract's subset does not
  (E14: either outcome conforms).
* `handler_behaviours`, `code_actions`, `observation_texts`.
"""

from __future__ import annotations

from conformance._core.arguments import pooled_arguments, valid_arguments, valid_calls
from conformance._core.values import (
    BEHAVIOUR_KINDS,
    DIALECTS,
    INVALID_AIMS,
    SENTINEL_MARK,
    SENTINEL_NUMBER_BASE,
    echoes_literals,
    flipped_literals,
    has_literals,
    has_sentinel,
    json_values,
    property_names,
    tool_names,
)
from conformance.executor.strategies.actions import (
    code_actions,
    handler_behaviours,
    observation_texts,
)
from conformance.executor.strategies.calls import aim_possible, beyond_subset_calls, invalid_calls
from conformance.executor.strategies.schemas import (
    REF_SIBLING_PROPERTY,
    REF_SIBLING_ROOT,
    SPECIAL_NAMES_TOOL,
    SPECIAL_PROPERTY_NAMES,
    TRAP_SCHEMAS,
    ToolDef,
    registries,
    schema_pool,
    tool_definition_sets,
    tool_definitions,
    tool_name_pool,
    tool_schemas,
    tool_set_pool,
    tool_specs,
)

__all__ = [
    "BEHAVIOUR_KINDS",
    "DIALECTS",
    "INVALID_AIMS",
    "REF_SIBLING_PROPERTY",
    "REF_SIBLING_ROOT",
    "SENTINEL_MARK",
    "SENTINEL_NUMBER_BASE",
    "SPECIAL_NAMES_TOOL",
    "SPECIAL_PROPERTY_NAMES",
    "TRAP_SCHEMAS",
    "ToolDef",
    "aim_possible",
    "beyond_subset_calls",
    "code_actions",
    "echoes_literals",
    "flipped_literals",
    "handler_behaviours",
    "has_literals",
    "has_sentinel",
    "invalid_calls",
    "json_values",
    "observation_texts",
    "pooled_arguments",
    "property_names",
    "registries",
    "schema_pool",
    "tool_definition_sets",
    "tool_definitions",
    "tool_name_pool",
    "tool_names",
    "tool_schemas",
    "tool_set_pool",
    "tool_specs",
    "valid_arguments",
    "valid_calls",
]
