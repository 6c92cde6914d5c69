"""polyloop's registry and dispatch, pinned exactly where a mutation run found them loose.

Exact messages at every cap (V2's 20 names, V4-V6's 10, V8's 40-character keys and 1,900-
character messages, R4's 20/50 names, R8), the E4/E3/E12 observations for exceptions whose
`__str__` misbehaves, `str`-subclass names and keys judged by their text (their `__hash__` and
`__eq__` may lie), and the registry's own small behaviours (R7, `in`, type errors). Each test
here kills mutants no looser test noticed (docs/detection.md, "Library-test survivors").
"""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import make_spec

from polyloop import (
    Action,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

OPEN = {"type": "object"}


def rejection(arguments: object, parameters: Any = OPEN, name: str = "tool", call: str = "") -> str:
    registry = ToolRegistry([make_spec(name, parameters)])
    with pytest.raises(ToolValidationError) as caught:
        registry.validate(ToolCall(name=call or name, arguments=arguments))
    return str(caught.value)


def accepts(arguments: object, parameters: Any) -> bool:
    registry = ToolRegistry([make_spec("tool", parameters)])
    try:
        registry.validate(ToolCall(name="tool", arguments=arguments))
    except ToolValidationError:
        return False
    return True


PREFIX = "invalid arguments for tool 'tool': "


class LyingStr(str):
    """A `str` subclass whose hash, equality and repr all lie: only its text is true."""

    def __hash__(self) -> int:
        return 12345

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    def __repr__(self) -> str:
        return "LIE"

    def __str__(self) -> str:
        return "LIE"

    def __format__(self, spec: str) -> str:
        return "LIE"


def _class_named(name: str) -> type:
    return type(name, (), {})


# ---- V2: unknown tools --------------------------------------------------------------------------


def test_V2_a_str_subclass_tool_name_is_named_by_its_text() -> None:
    assert rejection({}, call=LyingStr("nope")) == (
        "unknown tool 'nope'; the available tools are: 'tool'"
    )


@pytest.mark.asyncio
async def test_V2_executor_names_an_unknown_str_subclass_tool_by_its_text() -> None:
    executor = ToolRegistry([make_spec("tool")]).executor()
    outcome = await executor.execute(
        Action(tool_call=ToolCall(name=LyingStr("nope"), arguments={}))
    )
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert outcome.observation == "unknown tool 'nope'; the available tools are: 'tool'"


def test_V2_exactly_twenty_tools_are_all_listed_and_twenty_one_are_counted() -> None:
    twenty = ToolRegistry([make_spec(f"t{i:02d}") for i in range(20)])
    with pytest.raises(ToolValidationError) as caught:
        twenty.validate(ToolCall(name="x", arguments={}))
    listed = ", ".join(f"'t{i:02d}'" for i in range(20))
    assert str(caught.value) == f"unknown tool 'x'; the available tools are: {listed}"
    more = ToolRegistry([make_spec(f"t{i:02d}") for i in range(45)])
    with pytest.raises(ToolValidationError) as caught:
        more.validate(ToolCall(name="x", arguments={}))
    assert str(caught.value) == f"unknown tool 'x'; the available tools are: {listed} and 25 more"


# ---- E2 dispatch: str-subclass names are looked up by their text --------------------------------


@pytest.mark.asyncio
async def test_E5_a_str_subclass_tool_name_whose_hash_lies_runs_the_named_tool() -> None:
    executor = ToolRegistry([make_spec("tool")]).executor()
    outcome = await executor.execute(
        Action(tool_call=ToolCall(name=LyingStr("tool"), arguments={}))
    )
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "echo"


def test_V1_validate_finds_a_str_subclass_tool_name_whose_hash_lies() -> None:
    registry = ToolRegistry([make_spec("tool", OPEN)])
    registry.validate(ToolCall(name=LyingStr("tool"), arguments={}))  # raises if not found


# ---- V3 / V6: JSON type names in messages -------------------------------------------------------


def test_V3_a_non_json_class_name_of_forty_characters_is_shown_whole() -> None:
    name = "N" * 40
    value = _class_named(name)()
    assert (
        rejection(value) == f"arguments for tool 'tool' must be a JSON object, got non-JSON {name}"
    )


def test_V3_a_non_json_class_name_of_forty_one_characters_is_shortened() -> None:
    value = _class_named("N" * 41)()
    assert rejection(value) == (
        "arguments for tool 'tool' must be a JSON object, got non-JSON " + "N" * 25 + "…(+16 chars)"
    )


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (False, "boolean"),
        (3, "integer"),
        (2.5, "number"),
        (1j, "number"),
        ("s", "string"),
        ([1], "array"),
        ((1,), "array"),
        ({"k": 1}, "object"),
        (b"x", "non-JSON bytes"),
        ({1, 2}, "non-JSON frozenset"),
    ],
)
def test_V6_each_json_type_is_named_in_the_type_error(value: object, kind: str) -> None:
    parameters = {
        "type": "object",
        "properties": {"a": {"type": "array" if kind == "boolean" else "boolean"}},
    }
    expected = "array" if kind == "boolean" else "boolean"
    assert rejection({"a": value}, parameters) == PREFIX + f"'a' must be {expected}, got {kind}"


