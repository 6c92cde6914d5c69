"""The public strategies keep their promises (checked against the oracle and jsonschema)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance._core.values import _near_misses
from conformance.executor import strategies as gen
from conformance.executor.behaviours import plain_copy
from conformance.executor.oracle import accepts, full_validator, must_reject, schemas_of
from polyloop import Action, RegistryExecutor, ToolRegistry, ToolSpec

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
POOL = gen.schema_pool(0, 120)
POOLED = gen.tool_definition_sets(max_size=3, schemas=st.sampled_from(POOL))


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for item in value.values() for k in _keys(item))]
    if isinstance(value, list):
        return [k for item in value for k in _keys(item)]
    return []


@SETTINGS
@given(gen.tool_schemas())
def test_tool_schemas_are_json_and_usable_as_ground_truth(schema: dict[str, Any]) -> None:
    assert json.loads(json.dumps(schema)) == schema
    full_validator(schema)  # builds without raising, whatever the dialect or type names
    ToolSpec(name="t", description="", parameters=schema)  # polyloop accepts it (S4)


def test_the_schema_pool_is_deterministic_and_covers_the_traps() -> None:
    assert gen.schema_pool(3, 50) == gen.schema_pool(3, 50)
    assert gen.schema_pool(3, 50) != gen.schema_pool(4, 50)
    pool = gen.schema_pool(0, 300)
    assert pool[: len(gen.TRAP_SCHEMAS)] == gen.TRAP_SCHEMAS
    dialects = {schema.get("$schema") for schema in pool}
    assert set(gen.DIALECTS.values()) - {""} <= dialects and None in dialects
    text = json.dumps(pool)
    for feature in (
        '"$ref"',
        '"patternProperties"',
        '"additionalProperties": {"not"',
        '"additionalProperties": {"type"',
        '"anyOf"',
        '"enum"',
        '"type": "dict"',
        '"definitions"',
        '"$defs"',
    ):
        assert feature in text, feature


@SETTINGS
@given(st.data())
def test_valid_calls_are_accepted_by_jsonschema_and_never_must_be_rejected(
    data: st.DataObject,
) -> None:
    tools = data.draw(POOLED)
    call = data.draw(gen.valid_calls(tools))
    schemas = schemas_of(tools)
    assert accepts(schemas[call.name], call.arguments)
    assert must_reject(schemas, call.name, call.arguments) == ()


@SETTINGS
@given(st.data())
def test_invalid_calls_hit_their_aim_and_carry_sentinels_only_in_values(
    data: st.DataObject,
) -> None:
    tools = data.draw(POOLED)
    aim = data.draw(st.sampled_from(gen.INVALID_AIMS))
    if not any(gen.aim_possible(aim, tool.parameters) for tool in tools):
        return
    call = data.draw(gen.invalid_calls(tools, [aim]))
    reasons = must_reject(schemas_of(tools), call.name, call.arguments)
    assert aim in {reason.clause for reason in reasons}
    assert not gen.has_sentinel(call.name)
    assert not any(gen.has_sentinel(key) for key in _keys(plain_copy(call.arguments)))


@SETTINGS
@given(st.data())
def test_beyond_subset_calls_are_e14_territory(data: st.DataObject) -> None:
    tools = data.draw(POOLED)
    call = data.draw(gen.beyond_subset_calls(tools))
    schemas = schemas_of(tools)
    assert not accepts(schemas[call.name], call.arguments)
    assert must_reject(schemas, call.name, call.arguments) == ()


def test_near_misses_never_equal_the_name() -> None:
    for name in ("read_file", "Search", "a", "memory.create_entities", "x-y"):
        misses = _near_misses(name)
        assert name not in misses and len(misses) >= 5
        assert name.upper() in misses or name.upper() == name


@SETTINGS
@given(gen.registries(max_size=3), st.data())
def test_registries_serve_valid_calls_through_the_reference(
    registry: ToolRegistry, data: st.DataObject
) -> None:
    import asyncio

    if not len(registry):
        return
    call = data.draw(gen.valid_calls(registry))
    outcome = asyncio.run(RegistryExecutor(registry).execute(Action(tool_call=call)))
    assert outcome.observation == "ok"  # the default handler ran: no false rejection (V1)


async def _echo(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True)


@SETTINGS
@given(gen.tool_specs(_echo), st.data())
def test_tool_specs_carry_the_handler_and_take_their_valid_calls(
    spec: ToolSpec, data: st.DataObject
) -> None:
    import asyncio

    assert isinstance(spec, ToolSpec) and spec.handler is _echo
    full_validator(spec.parameters)  # a schema the kit can read, never one it refuses
    registry = ToolRegistry(specs=[spec])
    call = data.draw(gen.valid_calls(registry))
    outcome = asyncio.run(RegistryExecutor(registry).execute(Action(tool_call=call)))
    # The handler given is the one that ran, with the arguments of the call (V1, E5).
    assert outcome.observation == json.dumps(plain_copy(call.arguments), sort_keys=True)


@SETTINGS
@given(gen.tool_specs())
def test_tool_specs_default_handler_returns_ok(spec: ToolSpec) -> None:
    import asyncio

    handler = spec.handler
    assert handler is not None

    async def call() -> object:
        return await handler({})

    assert asyncio.run(call()) == "ok"


def test_handler_behaviours_reject_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="unknown behaviour kinds"):
        gen.handler_behaviours(["text", "explode"])
    for kind in gen.BEHAVIOUR_KINDS:
        gen.handler_behaviours([kind])


@SETTINGS
@given(st.sampled_from(POOL), st.data())
def test_E8_defaulted_schemas_judge_every_call_alike_and_carry_defaults(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    """E8/E13 draw their tools from `with_defaults` schemas: a ``default`` is an annotation,
    so each call is valid under the defaulted schema exactly when it is under the original,
    and every typed top-level property has a default a filling runtime would add."""
    from conformance.executor.strategies.defaults import with_defaults

    defaulted = with_defaults(schema)
    arguments = data.draw(gen.valid_arguments(schema, upstream=False))
    assert full_validator(defaulted).is_valid(arguments)
    properties = defaulted.get("properties", {})
    typed = ("string", "integer", "number", "boolean", "null", "array")
    for name, sub in properties.items():
        if isinstance(sub, dict) and "$ref" not in sub and sub.get("type") in typed:
            assert "default" in sub, name
    assert json.loads(json.dumps(defaulted)) == defaulted


def test_V5_undeclared_keys_are_sometimes_null() -> None:
    """V5's calls set an undeclared key to null now and then: dropping such a key as "absent"
    instead of rejecting the call is a V5 bug the kit must be able to show."""
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": False,
    }
    tools = [gen.ToolDef(name="t", description="", parameters=schema)]
    seen: list[Any] = []

    @SETTINGS
    @given(gen.invalid_calls(tools, ["V5"], upstream=False))
    def collect(call: Any) -> None:
        seen.extend(v for k, v in call.arguments.items() if k != "q")

    collect()
    assert None in seen and any(isinstance(v, str) for v in seen)


@pytest.mark.parametrize("upstream", [False, True])
@given(data=st.data())
@settings(max_examples=20, suppress_health_check=[HealthCheck.filter_too_much])
def test_V1_an_array_whose_items_nothing_satisfies_is_drawn_empty(
    upstream: bool, data: st.DataObject
) -> None:
    """An array whose item schema no value meets (an empty integer range) is valid only empty:
    the kit draws ``[]`` for it instead of failing inside Hypothesis (a thorough run stopped
    on E14 with "Cannot create a collection of max_size=3 ... nothing()")."""
    from conformance._core.arguments import valid_arguments

    empty_items = {"type": "integer", "minimum": 3, "maximum": 2}
    schema = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": empty_items}},
        "required": ["xs"],
    }
    assert data.draw(valid_arguments(schema, upstream=upstream))["xs"] == []
