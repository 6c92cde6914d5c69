"""Hostile values against the library (issue 13, items 11-14): E13 for non-JSON leaves, S5 judged
as Python's call judges it, S4/R5 for integers json cannot write, and message building that
never raises (V-clauses, E9, E12).

Every object here is something a careless integrator or an attacker can put into a call or a
spec; none of it is JSON, which is exactly why the library must not trust it.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _helpers import ASYNC_HANDLERS, AsyncCallable, make_spec, run, single_tool_executor
from hypothesis import given, reject
from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

# ---- hostile objects --------------------------------------------------------------------------


class Box:
    """Mutable, hashable by identity: a set of these can be changed through its items."""

    def __init__(self, items: list[object]) -> None:
        self.items = items

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.items == self.items

    __hash__ = object.__hash__


class Tagged(str):
    """A `str` subclass carrying a mutable attribute."""

    notes: list[str]


class Counted(int):
    """An `int` subclass carrying a mutable attribute."""

    notes: list[str]


def tagged(text: str) -> Tagged:
    value = Tagged(text)
    value.notes = ["original"]
    return value


def counted(number: int) -> Counted:
    value = Counted(number)
    value.notes = ["original"]
    return value


class Locked:
    """`copy.deepcopy` cannot copy a lock, so no private copy of this exists."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[object] = []


class SelfCopying:
    """`copy.deepcopy` hands back the very same (mutable) object."""

    def __init__(self) -> None:
        self.items: list[object] = []

    def __deepcopy__(self, memo: dict[int, object]) -> SelfCopying:
        return self


def fingerprint(value: object) -> object:
    """A plain structure capturing everything a handler could have changed in `value`."""
    if isinstance(value, dict) or type(value).__name__ == "mappingproxy":
        return ("dict", sorted((repr(k), fingerprint(k), fingerprint(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", [fingerprint(item) for item in value])
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(repr(fingerprint(item)) for item in value))
    if isinstance(value, Box):
        return ("box", fingerprint(value.items))
    if isinstance(value, (Tagged, Counted)):
        return (type(value).__name__, str(value), list(value.notes))
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    return ("scalar", repr(value))


def vandalise(value: object) -> None:
    """Mutate every mutable thing reachable from `value`, as a careless handler would."""
    if isinstance(value, dict):
        for key, item in list(value.items()):
            vandalise(key)
            vandalise(item)
        value["vandal"] = True
    elif isinstance(value, list):
        for item in value:
            vandalise(item)
        value.append("vandal")
    elif isinstance(value, set):
        for item in value:
            vandalise(item)
    elif isinstance(value, Box):
        vandalise(value.items)
        value.items.append("vandal")
    elif isinstance(value, (Tagged, Counted)):
        value.notes.append("vandal")
    elif isinstance(value, bytearray):
        value.extend(b"vandal")


hostile_leaves = st.one_of(
    st.builds(Box, st.lists(st.integers(), max_size=2)),
    st.frozensets(st.builds(Box, st.lists(st.integers(), max_size=2)), max_size=2).map(set),
    st.text(max_size=5).map(tagged),
    st.integers(-5, 5).map(counted),
    st.binary(max_size=4).map(bytearray),
    st.integers(-3, 3),
    st.text(max_size=3),
)
hostile_values = st.recursive(
    hostile_leaves,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.text(max_size=3).map(tagged), inner, max_size=3)
    ),
    max_leaves=6,
)


# ---- E13: private copies of non-JSON leaves -----------------------------------------------


@given(st.dictionaries(st.text(max_size=4), hostile_values, max_size=4))
def test_E13_no_handler_mutation_reaches_record_sender_or_later_call(
    arguments: dict[str, Any],
) -> None:
    sent = fingerprint(arguments)
    seen: list[object] = []

    async def vandal(received: dict[str, Any]) -> str:
        seen.append(fingerprint(received))
        vandalise(received)
        return "done"

    executor = single_tool_executor(vandal, {"type": "object"})
    call = ToolCall(name="tool", arguments=arguments)
    recorded = fingerprint(call.arguments)
    for _ in range(2):
        assert run(Action(tool_call=call), executor).observation == "done"
    assert fingerprint(call.arguments) == recorded, "a handler's mutation reached the record"
    assert fingerprint(arguments) == sent, "a handler's mutation reached the sender's object"
    assert seen[0] == seen[1], "a later call saw an earlier handler's mutation"


@given(hostile_values)
def test_E13_sender_changes_after_construction_do_not_reach_the_record(value: object) -> None:
    call = ToolCall(name="tool", arguments={"v": value})
    recorded = fingerprint(call.arguments)
    vandalise(value)
    assert fingerprint(call.arguments) == recorded


def test_E13_set_of_mutable_objects_is_copied_item_by_item() -> None:
    box = Box([1])
    call = ToolCall(name="tool", arguments={"tags": {box}})
    (recorded,) = call.arguments["tags"]
    assert recorded == box and recorded is not box
    box.items.append(2)
    assert recorded.items == [1]


@pytest.mark.parametrize("make", [tagged, counted], ids=["str-subclass", "int-subclass"])
def test_E13_scalar_subclass_with_attributes_is_copied(make: Callable[[Any], Any]) -> None:
    value = make(7) if make is counted else make("seven")
    call = ToolCall(name="tool", arguments={"v": value, "in_list": [value]})
    assert call.arguments["v"] == value and call.arguments["v"] is not value
    value.notes.append("sender")
    assert call.arguments["v"].notes == ["original"]
    assert call.arguments["in_list"][0].notes == ["original"]


def test_E13_mutable_non_str_key_is_copied() -> None:
    key = Box([1])
    call = ToolCall(name="tool", arguments={"outer": {key: "x"}})
    (recorded,) = call.arguments["outer"].keys()
    assert recorded is not key
    key.items.append(2)
    assert recorded.items == [1]


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"lock": Locked()}, "arguments['lock']"),
        ({"deep": [{"x": Locked()}]}, "arguments['deep'][0]['x']"),
        ({"same": SelfCopying()}, "arguments['same']"),
        ({"fn": lambda: None}, "arguments['fn']"),
        ({"tags": {Box([threading.Lock()])}}, "arguments['tags']"),
        (Locked(), "arguments"),
    ],
    ids=["lock", "nested-lock", "deepcopy-returns-self", "function", "set-of-lock-holders", "top"],
)
def test_E13_uncopyable_leaf_is_refused_at_construction_naming_its_path(
    arguments: object, path: str
) -> None:
    with pytest.raises(TypeError) as caught:
        ToolCall(name="tool", arguments=arguments)
    message = str(caught.value)
    assert message.startswith(path + " is a "), message
    assert "E13" in message and "JSON" in message