def test_V6_a_type_error_key_of_forty_characters_is_shown_whole_and_forty_one_shortened() -> None:
    whole, cut = "k" * 38, "k" * 39  # reprs of 40 and 41 characters
    parameters = {"properties": {whole: {"type": "string"}, cut: {"type": "string"}}}
    assert rejection({whole: 1, cut: 2}, parameters) == PREFIX + (
        f"'{whole}' must be string, got integer; "
        "'" + "k" * 24 + "…(+16 chars) must be string, got integer"
    )


@pytest.mark.parametrize("declared", [[], 5, {"string": 1}, "no-such-type", ["string", 7]])
def test_V6_a_type_that_is_not_a_name_or_a_list_of_names_accepts_everything(
    declared: object,
) -> None:
    parameters = {"type": "object", "properties": {"a": {"type": declared}}}
    for value in (1, "s", None, [1], {"k": 1}, 2.5, True):
        assert accepts({"a": value}, parameters)


def test_V6_a_one_name_type_list_judges_like_the_name() -> None:
    parameters = {"properties": {"a": {"type": ["integer"]}}}
    assert accepts({"a": 3}, parameters) and accepts({"a": 3.0}, parameters)
    assert rejection({"a": "x"}, parameters) == PREFIX + "'a' must be integer, got string"


def test_V6_a_type_list_names_every_type_in_order() -> None:
    parameters = {"properties": {"a": {"type": ["null", "string", "array"]}}}
    assert accepts({"a": None}, parameters) and accepts({"a": [1]}, parameters)
    assert rejection({"a": 1}, parameters) == (
        PREFIX + "'a' must be null or string or array, got integer"
    )


# ---- V4 / V5: caps and counts -------------------------------------------------------------------


def test_V4_twenty_five_missing_keys_show_ten_and_count_fifteen() -> None:
    parameters = {"type": "object", "required": [f"k{i:02d}" for i in range(25)]}
    listed = ", ".join(f"'k{i:02d}'" for i in range(10))
    assert (
        rejection({}, parameters) == PREFIX + f"missing required argument(s) {listed} and 15 more"
    )


def test_V5_unexpected_and_accepted_lists_are_each_capped_at_ten() -> None:
    properties: dict[str, Any] = {f"p{i:02d}": {} for i in range(12)}
    parameters = {"properties": properties, "additionalProperties": False}
    extra = {f"x{i:02d}": 1 for i in range(23)}
    shown_extra = ", ".join(f"'x{i:02d}'" for i in range(10))
    shown_accepted = ", ".join(f"'p{i:02d}'" for i in range(10))
    assert rejection(extra, parameters) == PREFIX + (
        f"unexpected argument(s) {shown_extra} and 13 more (accepted: {shown_accepted} and 2 more)"
    )


def test_V5_a_non_str_key_is_unexpected_and_shown_by_a_forty_character_repr() -> None:
    parameters = {"properties": {"a": {}}, "additionalProperties": False}
    forty, forty_one = 10**39, 10**40  # reprs of 40 and 41 digits
    assert rejection({forty: 1}, parameters) == PREFIX + (
        f"unexpected argument(s) {forty} (accepted: 'a')"
    )
    assert rejection({forty_one: 1}, parameters) == PREFIX + (
        "unexpected argument(s) " + "1" + "0" * 24 + "…(+16 chars) (accepted: 'a')"
    )
    # Longer: the key's own repr is cut at 40 (25 kept), and that text then fits the list's cap.
    assert rejection({10**59: 1}, parameters) == PREFIX + (
        "unexpected argument(s) " + "1" + "0" * 24 + "…(+35 chars) (accepted: 'a')"
    )


@pytest.mark.parametrize("closed", [0, 0.0, None, "false", [], {}])
def test_V5_only_the_boolean_false_closes_the_object(closed: object) -> None:
    # `additionalProperties: 0` is not `false` (JSON has no truthiness): it cannot certainly
    # reject anything, so the extra key is accepted (V1/V7) instead of closing the object.
    parameters = {"properties": {"a": {}}, "additionalProperties": closed}
    assert accepts({"a": 1, "extra": 2}, parameters)
    assert rejection({"extra": 2}, {**parameters, "additionalProperties": False}) == PREFIX + (
        "unexpected argument(s) 'extra' (accepted: 'a')"
    )


