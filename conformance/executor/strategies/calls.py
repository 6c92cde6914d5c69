"""Calls validation must reject (V2-V6, V8), and calls only full JSON Schema rejects (E14)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hypothesis import assume, reject
from hypothesis import strategies as st

from conformance._core.arguments import _tools, arguments_for
from conformance._core.values import (
    INVALID_AIMS,
    SENTINEL_MARK,
    _clean_key,
    _near_misses,
    json_values,
    property_names,
    sentinel_number,
    tool_names,
)
from conformance.executor.oracle import (
    closed_properties,
    effective_required,
    full_validator,
    json_types_of,
    must_reject,
    typed_properties,
)
from polyloop import ToolCall, ToolRegistry

# ---------------------------------------------------------------------------------------------
# Calls validation must reject, and calls only full JSON Schema rejects


def _sentinelized(value: Any, padding: int, counter: list[int]) -> Any:
    if isinstance(value, Mapping):
        return {key: _sentinelized(item, padding, counter) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sentinelized(item, padding, counter) for item in value]
    if isinstance(value, str):
        counter[0] += 1
        return f"{SENTINEL_MARK}{counter[0]}" + "-value" * (padding // 6)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        counter[0] += 1
        return sentinel_number(value, counter[0])
    return value


@st.composite
def _sentinels(draw: st.DrawFn, value: Any) -> Any:
    """`value` with every string leaf (not key) replaced by a distinct sentinel string, short
    or thousands of characters long, and every number by a distinct sentinel number."""
    return _sentinelized(value, draw(st.sampled_from([0, 0, 0, 40, 5000])), [0])


def aim_possible(aim: str, schema: Mapping[str, Any]) -> bool:
    """Whether `invalid_calls` can aim at this clause with a tool of this ``parameters``
    schema (V2 and V3 always can)."""
    if aim == "V4":
        return bool(effective_required(schema))
    if aim == "V5":
        return closed_properties(schema) is not None
    if aim == "V6":
        return bool(typed_properties(schema))
    return True


_WRONG_VALUES: tuple[Any, ...] = (
    True,
    False,
    "7",
    None,
    7,
    -1,
    2.5,
    "text",
    ["text"],
    {"k": "text"},
    [],
    {},
    True,
    "1.5",
)
"""Values of the wrong JSON type for some declared type; the near misses (a bool for a number,
a number in a string) come twice as often."""


def _not_a_mapping(
    draw: st.DrawFn, name: str, schema: Any, *, upstream: bool, pool_seed: int | None
) -> ToolCall:
    """V3: a call to `name` whose arguments are not a mapping (none, the JSON text of valid
    arguments, their key/value pairs, a list or a scalar), every string with the sentinel."""
    base = draw(
        arguments_for(schema, upstream=upstream, pool_seed=pool_seed) | st.just({"query": "text"})
    )
    wrong = draw(st.sampled_from(["none", "json text", "pairs", "list", "scalar"]))
    if wrong == "none":
        return ToolCall(name=name, arguments=None)
    if wrong == "json text":
        return ToolCall(name=name, arguments=json.dumps(draw(_sentinels(base))))
    if wrong == "pairs":
        pairs = [[key, value] for key, value in base.items()] or [["query", "text"]]
        return ToolCall(name=name, arguments=draw(_sentinels(pairs)))
    if wrong == "list":
        return ToolCall(
            name=name,
            arguments=draw(_sentinels(draw(st.lists(json_values(max_leaves=3), max_size=3)))),
        )
    scalar = draw(st.sampled_from([0, 1.5, True, "text"]))
    return ToolCall(name=name, arguments=draw(_sentinels(scalar)))


@st.composite
def invalid_calls(
    draw: st.DrawFn,
    tools: ToolRegistry | Sequence[Any],
    aims: Iterable[str] = INVALID_AIMS,
    *,
    upstream: bool = True,
    pool_seed: int | None = None,
) -> ToolCall:
    """A ToolCall that validation must reject, aimed at one of `aims` (V2–V6) and otherwise
    as valid as possible (`upstream` and `pool_seed`: as for `valid_calls`, for the valid part).
    Every string value in its arguments contains `SENTINEL_MARK`."""
    listed = _tools(tools)
    names = {name for name, _ in listed}
    possible = [
        aim for aim in aims if aim == "V2" or any(aim_possible(aim, schema) for _, schema in listed)
    ]
    if not possible:
        reject()
    aim = draw(st.sampled_from(possible))
    if aim == "V2":
        near_miss = draw(st.booleans())
        if listed and near_miss:
            near = draw(st.sampled_from([name for name, _ in listed]))
            name = draw(st.sampled_from(_near_misses(near)))
        else:
            name = draw(tool_names() | st.sampled_from(["", " ", "\t", "unknown_tool"]))
        assume(name not in names)
        arguments = draw(st.dictionaries(property_names(), json_values(max_leaves=4), max_size=3))
        return ToolCall(name=name, arguments=draw(_sentinels(arguments)))
    name, schema = draw(st.sampled_from([(n, s) for n, s in listed if aim_possible(aim, s)]))
    if aim == "V3":
        return _not_a_mapping(draw, name, schema, upstream=upstream, pool_seed=pool_seed)
    if aim == "V4":
        required = effective_required(schema)
        base = draw(arguments_for(schema, upstream=upstream, pool_seed=pool_seed) | st.just({}))
        drop = draw(st.lists(st.sampled_from(required), min_size=1, unique=True))
        arguments = {key: value for key, value in base.items() if key not in drop}
    elif aim == "V5":
        allowed = closed_properties(schema) or frozenset()
        base = draw(arguments_for(schema, upstream=upstream, pool_seed=pool_seed))
        candidates = [miss for key in sorted(allowed) for miss in _near_misses(key)]
        extra_key = st.one_of(
            property_names(),
            st.integers(100, 3000).map(lambda n: ("extra_key_" * (n // 10 + 1))[:n]),
            *([st.sampled_from(candidates)] if candidates else []),
        )
        extras = draw(
            st.lists(
                extra_key.filter(lambda k: k not in allowed and _clean_key(k)),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        # An undeclared key set to null is still an undeclared key: an executor that drops
        # null-valued keys ("null means absent") instead of rejecting them breaks V5.
        size = len(extras)
        values = draw(st.lists(st.sampled_from(("text", None)), min_size=size, max_size=size))
        arguments = {**base, **dict(zip(extras, values, strict=True))}
    else:  # V6
        typed = typed_properties(schema)
        key = draw(st.sampled_from(sorted(typed)))
        base = draw(arguments_for(schema, upstream=upstream, pool_seed=pool_seed))
        wrong_values = [
            v for v in _WRONG_VALUES if json_types_of(v) and not json_types_of(v) & typed[key]
        ]
        assume(wrong_values)
        arguments = {**base, key: draw(st.sampled_from(wrong_values))}
    return ToolCall(name=name, arguments=draw(_sentinels(arguments)))


_ODD_VALUES: tuple[Any, ...] = (None, "x", 0, -1, 1.5, True, [], {}, [None], {"zz": None})


def _variants(value: Any, depth: int = 0) -> list[Any]:
    """Values near `value`. At the top level (depth 0) they keep its JSON type, so the subset
    has nothing to object to, while enums, ranges, lengths and nested schemas may break."""
    found: list[Any] = []
    if isinstance(value, bool):
        found.append(not value)
    elif isinstance(value, int):
        found += [value + 10**6, value - 10**6]
        if abs(value) < 2**53:  # beyond, no float equals it (and 10**400 has no float at all)
            found.append(float(value))
    elif isinstance(value, float):
        found += [value + 1e9, -value - 1e9]
    elif isinstance(value, str):
        found += [f"{SENTINEL_MARK}-not-allowed", "", "x" * 200]
    elif isinstance(value, list):
        found += [[], [*value, *value], *([*value, odd] for odd in _ODD_VALUES[:4])]
        if value and depth < 3:
            found += [[variant, *value[1:]] for variant in _variants(value[0], depth + 1)]
    elif isinstance(value, dict):
        found += [{**value, "zz_extra": odd} for odd in _ODD_VALUES[:3]]
        found += [{k: v for k, v in value.items() if k != key} for key in value]
        if depth < 2:
            for key, item in value.items():
                found += [{**value, key: variant} for variant in _variants(item, depth + 1)]
    if depth > 0:
        found += [odd for odd in _ODD_VALUES if odd != value]
    return found


@st.composite
def beyond_subset_calls(
    draw: st.DrawFn,
    tools: ToolRegistry | Sequence[Any],
    *,
    upstream: bool = True,
    pool_seed: int | None = None,
) -> ToolCall:
    """A ToolCall that full JSON Schema rejects but the contract's subset accepts (E14): an
    enum or range violation, a broken nested object, an extra key an
    ``additionalProperties`` schema or ``patternProperties`` forbids, ``3.0`` for a draft-04
    integer, ... One such variant of one valid call: the first that qualifies from a drawn
    place in the list of variants on (each variant costs two validations, so they are not all
    judged first); none means the example is rejected. `upstream` and `pool_seed`: as for
    `valid_calls`, for the valid call the variants start from."""
    listed = _tools(tools)
    if not listed:
        reject()
    name, schema = draw(st.sampled_from(listed))
    arguments = draw(arguments_for(schema, upstream=upstream, pool_seed=pool_seed))
    schemas = {n: s for n, s in listed}
    validator = full_validator(schema)
    extra_keys = [
        {**arguments, key: odd}
        for key in ("zz_extra", "x-extra", "42")
        for odd in ("x", 1, None)
        if key not in arguments
    ]
    variants = [*extra_keys, *_variants(arguments)][:150]
    if not variants:
        reject()
    start = draw(st.integers(0, len(variants) - 1))
    for variant in variants[start:] + variants[:start]:
        if (
            isinstance(variant, dict)
            and not validator.is_valid(variant)
            and not must_reject(schemas, name, variant)
        ):
            return ToolCall(name=name, arguments=variant)
    reject()