def test_E13_immutable_non_json_leaves_still_accepted() -> None:
    import enum

    class Colour(enum.Enum):
        RED = 1

    call = ToolCall(
        name="tool",
        arguments={"b": b"xy", "c": 1j, "r": range(3), "e": Colour.RED, "f": frozenset()},
    )
    assert call.arguments["e"] is Colour.RED
    assert call.arguments["b"] == b"xy"


# ---- S5: judged by type(handler).__call__ ---------------------------------------------------


async def async_handler(arguments: dict[str, Any]) -> str:
    return "ok"


def sync_handler(arguments: dict[str, Any]) -> str:
    return "ok"


class SyncPartial(functools.partial):  # type: ignore[type-arg]
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return "not awaitable"


class AsyncAttributeOnly:
    """An async function stored on the instance as `__call__`: Python's call never uses it."""

    def __init__(self) -> None:
        self.__call__ = async_handler

    def __call__(self, arguments: dict[str, Any]) -> str:
        return "not awaitable"


class LyingGetattribute:
    def __getattribute__(self, name: str) -> Any:
        if name == "__call__":
            return async_handler
        return object.__getattribute__(self, name)

    def __call__(self, arguments: dict[str, Any]) -> str:
        return "not awaitable"


class LyingClass:
    """Claims to be a function (`isinstance` believes `__class__`), but its call is sync."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(async_handler)

    __code__ = async_handler.__code__

    def __call__(self, arguments: dict[str, Any]) -> str:
        return "not awaitable"


class AsyncStatic:
    __call__ = staticmethod(async_handler)


class CallIsAsyncObject:
    """`__call__` is an object, not a function: Python calls that object as it is."""

    __call__ = AsyncCallable()


class CallIsSyncObject:
    __call__ = LyingGetattribute()


SYNC_IN_DISGUISE = {
    "partial-subclass-sync-call": SyncPartial(async_handler),
    "async-instance-attribute-call": AsyncAttributeOnly(),
    "getattribute-returns-async": LyingGetattribute(),
    "lying-class": LyingClass(),
    "partial-of-disguised": functools.partial(AsyncAttributeOnly()),
    "call-is-a-sync-object": CallIsSyncObject(),
}


@pytest.mark.parametrize("handler", SYNC_IN_DISGUISE.values(), ids=SYNC_IN_DISGUISE.keys())
def test_S5_sync_call_in_disguise_raises_naming_tool(handler: object) -> None:
    # Each of these really returns a plain value when called: prove it, then expect refusal.
    assert not asyncio.iscoroutine(handler({}))  # type: ignore[operator]
    with pytest.raises(TypeError, match=r"tool 'disguised'.*async def"):
        ToolSpec(name="disguised", description="", parameters={}, handler=handler)  # type: ignore[arg-type]


ASYNC = {
    **ASYNC_HANDLERS,
    "partial-of-partial-of-object": functools.partial(functools.partial(AsyncCallable())),
    "staticmethod-call": AsyncStatic(),
    "call-is-an-async-object": CallIsAsyncObject(),
}


@pytest.mark.parametrize("handler", ASYNC.values(), ids=ASYNC.keys())
def test_S5_real_async_callables_still_accepted(handler: Any) -> None:
    coroutine = handler({})
    assert asyncio.iscoroutine(coroutine)
    coroutine.close()
    ToolSpec(name="t", description="", parameters={}, handler=handler)


def test_S5_sync_function_and_class_still_refused() -> None:
    for handler in (sync_handler, AsyncCallable, print):
        with pytest.raises(TypeError, match="async def"):
            ToolSpec(name="t", description="", parameters={}, handler=handler)  # type: ignore[arg-type]


# ---- S4 / R5: integers json cannot write back -----------------------------------------------


@pytest.fixture
def int_digit_limit() -> Iterator[int]:
    limit = sys.get_int_max_str_digits()
    yield limit
    sys.set_int_max_str_digits(limit)


@pytest.mark.parametrize(
    ("parameters", "path"),
    [
        ({"type": "object", "maximum": 10**5000}, "parameters['maximum']"),
        ({"enum": [1, -(10**5000)]}, "parameters['enum'][1]"),
        (
            {"properties": {"n": {"default": 7 * 10**4300}}},
            "parameters['properties']['n']['default']",
        ),
    ],
)
def test_S4_integer_json_cannot_write_is_refused_naming_its_path(
    parameters: dict[str, Any], path: str, int_digit_limit: int
) -> None:
    with pytest.raises(ValueError) as caught:
        ToolSpec(name="t", description="", parameters=parameters)
    assert str(caught.value).startswith(path + " is an integer"), caught.value


@given(digits=st.integers(1, 6000), negative=st.booleans())
def test_R5_json_dumps_always_works_or_S4_refused(digits: int, negative: bool) -> None:
    number = (-1 if negative else 1) * (10 ** (digits - 1) + 7)
    try:
        spec = ToolSpec(name="t", description="", parameters={"type": "object", "maximum": number})
    except ValueError as exc:
        assert "parameters['maximum']" in str(exc)
        assert digits > sys.get_int_max_str_digits()
        return
    text = json.dumps(ToolRegistry([spec]).schema_for_model())
    assert json.loads(text)[0]["parameters"]["maximum"] == number


def test_S4_follows_a_lowered_digit_limit(int_digit_limit: int) -> None:
    sys.set_int_max_str_digits(1000)
    with pytest.raises(ValueError, match=r"parameters\['maximum'\]"):
        ToolSpec(name="t", description="", parameters={"maximum": 10**1200})
    spec = ToolSpec(name="t", description="", parameters={"maximum": 10**900})
    json.dumps(ToolRegistry([spec]).schema_for_model())


# ---- V / E12 / E9: building a message never raises -------------------------------------------


class RaisingEqKey:
    """A key hashed like a declared property name whose `__eq__` raises."""

    def __init__(self, like: str) -> None:
        self.like = like

    def __hash__(self) -> int:
        return hash(self.like)

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ exploded")

    def __deepcopy__(self, memo: dict[int, object]) -> RaisingEqKey:
        return RaisingEqKey(self.like)


class RaisingEqStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ exploded")

    __hash__ = str.__hash__


class RaisingRepr:
    def __repr__(self) -> str:
        raise SystemExit("repr exploded")

    def __deepcopy__(self, memo: dict[int, object]) -> RaisingRepr:
        return RaisingRepr()


class ExplodingFloat(float):
    def is_integer(self) -> bool:
        raise RuntimeError("is_integer exploded")


class NameRaises(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("__name__ exploded")


class Nameless(metaclass=NameRaises):
    def __deepcopy__(self, memo: dict[int, object]) -> Nameless:
        return Nameless()


class NamelessError(Exception, metaclass=NameRaises):
    pass


class StrSystemExit(Exception):
    def __str__(self) -> str:
        raise SystemExit(3)


class EnvStrSystemExit(ToolEnvironmentError):
    def __str__(self) -> str:
        raise SystemExit(3)


class StrKeyboardInterrupt(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


STRICT = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["q"],
    "additionalProperties": False,
}


def verdict(parameters: dict[str, Any], arguments: object) -> str | None:
    """validate's message, None when accepted; anything but ToolValidationError propagates."""
    registry = ToolRegistry([make_spec("tool", parameters)])
    try:
        registry.validate(ToolCall(name="tool", arguments=arguments))
    except ToolValidationError as exc:
        return str(exc)
    return None