def test_V5_a_str_subclass_key_is_judged_by_its_text_even_when_its_hash_lies() -> None:
    parameters = {
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert accepts({LyingStr("a"): "x"}, parameters)
    assert rejection({LyingStr("a"): 1}, parameters) == PREFIX + "'a' must be string, got integer"
    assert rejection({LyingStr("b"): 1}, parameters) == PREFIX + (
        "missing required argument(s) 'a'; unexpected argument(s) 'b' (accepted: 'a')"
    )


def test_V6_more_than_ten_type_errors_show_exactly_the_first_ten() -> None:
    parameters = {"properties": {f"p{i:02d}": {"type": "string"} for i in range(11)}}
    shown = "; ".join(f"'p{i:02d}' must be string, got integer" for i in range(10))
    assert rejection({f"p{i:02d}": i for i in range(11)}, parameters) == PREFIX + shown
    nine = {f"p{i:02d}": i for i in range(10)}
    assert rejection(nine, parameters) == PREFIX + shown


# ---- V8: the 1,900-character cap ----------------------------------------------------------------


def _long_rejection(pad: int) -> str:
    """A rejection whose full text grows by one character per unit of `pad` (1 to 38)."""
    properties = {f"p{i}" + "p" * 31: {"type": "string"} for i in range(10)}
    parameters = {
        "type": "object",
        "properties": properties,
        "required": ["z" * pad] + [f"r{i}" + "r" * 30 for i in range(9)],
        "additionalProperties": False,
    }
    arguments = {**{key: 1 for key in properties}, **{f"x{i}" + "x" * 36: 1 for i in range(10)}}
    return rejection(arguments, parameters)


def test_V8_a_message_of_exactly_1900_characters_is_kept_and_1901_is_cut() -> None:
    base = len(_long_rejection(1))
    assert 1862 <= base < 1900  # room to grow to the cap one character at a time
    pad = 1 + 1900 - base
    exact = _long_rejection(pad)
    assert len(exact) == 1900 and "…" not in exact
    assert exact.endswith("must be string, got integer")
    assert _long_rejection(pad - 1) == exact.replace("z" * pad, "z" * (pad - 1))
    over = _long_rejection(pad + 1)
    assert over == exact.replace("z" * pad, "z" * (pad + 1))[:1885] + "…(+16 chars)"


# ---- R4: restrict_to ----------------------------------------------------------------------------


def _registry(count: int) -> ToolRegistry:
    return ToolRegistry([make_spec(f"t{i:02d}") for i in range(count)])


def test_R4_twenty_unknown_names_are_all_listed_and_more_are_counted() -> None:
    registry = _registry(2)
    unknown = [f"u{i:02d}" for i in range(45)]
    shown = ", ".join(f"'u{i:02d}'" for i in range(20))
    with pytest.raises(ValueError) as caught:
        registry.restrict_to(unknown[:20])
    assert str(caught.value) == (
        f"restrict_to: unknown tool name(s) {shown}; available: 't00', 't01'"
    )
    with pytest.raises(ValueError) as caught:
        registry.restrict_to(unknown)
    assert str(caught.value) == (
        f"restrict_to: unknown tool name(s) {shown} and 25 more; available: 't00', 't01'"
    )


def test_R4_fifty_available_names_are_all_listed_and_more_are_counted() -> None:
    fifty = ", ".join(f"'t{i:02d}'" for i in range(50))
    with pytest.raises(ValueError) as caught:
        _registry(50).restrict_to(["nope"])
    assert str(caught.value) == f"restrict_to: unknown tool name(s) 'nope'; available: {fifty}"
    with pytest.raises(ValueError) as caught:
        _registry(51).restrict_to(["nope"])
    assert str(caught.value) == (
        f"restrict_to: unknown tool name(s) 'nope'; available: {fifty} and 1 more"
    )
    with pytest.raises(ValueError) as caught:
        ToolRegistry().restrict_to(["nope"])
    assert str(caught.value) == "restrict_to: unknown tool name(s) 'nope'; available: none"


@pytest.mark.parametrize(("names", "label"), [("t00", "str"), (b"t0", "bytes"), (5, "int")])
def test_R4_restrict_to_refuses_a_string_or_non_iterable_exactly(names: object, label: str) -> None:
    with pytest.raises(TypeError) as caught:
        _registry(2).restrict_to(names)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "restrict_to(names) takes an iterable of tool names (e.g. a list or set), got " + label
    )


