"""Contract section 5: `ToolRegistry.validate` (V1-V8), with generated schemas and mutations.

The expected verdict comes from `_helpers.expected_problems` (the contract's rules, written
independently) and, for soundness, from `jsonschema` under the schema's declared dialect.
Corpus-scale soundness (V1 against real data) lives in test_corpus.py.
"""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import jsonschema
import pytest
from _helpers import (
    DRAFT04,
    DRAFT06,
    DRAFT07,
    DRAFT2019,
    DRAFT2020,
    INTEGER_FLOAT_DIALECTS,
    JSON_TYPES,
    NON_STANDARD_TYPES,
    SENTINEL,
    SENTINEL_INT,
    arguments_for,
    expected_problems,
    integral_floats,
    json_values,
    make_registry,
    make_spec,
    non_mappings,
    object_schemas,
    odd_text,
    rejection_message,
    simple_keys,
    values_not_of_types,
    values_of_type,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from polyloop import ToolCall, ToolRegistry, ToolValidationError
from polyloop.tools import _CompiledTool

MESSAGE_LIMIT = 2000


def registry_for(parameters: dict[str, Any], name: str = "tool") -> ToolRegistry:
    return ToolRegistry([make_spec(name, parameters)])


def verdict(parameters: dict[str, Any], arguments: object) -> str | None:
    """The rejection message for calling a one-tool registry with `arguments` (None: accepted)."""
    return rejection_message(registry_for(parameters), ToolCall(name="tool", arguments=arguments))


def jsonschema_accepts(schema: dict[str, Any], instance: object) -> bool:
    """The full validator's verdict; an unknown type name accepts everything (V6)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    lenient = jsonschema.validators.extend(
        cls,
        type_checker=cls.TYPE_CHECKER.redefine_many(
            dict.fromkeys(NON_STANDARD_TYPES, lambda checker, instance: True)
        ),
    )
    return bool(lenient(schema).is_valid(instance))


def test_V_tool_validation_error_is_a_value_error() -> None:
    assert issubclass(ToolValidationError, ValueError)
    registry = registry_for({"type": "object", "required": ["q"]})
    with pytest.raises(ToolValidationError):
        registry.validate(ToolCall(name="tool", arguments={}))
    assert registry.validate(ToolCall(name="tool", arguments={"q": 1})) is None


# ---- V1: dialects ------------------------------------------------------------------------

REF_INERT_DIALECTS = [DRAFT04, DRAFT06, DRAFT07, "http://json-schema.org/draft-07/schema"]
REF_ACTIVE_DIALECTS = [None, DRAFT2019, DRAFT2020]


def with_dialect(schema: dict[str, Any], dialect: str | None) -> dict[str, Any]:
    return schema if dialect is None else {"$schema": dialect, **schema}


PROPERTY_REF = {
    "type": "object",
    "definitions": {"count": {"type": "integer"}},
    "properties": {"p": {"$ref": "#/definitions/count", "type": "string"}},
}


@pytest.mark.parametrize("dialect", REF_INERT_DIALECTS)
def test_V1_property_ref_makes_sibling_type_inert_up_to_draft07(dialect: str) -> None:
    schema = with_dialect(PROPERTY_REF, dialect)
    assert jsonschema_accepts(schema, {"p": 5}), "fixture: the full validator accepts"
    assert verdict(schema, {"p": 5}) is None


@pytest.mark.parametrize("dialect", REF_ACTIVE_DIALECTS)
def test_V6_property_ref_keeps_sibling_type_from_2019_09(dialect: str | None) -> None:
    schema = with_dialect(PROPERTY_REF, dialect)
    assert not jsonschema_accepts(schema, {"p": 5}), "fixture: the full validator rejects"
    message = verdict(schema, {"p": 5})
    assert message is not None
    assert "p" in message


ROOT_REF = {
    "$ref": "#/definitions/base",
    "definitions": {"base": {"type": "object"}},
    "type": "object",
    "required": ["alpha"],
    "additionalProperties": False,
    "properties": {"alpha": {"type": "string"}},
}


@pytest.mark.parametrize("dialect", REF_INERT_DIALECTS)
@pytest.mark.parametrize(
    "arguments",
    [{}, {"undeclared_key": 1}, {"alpha": 5}, {"alpha": "s", "undeclared_key": [1]}],
    ids=["missing-required", "extra-key", "wrong-type", "extra-with-required"],
)
def test_V1_root_ref_makes_required_and_additional_properties_inert_up_to_draft07(
    dialect: str, arguments: dict[str, Any]
) -> None:
    schema = with_dialect(ROOT_REF, dialect)
    assert jsonschema_accepts(schema, arguments), "fixture: the full validator accepts"
    assert verdict(schema, arguments) is None


@pytest.mark.parametrize("dialect", REF_ACTIVE_DIALECTS)
def test_V4_V5_root_ref_keeps_required_and_additional_properties_from_2019_09(
    dialect: str | None,
) -> None:
    schema = with_dialect(ROOT_REF, dialect)
    missing = verdict(schema, {})
    assert missing is not None
    assert "alpha" in missing
    extra = verdict(schema, {"alpha": "s", "undeclared_key": 1})
    assert extra is not None
    assert "undeclared_key" in extra
    assert verdict(schema, {"alpha": 5}) is not None
    assert verdict(schema, {"alpha": "s"}) is None


@given(schema=object_schemas(), data=st.data())
def test_V1_generated_calls_accepted_whenever_jsonschema_accepts(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    arguments = data.draw(arguments_for(schema), label="arguments")
    assume(jsonschema_accepts(schema, arguments))
    assert verdict(schema, arguments) is None


# ---- V3-V6 against the independent oracle -------------------------------------------------


@given(schema=object_schemas(), data=st.data())
def test_V3_to_V6_verdict_matches_the_contract_rules(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    arguments = data.draw(st.one_of(arguments_for(schema), non_mappings), label="arguments")
    problems = expected_problems(schema, arguments)
    message = verdict(schema, arguments)
    if not problems:
        assert message is None, f"rejected although the contract says accept: {message}"
        return
    assert message is not None, f"accepted although the contract says reject: {problems}"
    assert len(message) < MESSAGE_LIMIT
    if len(problems) == 1:
        clause, keys = next(iter(problems.items()))
        if clause in ("V4", "V5"):
            for key in keys:
                assert key in message, f"{clause}: {key!r} not named in {message!r}"
        elif clause == "V6":
            assert any(key in message for key in keys), f"V6: no key named in {message!r}"


@given(schema=object_schemas(), data=st.data())
def test_V3_to_V6_the_one_pass_fast_path_only_skips_the_full_path(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    """`problem` answers valid calls in one pass over the items; whatever it decides, the
    message (or None) is exactly what the full, message-building path gives."""
    arguments = data.draw(arguments_for(schema), label="arguments")
    frozen = ToolCall(name="tool", arguments=arguments).arguments
    entry = _CompiledTool(make_spec(parameters=schema))
    assert entry.problem(frozen) == entry._describe(frozen)


# ---- V2 ----------------------------------------------------------------------------------


def test_V2_near_miss_name_rejected_naming_tool_and_visible_tools() -> None:
    registry = make_registry("search_docs", "fetch_page", "list_files")
    for near_miss in ("search_doc", "Search_docs", "search_docs ", "searchdocs", "fetch-page"):
        message = rejection_message(registry, ToolCall(name=near_miss, arguments={}))
        assert message is not None, f"{near_miss!r} was accepted"
        assert near_miss.strip() in message
        for visible in ("search_docs", "fetch_page", "list_files"):
            assert visible in message


@given(st.integers(0, 45), simple_keys)
def test_V2_unknown_tool_names_at_most_20_visible_tools(count: int, unknown: str) -> None:
    names = [f"tool_{i:03d}_x" for i in range(count)]
    registry = make_registry(*names)
    unknown = "unknown_" + unknown
    message = rejection_message(registry, ToolCall(name=unknown, arguments={}))
    assert message is not None
    assert unknown in message
    listed = [name for name in names if name in message]
    if count <= 20:
        assert listed == names, "with at most 20 tools every visible tool is named"
    else:
        assert 1 <= len(listed) <= 20, f"{len(listed)} tools listed"
    assert len(message) < MESSAGE_LIMIT


def test_V2_restricted_registry_lists_only_visible_tools() -> None:
    registry = make_registry("alpha_tool", "bravo_tool", "charlie_tool")
    restricted = registry.restrict_to(["alpha_tool"])
    message = rejection_message(restricted, ToolCall(name="bravo_tool", arguments={}))
    assert message is not None
    assert "bravo_tool" in message
    assert "alpha_tool" in message
    assert "charlie_tool" not in message
    assert rejection_message(registry, ToolCall(name="bravo_tool", arguments={})) is None


def test_V2_empty_registry_rejects_every_name() -> None:
    message = rejection_message(ToolRegistry(), ToolCall(name="anything", arguments={}))
    assert message is not None
    assert "anything" in message


# ---- V3 ----------------------------------------------------------------------------------


@given(non_mappings, st.sampled_from([{}, {"type": "array"}, {"type": ["object", "array"]}]))
def test_V3_non_mapping_arguments_rejected(arguments: object, parameters: dict[str, Any]) -> None:
    assert verdict(parameters, arguments) is not None


@pytest.mark.parametrize(
    "arguments",
    [{"a": 1}, MappingProxyType({"a": 1}), OrderedDict(a=1)],
    ids=["dict", "mappingproxy", "ordereddict"],
)
def test_V3_any_mapping_is_accepted(arguments: object) -> None:
    assert verdict({"type": "object", "properties": {"a": {"type": "integer"}}}, arguments) is None


# ---- V4 ----------------------------------------------------------------------------------


@given(
    required=st.lists(simple_keys, min_size=1, max_size=5, unique=True),
    data=st.data(),
)
def test_V4_dropping_a_required_key_is_rejected_naming_it(
    required: list[str], data: st.DataObject
) -> None:
    schema = {
        "type": "object",
        "properties": {key: {"type": "string"} for key in required},
        "required": required,
    }
    full = {key: f"value of {key}" for key in required}
    assert verdict(schema, full) is None
    dropped = data.draw(st.lists(st.sampled_from(required), min_size=1, unique=True))
    arguments = {key: value for key, value in full.items() if key not in dropped}
    message = verdict(schema, arguments)
    assert message is not None
    for key in dropped:
        assert key in message, f"missing key {key!r} not named"


# ---- V5 ----------------------------------------------------------------------------------


@given(
    declared=st.lists(simple_keys, max_size=4, unique=True),
    extra=st.lists(simple_keys.map(lambda k: "extra_" + k), min_size=1, max_size=3, unique=True),
)
def test_V5_undeclared_key_rejected_naming_it(declared: list[str], extra: list[str]) -> None:
    assume(not set(extra) & set(declared))
    schema = {
        "type": "object",
        "properties": {key: {} for key in declared},
        "additionalProperties": False,
    }
    arguments = {key: 1 for key in declared + extra}
    message = verdict(schema, arguments)
    assert message is not None
    for key in extra:
        assert key in message


@given(
    extra=st.dictionaries(simple_keys.map(lambda k: "extra_" + k), json_values, min_size=1),
    pattern=st.sampled_from(["^x", "^extra_", ".*", "^nomatch$"]),
)
def test_V5_skipped_when_pattern_properties_present(extra: dict[str, object], pattern: str) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {pattern: {}},
        "additionalProperties": False,
    }
    assert verdict(schema, {"a": 1, **extra}) is None


@pytest.mark.parametrize("additional", [True, {}, {"description": "any"}], ids=repr)
def test_V5_only_false_forbids_extra_keys(additional: object) -> None:
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": additional}
    assert verdict(schema, {"a": 1, "b": 2}) is None
    assert verdict({"type": "object", "properties": {"a": {}}}, {"a": 1, "b": 2}) is None


# ---- V6 ----------------------------------------------------------------------------------

type_lists = st.lists(st.sampled_from(JSON_TYPES), min_size=1, max_size=3, unique=True)


@given(declared=st.one_of(st.sampled_from(JSON_TYPES), type_lists), data=st.data())
def test_V6_changing_a_value_type_is_rejected(
    declared: str | list[str], data: st.DataObject
) -> None:
    names = [declared] if isinstance(declared, str) else declared
    wrong = data.draw(values_not_of_types(names), label="wrong")
    right = data.draw(values_of_type(data.draw(st.sampled_from(names))), label="right")
    schema = {"type": "object", "properties": {"field_k": {"type": declared}}}
    assert verdict(schema, {"field_k": right}) is None
    message = verdict(schema, {"field_k": wrong})
    assert message is not None
    assert "field_k" in message
    assert any(name in message for name in names), f"no declared type named in {message!r}"


@pytest.mark.parametrize("declared", ["integer", "number", ["integer", "string"]], ids=str)
@pytest.mark.parametrize("value", [True, False], ids=str)
def test_V6_bool_is_neither_integer_nor_number(declared: object, value: bool) -> None:
    schema = {"type": "object", "properties": {"n": {"type": declared}}}
    assert verdict(schema, {"n": value}) is not None


@pytest.mark.parametrize("dialect", INTEGER_FLOAT_DIALECTS, ids=str)
@given(value=integral_floats)
def test_V6_float_with_zero_fraction_is_an_integer(dialect: str | None, value: float) -> None:
    schema = with_dialect({"type": "object", "properties": {"n": {"type": "integer"}}}, dialect)
    assert verdict(schema, {"n": value}) is None
    assert verdict(schema, {"n": 3.0}) is None


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()))
def test_V6_fractional_float_is_not_an_integer(value: float) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert verdict(schema, {"n": value}) is not None
    assert (
        verdict({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": value}) is None
    )


@given(st.lists(json_values, max_size=3))
def test_V6_array_accepts_lists_and_tuples(items: list[object]) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array"}}}
    assert verdict(schema, {"a": items}) is None
    assert verdict(schema, {"a": tuple(items)}) is None


@given(st.dictionaries(st.text(max_size=5), json_values, max_size=3))
def test_V6_object_accepts_any_mapping(value: dict[str, object]) -> None:
    schema = {"type": "object", "properties": {"o": {"type": "object"}}}
    assert verdict(schema, {"o": value}) is None
    assert verdict(schema, {"o": MappingProxyType(value)}) is None
    assert verdict(schema, {"o": OrderedDict(value)}) is None


@given(
    st.sampled_from(["float", "dict", "any", "tuple", "Integer", "str", "int"]),
    json_values,
)
def test_V6_unknown_type_name_accepts_everything(type_name: str, value: object) -> None:
    schema = {"type": "object", "properties": {"v": {"type": type_name}}}
    assert verdict(schema, {"v": value}) is None
    listed = {"type": "object", "properties": {"v": {"type": ["integer", type_name]}}}
    assert verdict(listed, {"v": value}) is None


@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_V6_number_accepts_ints_and_floats(value: float) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    assert verdict(schema, {"x": value}) is None


def test_V6_null_and_string_and_boolean() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "null"}, "s": {"type": "string"}, "b": {"type": "boolean"}},
    }
    assert verdict(schema, {"n": None, "s": "", "b": False}) is None
    assert verdict(schema, {"n": 0}) is not None
    assert verdict(schema, {"s": 1}) is not None
    assert verdict(schema, {"s": None}) is not None
    assert verdict(schema, {"b": 0}) is not None
    assert verdict(schema, {"b": "true"}) is not None


# ---- V7 ----------------------------------------------------------------------------------

V7_CASES = {
    "nested-required": (
        {"properties": {"o": {"type": "object", "required": ["inner"]}}},
        {"o": {}},
    ),
    "nested-type": (
        {"properties": {"o": {"type": "object", "properties": {"i": {"type": "integer"}}}}},
        {"o": {"i": "not an int"}},
    ),
    "nested-additional": (
        {"properties": {"o": {"type": "object", "additionalProperties": False}}},
        {"o": {"surprise": 1}},
    ),
    "enum": ({"properties": {"e": {"type": "string", "enum": ["a", "b"]}}}, {"e": "c"}),
    "const": ({"properties": {"c": {"const": 1}}}, {"c": 2}),
    "minimum": ({"properties": {"n": {"type": "integer", "minimum": 10}}}, {"n": 3}),
    "exclusiveMaximum": ({"properties": {"n": {"exclusiveMaximum": 1}}}, {"n": 5}),
    "multipleOf": ({"properties": {"n": {"type": "integer", "multipleOf": 7}}}, {"n": 8}),
    "maxLength": ({"properties": {"s": {"type": "string", "maxLength": 1}}}, {"s": "long"}),
    "pattern": ({"properties": {"s": {"type": "string", "pattern": "^[0-9]+$"}}}, {"s": "x"}),
    "format": ({"properties": {"s": {"type": "string", "format": "email"}}}, {"s": "nope"}),
    "items-type": (
        {"properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
        {"a": ["x"]},
    ),
    "minItems": ({"properties": {"a": {"type": "array", "minItems": 3}}}, {"a": []}),
    "uniqueItems": ({"properties": {"a": {"uniqueItems": True}}}, {"a": [1, 1]}),
    "anyOf": ({"properties": {"u": {"anyOf": [{"type": "string"}]}}}, {"u": 1}),
    "oneOf": ({"properties": {"u": {"oneOf": [{"type": "string"}]}}}, {"u": 1}),
    "allOf": ({"properties": {"u": {"allOf": [{"type": "string"}]}}}, {"u": 1}),
    "not": ({"properties": {"u": {"not": {"type": "integer"}}}}, {"u": 1}),
    "root-minProperties": ({"minProperties": 2}, {}),
    "root-maxProperties": ({"maxProperties": 0}, {"a": 1}),
    "root-propertyNames": ({"propertyNames": {"maxLength": 1}}, {"long": 1}),
    "root-dependentRequired": ({"dependentRequired": {"a": ["b"]}}, {"a": 1}),
    "root-if-then": ({"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {"a": 1}),
    "root-allOf-required": ({"allOf": [{"required": ["z"]}]}, {}),
    "root-anyOf-type": ({"anyOf": [{"type": "string"}]}, {}),
}


@pytest.mark.parametrize("case", sorted(V7_CASES))
def test_V7_violations_outside_the_subset_are_accepted(case: str) -> None:
    properties_or_root, arguments = V7_CASES[case]
    schema = {"type": "object", **properties_or_root}
    assert not jsonschema_accepts(schema, arguments) or case == "format", (
        "fixture: the full validator rejects this call"
    )
    assert verdict(schema, arguments) is None


# ---- V8 ----------------------------------------------------------------------------------

sentinel_values = st.one_of(
    st.text(max_size=5).map(lambda t: SENTINEL + t),
    st.integers(0, 999).map(lambda n: SENTINEL_INT * 1000 + n),
    st.lists(st.just(SENTINEL), min_size=1, max_size=3),
    st.dictionaries(simple_keys, st.just(SENTINEL + "nested"), min_size=1, max_size=2),
    st.integers(1, 30).map(lambda n: SENTINEL * n * 50),
)
wild_keys = st.one_of(odd_text, st.text(min_size=300, max_size=5000), simple_keys).filter(
    lambda k: SENTINEL not in k and str(SENTINEL_INT) not in k
)


def assert_no_value_echoed(message: str) -> None:
    assert SENTINEL not in message, "a string argument value was echoed"
    assert str(SENTINEL_INT) not in message, "a number argument value was echoed"
    assert len(message) < MESSAGE_LIMIT, f"message of {len(message)} chars"


@given(
    keys=st.lists(wild_keys, min_size=1, max_size=30, unique=True),
    data=st.data(),
    mode=st.sampled_from(["V4", "V5", "V6"]),
)
def test_V8_messages_never_echo_values_and_stay_short(
    keys: list[str], data: st.DataObject, mode: str
) -> None:
    values = {key: data.draw(sentinel_values) for key in keys}
    if mode == "V4":
        schema = {"type": "object", "required": keys}
        arguments = {f"present_{i}": value for i, value in enumerate(values.values())}
    elif mode == "V5":
        schema = {"type": "object", "properties": {}, "additionalProperties": False}
        arguments = values
    else:
        schema = {"type": "object", "properties": {key: {"type": "boolean"} for key in keys}}
        arguments = values
    message = verdict(schema, arguments)
    assert message is not None, f"{mode} violation accepted"
    assert_no_value_echoed(message)


@given(non_mappings.map(lambda v: SENTINEL + repr(v)))
def test_V8_non_mapping_arguments_not_echoed(arguments: str) -> None:
    message = verdict({"type": "object"}, arguments)
    assert message is not None
    assert_no_value_echoed(message)


@given(
    name=st.one_of(odd_text, st.text(min_size=2000, max_size=20000)),
    count=st.integers(0, 200),
    arguments=st.dictionaries(simple_keys, sentinel_values, max_size=4),
)
def test_V8_unknown_tool_message_bounded(
    name: str, count: int, arguments: dict[str, object]
) -> None:
    names = [f"tool_{i}_" + "n" * 150 for i in range(count)]
    assume(name not in names)
    registry = make_registry(*names)
    message = rejection_message(registry, ToolCall(name=name, arguments=arguments))
    assert message is not None
    assert_no_value_echoed(message)


def test_V8_long_names_are_shortened_but_still_recognisable() -> None:
    long_key = "k" * 10_000
    message = verdict({"type": "object", "required": [long_key]}, {})
    assert message is not None
    assert len(message) < MESSAGE_LIMIT
    assert "kkkkkkkkkk" in message, "a shortened key should still show its beginning"