HOSTILE_ARGUMENTS = {
    "eq-raising-key-like-required": {RaisingEqKey("q"): "x"},
    "eq-raising-key-beside-valid": {"q": "x", RaisingEqKey("n"): 1},
    "eq-raising-str-key": {RaisingEqStr("q"): 5},
    "eq-raising-str-key-extra": {"q": "x", RaisingEqStr("zz"): 1},
    "repr-raising-key": {"q": "x", RaisingRepr(): 1},
    "repr-raising-value": {"q": RaisingRepr()},
    "nameless-value": {"q": Nameless()},
    "nameless-top": Nameless(),
    "exploding-float": {"q": "x", "n": ExplodingFloat(2.5)},
}


@pytest.mark.parametrize("arguments", HOSTILE_ARGUMENTS.values(), ids=HOSTILE_ARGUMENTS.keys())
def test_V_hostile_arguments_give_a_verdict_never_another_exception(arguments: object) -> None:
    message = verdict(STRICT, arguments)
    assert message is not None, "none of these is a valid call for STRICT"
    assert "tool 'tool'" in message and len(message) < 2000


@pytest.mark.parametrize("arguments", HOSTILE_ARGUMENTS.values(), ids=HOSTILE_ARGUMENTS.keys())
def test_E2_hostile_arguments_give_a_not_executed_outcome(arguments: object) -> None:
    handler_calls: list[object] = []

    async def handler(received: dict[str, Any]) -> str:
        handler_calls.append(received)
        return "ran"

    outcome = run(Action(tool_call=ToolCall(name="tool", arguments=arguments)), _executor(handler))
    assert type(outcome) is ActionOutcome
    assert outcome.status is ActionStatus.NOT_EXECUTED and outcome.observation_is_synthetic
    assert handler_calls == []