def test_R4_restrict_to_keeps_registration_order_specs_and_handlers() -> None:
    registry = _registry(4)
    restricted = registry.restrict_to(iter(["t03", "t01"]))
    assert type(restricted) is ToolRegistry
    assert restricted.names() == ("t01", "t03")
    assert restricted.specs == (registry.specs[1], registry.specs[3])
    assert restricted.spec_for("t03") is registry.specs[3]
    assert restricted.spec_for("t00") is None
    assert registry.names() == ("t00", "t01", "t02", "t03")


# ---- R2 / R3 / R7 / R8 and the registry's small behaviours --------------------------------------


@pytest.mark.parametrize(
    ("specs", "label"), [("abc", "str"), (b"ab", "bytes"), ({}, "dict"), (3, "int")]
)
def test_R2_registry_refuses_a_string_mapping_or_non_iterable_exactly(
    specs: object, label: str
) -> None:
    with pytest.raises(TypeError) as caught:
        ToolRegistry(specs)  # type: ignore[arg-type]
    assert str(caught.value) == f"ToolRegistry(specs) takes an iterable of ToolSpec, got {label}"


def test_R7_spec_for_returns_the_spec_or_none() -> None:
    registry = _registry(3)
    assert registry.spec_for("t01") is registry.specs[1]
    assert registry.spec_for("nope") is None
    assert registry.spec_for(5) is None  # type: ignore[arg-type]
    assert registry.spec_for(None) is None  # type: ignore[arg-type]


def test_R7_membership_is_by_exact_name_and_only_for_str() -> None:
    registry = _registry(2)
    assert "t00" in registry and "t01" in registry
    assert "nope" not in registry
    assert "" not in registry

    class LooksLikeT00:
        def __hash__(self) -> int:
            return hash("t00")

        def __eq__(self, other: object) -> bool:
            return True

    assert LooksLikeT00() not in registry
    assert 5 not in registry


def test_R8_executor_names_every_tool_without_a_handler_exactly() -> None:
    specs = [
        ToolSpec(name="a", description="", parameters=OPEN),
        make_spec("b"),
        ToolSpec(name="c", description="", parameters=OPEN),
    ]
    with pytest.raises(ValueError) as caught:
        ToolRegistry(specs).executor()
    assert str(caught.value) == (
        "cannot build an executor: these tools have no handler: 'a', 'c' "
        "(give each ToolSpec an async handler=)"
    )


def test_R8_executor_refuses_a_non_registry_exactly() -> None:
    with pytest.raises(TypeError) as caught:
        RegistryExecutor([make_spec("a")])  # type: ignore[arg-type]
    assert str(caught.value) == "RegistryExecutor(registry) takes a ToolRegistry, got list"


def test_R8_executor_keeps_its_registry_and_reports_the_names() -> None:
    registry = _registry(3)
    executor = registry.executor()
    assert executor.registry is registry
    assert executor.parameters() == {"tools": "t00,t01,t02"}
    assert registry.specs == tuple(registry)


# ---- S5: handlers that are not async ---------------------------------------------------------


def test_S5_a_callable_object_whose_call_chain_never_ends_is_not_async() -> None:
    class Loop:
        pass

    loop = Loop()
    Loop.__call__ = loop  # type: ignore[method-assign,assignment]  # it calls itself, forever
    with pytest.raises(TypeError, match=r"must be an async callable"):
        ToolSpec(name="t", description="", parameters=OPEN, handler=loop)  # type: ignore[arg-type]