def _executor(handler: Any) -> Any:
    return single_tool_executor(handler, STRICT)


def test_V4_eq_raising_key_is_no_property_so_the_required_one_is_missing() -> None:
    message = verdict(STRICT, {RaisingEqKey("q"): "x"})
    assert message is not None and "missing required argument(s) 'q'" in message


def test_V5_str_subclass_key_is_judged_by_its_text() -> None:
    assert verdict(STRICT, {RaisingEqStr("q"): "x"}) is None
    message = verdict(STRICT, {RaisingEqStr("q"): 5})
    assert message is not None and "'q' must be string, got integer" in message
    message = verdict(STRICT, {"q": "x", RaisingEqStr("zz"): 1})
    assert message is not None and "unexpected argument(s) 'zz'" in message


def test_V8_key_whose_repr_raises_is_still_named_as_unexpected() -> None:
    message = verdict(STRICT, {"q": "x", RaisingRepr(): 1})
    assert message is not None and "unexpected argument(s) <RaisingRepr object; repr() failed>" in (
        message
    )


def test_V6_float_subclass_judged_by_float_is_integer() -> None:
    assert verdict(STRICT, {"q": "x", "n": ExplodingFloat(3.0)}) is None
    message = verdict(STRICT, {"q": "x", "n": ExplodingFloat(2.5)})
    assert message is not None and "'n' must be integer, got number" in message


def test_V6_value_whose_class_name_raises_is_named_by_its_real_class() -> None:
    message = verdict(STRICT, {"q": Nameless()})
    assert message is not None and "'q' must be string, got non-JSON Nameless" in message


def test_V3_arguments_whose_class_name_raises() -> None:
    message = verdict(STRICT, Nameless())
    assert message is not None and "must be a JSON object, got non-JSON Nameless" in message


def test_V2_str_subclass_tool_name_is_looked_up_and_named_by_its_text() -> None:
    registry = ToolRegistry([make_spec("tool", STRICT)])
    with pytest.raises(ToolValidationError, match=r"unknown tool 'other'"):
        registry.validate(ToolCall(name=RaisingEqStr("other"), arguments={}))
    assert registry.validate(ToolCall(name=RaisingEqStr("tool"), arguments={"q": "x"})) is None


@given(st.lists(st.sampled_from(list(HOSTILE_ARGUMENTS)), min_size=1, max_size=3))
def test_V_any_mix_of_hostile_values_never_raises_anything_else(picks: list[str]) -> None:
    arguments: dict[object, object] = {}
    try:
        for pick in picks:
            chosen = HOSTILE_ARGUMENTS[pick]
            if isinstance(chosen, dict):
                for key, value in chosen.items():
                    arguments[copy.deepcopy(key)] = copy.deepcopy(value)
    except RuntimeError:
        reject()  # two keys whose comparison raises cannot even share the sender's dict
    for parameters in (STRICT, {"type": "object"}, {"properties": {"n": {"type": "integer"}}}):
        message = verdict(parameters, arguments)
        assert message is None or len(message) < 2000


def raising(exc: BaseException) -> Any:
    async def handler(arguments: dict[str, Any]) -> str:
        raise exc

    return handler


def test_E12_str_raising_system_exit_is_still_an_outcome() -> None:
    outcome = run(_valid_call(), single_tool_executor(raising(StrSystemExit()), STRICT))
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "StrSystemExit: <exception str() failed>"


def test_E12_env_error_str_raising_system_exit_is_still_env_error() -> None:
    outcome = run(_valid_call(), single_tool_executor(raising(EnvStrSystemExit()), STRICT))
    assert outcome.status is ActionStatus.ENV_ERROR
    assert outcome.observation == "EnvStrSystemExit: <exception str() failed>"


def test_E12_a_real_keyboard_interrupt_from_str_still_stops() -> None:
    with pytest.raises(KeyboardInterrupt):
        run(_valid_call(), single_tool_executor(raising(StrKeyboardInterrupt()), STRICT))


def test_E4_exception_class_whose_name_raises_is_named_by_its_real_class() -> None:
    outcome = run(_valid_call(), single_tool_executor(raising(NamelessError("boom")), STRICT))
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "NamelessError: boom"


class ClaimsToBeStr:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


def test_E9_object_claiming_to_be_str_raises_type_error_naming_the_tool() -> None:
    async def liar(arguments: dict[str, Any]) -> Any:
        return ClaimsToBeStr()

    assert isinstance(ClaimsToBeStr(), str), "the disguise works on isinstance"
    with pytest.raises(TypeError, match=r"handler of tool 'tool' returned ClaimsToBeStr, not str"):
        run(_valid_call(), single_tool_executor(liar, STRICT))


def test_E9_nameless_return_value_still_names_the_tool() -> None:
    async def odd(arguments: dict[str, Any]) -> Any:
        return Nameless()

    with pytest.raises(TypeError, match=r"handler of tool 'tool' returned Nameless, not str"):
        run(_valid_call(), single_tool_executor(odd, STRICT))


def test_E5_str_subclass_result_becomes_exact_str() -> None:
    async def fancy(arguments: dict[str, Any]) -> str:
        return RaisingEqStr("text")

    outcome = run(_valid_call(), single_tool_executor(fancy, STRICT))
    assert type(outcome.observation) is str and str.__eq__(outcome.observation, "text")


def _valid_call() -> Action:
    return Action(tool_call=ToolCall(name="tool", arguments={"q": "x", "n": 1}))