class EqualsEverything:
    """An async callable object that claims to equal anything (so also `partial.__call__`)."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]

    async def __call__(self, arguments: dict[str, Any]) -> str:
        return "inner ran"


class CallsThroughAnObject:
    """`__call__` is a callable object (no `__get__`), so calling an instance calls it."""

    __call__ = EqualsEverything()


@pytest.mark.asyncio
async def test_S5_a_call_object_that_claims_equality_is_judged_by_identity_not_eq() -> None:
    # Only the real `functools.partial.__call__` unwraps a partial; an object that merely
    # compares equal to it is followed as the callable it is.
    handler = CallsThroughAnObject()
    spec = make_spec("t", OPEN, handler=handler)
    outcome = (
        await ToolRegistry([spec])
        .executor()
        .execute(Action(tool_call=ToolCall(name="t", arguments={})))
    )
    assert outcome.observation == "inner ran"


def test_S5_a_class_is_not_an_async_handler() -> None:
    class Handler:
        async def __call__(self, arguments: dict[str, Any]) -> str:
            return "x"

    with pytest.raises(TypeError, match=r"must be an async callable"):
        ToolSpec(name="t", description="", parameters=OPEN, handler=Handler)  # type: ignore[arg-type]
    assert ToolSpec(name="t", description="", parameters=OPEN, handler=Handler()).handler


# ---- E3 / E4 / E12: exception observations ------------------------------------------------


async def _observe(exc: BaseException) -> tuple[ActionStatus, str, bool]:
    async def handler(arguments: dict[str, Any]) -> str:
        raise exc

    executor = ToolRegistry([make_spec("t", OPEN, handler=handler)]).executor()
    outcome = await executor.execute(Action(tool_call=ToolCall(name="t", arguments={})))
    assert type(outcome.observation) is str
    return outcome.status, outcome.observation, outcome.observation_is_synthetic


class SubclassText(str):
    def __str__(self) -> str:
        return "SUBCLASS-STR"

    def __format__(self, spec: str) -> str:
        return "SUBCLASS-FORMAT"


class StrIsASubclass(Exception):
    def __str__(self) -> str:
        return SubclassText("the text")


class EnvStrIsASubclass(ToolEnvironmentError):
    def __str__(self) -> str:
        return SubclassText("backend down")


@pytest.mark.asyncio
async def test_E4_a_str_subclass_from_dunder_str_becomes_its_plain_text() -> None:
    assert await _observe(StrIsASubclass()) == (
        ActionStatus.EXECUTED,
        "StrIsASubclass: the text",
        False,
    )


@pytest.mark.asyncio
async def test_E3_a_str_subclass_from_dunder_str_becomes_its_plain_text() -> None:
    assert await _observe(EnvStrIsASubclass()) == (ActionStatus.ENV_ERROR, "backend down", False)


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


class EnvStrRaises(ToolEnvironmentError):
    def __str__(self) -> str:
        raise SystemExit(3)


@pytest.mark.asyncio
async def test_E12_exact_observations_when_str_raises() -> None:
    assert await _observe(StrRaises()) == (
        ActionStatus.EXECUTED,
        "StrRaises: <exception str() failed>",
        False,
    )
    assert await _observe(EnvStrRaises()) == (
        ActionStatus.ENV_ERROR,
        "EnvStrRaises: <exception str() failed>",
        False,
    )


@pytest.mark.asyncio
async def test_E4_exact_observation_of_an_ordinary_exception() -> None:
    assert await _observe(ValueError("bad x")) == (
        ActionStatus.EXECUTED,
        "ValueError: bad x",
        False,
    )
    assert await _observe(KeyError("k")) == (ActionStatus.EXECUTED, "KeyError: 'k'", False)
    assert await _observe(ToolEnvironmentError("gone")) == (ActionStatus.ENV_ERROR, "gone", False)


class NameRaises(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no name")


class NameIsNotStr(type):
    @property
    def __name__(cls) -> Any:  # type: ignore[override]
        return 42


@pytest.mark.asyncio
async def test_E4_a_class_name_that_raises_or_is_not_str_falls_back_to_the_real_name() -> None:
    raising = NameRaises("Hidden", (Exception,), {})
    not_str = NameIsNotStr("Numbered", (Exception,), {})
    assert await _observe(raising("x")) == (ActionStatus.EXECUTED, "Hidden: x", False)
    assert await _observe(not_str("y")) == (ActionStatus.EXECUTED, "Numbered: y", False)


@pytest.mark.asyncio
async def test_E5_a_str_subclass_result_becomes_its_plain_text() -> None:
    async def handler(arguments: dict[str, Any]) -> str:
        return SubclassText("result")

    executor = ToolRegistry([make_spec("t", OPEN, handler=handler)]).executor()
    outcome = await executor.execute(Action(tool_call=ToolCall(name="t", arguments={})))
    assert type(outcome.observation) is str and outcome.observation == "result"


# ---- V8: a value that cannot even be inspected is refused, not crashed on -----------------------


class Uninspectable:
    """Reading its `__class__` raises, so `isinstance` against a plain class raises too."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("no class")


class CopiesToUninspectable:
    """Harmless itself; the private copy the recorded call keeps (E13) is an `Uninspectable`."""

    def __deepcopy__(self, memo: dict[int, object]) -> Uninspectable:
        return Uninspectable()


def test_V8_a_value_whose_type_check_raises_is_refused_with_the_exception_class() -> None:
    parameters = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert rejection({"a": CopiesToUninspectable()}, parameters) == (
        "invalid arguments for tool 'tool': they could not be checked "
        "(RuntimeError raised while inspecting them); send JSON data"
    )
