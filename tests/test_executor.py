"""Contract section 6: `RegistryExecutor.execute` (the E table, E1-E14) and the executor's shape.

Expected outcomes are computed here from the contract's table; the handler's own call log
(`RecordingHandler`) is the backdoor that shows whether, and with what, a handler ran.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

import pytest
from _helpers import (
    SENTINEL,
    RecordingHandler,
    arguments_for,
    assert_outcome_invariants,
    call_action,
    expected_problems,
    json_values,
    make_spec,
    object_schemas,
    raising,
    rejection_message,
    returning,
    run,
    simple_keys,
    single_tool_executor,
    thaw,
)
from _unprintable import UnprintableEnvError, UnprintableError
from hypothesis import given
from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionExecutor,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["q"],
}
VALID = {"q": "hello", "n": 3}


class CustomError(Exception):
    pass


class CustomBaseException(BaseException):
    pass


exception_classes = st.sampled_from(
    [
        ValueError,
        TypeError,
        KeyError,
        RuntimeError,
        LookupError,
        OSError,
        CustomError,
        ZeroDivisionError,
        NotImplementedError,
        ToolValidationError,
    ]
)
messages = st.text(max_size=40)


# ---- the executor itself -----------------------------------------------------------------


def test_E_registry_executor_parameters_join_names_in_order() -> None:
    registry = ToolRegistry([make_spec(name) for name in ["zeta", "alpha", "mid"]])
    executor = registry.executor()
    assert dict(executor.parameters()) == {"tools": "zeta,alpha,mid"}
    assert executor.registry == registry
    assert dict(registry.restrict_to({"mid", "zeta"}).executor().parameters()) == {
        "tools": "zeta,mid"
    }


def test_E_registry_executor_satisfies_the_protocol_structurally() -> None:
    executor = ToolRegistry([make_spec("a")]).executor()
    assert isinstance(executor, RegistryExecutor)
    assert isinstance(executor, ActionExecutor)
    assert ActionExecutor not in type(executor).__mro__


def test_E_registry_executor_constructed_directly_holds_its_registry() -> None:
    registry = ToolRegistry([make_spec("a"), make_spec("b")])
    executor = RegistryExecutor(registry)
    assert executor.registry == registry
    assert dict(executor.parameters()) == {"tools": "a,b"}


@pytest.mark.parametrize(
    "bad", [object(), None, "registry", [make_spec("a")]], ids=["object", "None", "str", "list"]
)
def test_API_registry_executor_rejects_non_registry(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        RegistryExecutor(bad)  # type: ignore[arg-type]
    assert str(info.value)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "bad", ["notanaction", None, ToolCall(name="a", arguments={}), {"tool_call": None}], ids=repr
)
async def test_API_execute_rejects_non_action(bad: object) -> None:
    handler = RecordingHandler()
    executor = single_tool_executor(handler, name="a")
    with pytest.raises((TypeError, ValueError)) as info:
        await executor.execute(bad)  # type: ignore[arg-type]
    assert str(info.value)
    assert handler.calls == []


# ---- E1 ----------------------------------------------------------------------------------


@given(st.text(max_size=50))
def test_E1_action_without_tool_call_is_not_executed_synthetic(code: str) -> None:
    handler = RecordingHandler()
    outcome = run(Action(code=code), single_tool_executor(handler))
    assert_outcome_invariants(outcome)
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert outcome.observation_is_synthetic is True
    assert outcome.observation.strip(), "E1 needs the executor's own sentence"
    assert handler.calls == []


# ---- E2 ----------------------------------------------------------------------------------


@given(schema=object_schemas(), data=st.data())
def test_E2_rejected_call_is_not_executed_with_the_rejection_message(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    arguments = data.draw(arguments_for(schema), label="arguments")
    handler = RecordingHandler()
    executor = single_tool_executor(handler, schema)
    call = ToolCall(name="tool", arguments=arguments)
    outcome = run(Action(tool_call=call), executor)
    assert_outcome_invariants(outcome)
    message = rejection_message(executor.registry, call)
    if expected_problems(schema, arguments):
        assert message is not None
        assert outcome.status is ActionStatus.NOT_EXECUTED
        assert outcome.observation_is_synthetic is True
        assert outcome.observation == message
        assert handler.calls == []
    else:
        assert message is None
        assert outcome.status is ActionStatus.EXECUTED
        assert len(handler.calls) == 1


@given(st.text(min_size=1, max_size=20).filter(lambda n: n != "tool"))
def test_E2_unknown_tool_is_not_executed(name: str) -> None:
    handler = RecordingHandler()
    executor = single_tool_executor(handler)
    outcome = run(call_action(name, {}), executor)
    assert_outcome_invariants(outcome)
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert outcome.observation_is_synthetic is True
    assert outcome.observation == rejection_message(
        executor.registry, ToolCall(name=name, arguments={})
    )
    assert handler.calls == []


@pytest.mark.asyncio
async def test_E2_non_mapping_arguments_are_not_executed() -> None:
    handler = RecordingHandler()
    outcome = await single_tool_executor(handler).execute(call_action("tool", ["x", SENTINEL]))
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert outcome.observation_is_synthetic is True
    assert SENTINEL not in outcome.observation
    assert handler.calls == []


# ---- E3 ----------------------------------------------------------------------------------


@given(
    messages,
    st.sampled_from([ToolEnvironmentError, type("Unreachable", (ToolEnvironmentError,), {})]),
)
def test_E3_tool_environment_error_is_env_error_with_str_exc(
    message: str, cls: type[ToolEnvironmentError]
) -> None:
    exc = cls(message)
    outcome = run(call_action("tool", VALID), single_tool_executor(raising(exc), SCHEMA))
    assert_outcome_invariants(outcome)
    assert outcome.status is ActionStatus.ENV_ERROR
    assert outcome.observation == str(exc)
    assert outcome.observation_is_synthetic is False


# ---- E4 ----------------------------------------------------------------------------------


@given(exception_classes, messages)
def test_E4_handler_exception_is_executed(cls: type[Exception], message: str) -> None:
    exc = cls(message)
    outcome = run(call_action("tool", VALID), single_tool_executor(raising(exc), SCHEMA))
    assert_outcome_invariants(outcome)
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == f"{cls.__name__}: {exc}"
    assert outcome.observation_is_synthetic is False
    assert "Traceback" not in outcome.observation


@pytest.mark.asyncio
async def test_E4_exception_raised_deep_in_the_handler_has_no_traceback() -> None:
    def inner() -> None:
        raise KeyError("missing")

    async def handler(arguments: Mapping[str, Any]) -> str:
        inner()
        return "unreachable"

    outcome = await single_tool_executor(handler, SCHEMA).execute(call_action("tool", VALID))
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "KeyError: 'missing'"


# ---- E5 ----------------------------------------------------------------------------------


@given(st.text())
def test_E5_returned_string_is_the_observation_exactly(text: str) -> None:
    outcome = run(call_action("tool", VALID), single_tool_executor(returning(text), SCHEMA))
    assert_outcome_invariants(outcome)
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == text
    assert outcome.observation_is_synthetic is False


# ---- E6 ----------------------------------------------------------------------------------

BASE_EXCEPTIONS = [
    asyncio.CancelledError,
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    CustomBaseException,
]


@pytest.mark.asyncio
@pytest.mark.parametrize("cls", BASE_EXCEPTIONS, ids=lambda c: c.__name__)
async def test_E6_base_exceptions_propagate_unchanged(cls: type[BaseException]) -> None:
    exc = cls("from the handler")
    executor = single_tool_executor(raising(exc), SCHEMA)
    with pytest.raises(cls) as info:
        await executor.execute(call_action("tool", VALID))
    assert info.value is exc


@pytest.mark.asyncio
async def test_E6_cancelling_a_suspended_handler_raises_cancelled_error() -> None:
    started = asyncio.Event()
    never = asyncio.Event()
    cleaned_up: list[bool] = []

    async def handler(arguments: Mapping[str, Any]) -> str:
        started.set()
        try:
            await never.wait()
        finally:
            cleaned_up.append(True)
        return "unreachable"

    executor = single_tool_executor(handler, SCHEMA)
    task = asyncio.create_task(executor.execute(call_action("tool", VALID)))
    await asyncio.wait_for(started.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert cleaned_up == [True]


@pytest.mark.asyncio
async def test_E6_executor_still_works_after_a_cancelled_call() -> None:
    gate = asyncio.Event()

    async def handler(arguments: Mapping[str, Any]) -> str:
        if arguments.get("n") == 1:
            await gate.wait()
        return f"done {arguments['q']}"

    executor = single_tool_executor(handler, SCHEMA)
    task = asyncio.create_task(executor.execute(call_action("tool", {"q": "a", "n": 1})))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    outcome = await executor.execute(call_action("tool", {"q": "b"}))
    assert outcome.observation == "done b"


# ---- E7 ----------------------------------------------------------------------------------

behaviours = st.one_of(
    st.text(max_size=10).map(lambda t: ("return", t)),
    st.tuples(st.just("raise"), exception_classes, messages),
    st.tuples(st.just("env"), messages),
)


def handler_for(behaviour: tuple[Any, ...]) -> RecordingHandler:
    kind = behaviour[0]
    if kind == "return":
        return returning(behaviour[1])
    if kind == "raise":
        return raising(behaviour[1](behaviour[2]))
    return raising(ToolEnvironmentError(behaviour[1]))


@given(
    behaviour=behaviours,
    action=st.one_of(
        st.builds(Action, code=st.text(max_size=5)),
        st.builds(
            lambda name, arguments: call_action(name, arguments),
            st.sampled_from(["tool", "other"]),
            st.one_of(st.just(VALID), st.dictionaries(simple_keys, json_values, max_size=3)),
        ),
    ),
)
def test_E7_no_completion_and_no_truncation_in_any_outcome(
    behaviour: tuple[Any, ...], action: Action
) -> None:
    outcome = run(action, single_tool_executor(handler_for(behaviour), SCHEMA))
    assert_outcome_invariants(outcome)


# ---- E8 ----------------------------------------------------------------------------------


@given(
    st.fixed_dictionaries(
        {"q": st.text(max_size=10)},
        optional={
            "n": st.integers(),
            "extra": json_values,
            "nested": st.dictionaries(simple_keys, json_values, max_size=3),
        },
    )
)
def test_E8_handler_awaited_once_with_only_the_arguments(arguments: dict[str, Any]) -> None:
    handler = RecordingHandler()
    run(call_action("tool", arguments), single_tool_executor(handler, SCHEMA))
    assert len(handler.calls) == 1, f"handler ran {len(handler.calls)} times"
    args, kwargs = handler.calls[0]
    assert kwargs == {}
    assert len(args) == 1, "the handler gets the arguments, and nothing else"
    received = args[0]
    assert isinstance(received, Mapping)
    assert thaw(received) == arguments
    assert not isinstance(received, (ToolCall, Action))


def test_E8_handler_never_called_for_E1_and_E2() -> None:
    handler = RecordingHandler()
    executor = single_tool_executor(handler, SCHEMA)
    for action in (
        Action(code="x"),
        call_action("tool", {}),
        call_action("tool", {"q": 1}),
        call_action("nope", VALID),
        call_action("tool", "string arguments"),
    ):
        outcome = run(action, executor)
        assert outcome.status is ActionStatus.NOT_EXECUTED
    assert handler.calls == []


def test_E8_handler_awaited_not_just_called() -> None:
    awaited: list[bool] = []

    async def handler(arguments: Mapping[str, Any]) -> str:
        awaited.append(True)
        return "ran"

    outcome = run(call_action("tool", VALID), single_tool_executor(handler, SCHEMA))
    assert awaited == [True]
    assert outcome.observation == "ran"


# ---- E9 ----------------------------------------------------------------------------------


@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.binary(max_size=5),
        st.lists(st.text(), max_size=2),
        st.dictionaries(st.text(), st.text(), max_size=2),
        st.builds(object),
    )
)
def test_E9_non_str_return_raises_type_error_naming_the_tool(value: object) -> None:
    executor = single_tool_executor(returning(value), SCHEMA, name="summarise_page")
    with pytest.raises(TypeError) as info:
        run(call_action("summarise_page", VALID), executor)
    assert "summarise_page" in str(info.value)


# ---- E10 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [ValueError, ToolValidationError, KeyError, RuntimeError])
def test_E10_only_tool_environment_error_yields_env_error(cls: type[Exception]) -> None:
    outcome = run(call_action("tool", VALID), single_tool_executor(raising(cls("bad")), SCHEMA))
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation_is_synthetic is False
    assert outcome.observation == f"{cls.__name__}: {cls('bad')}"


def test_E10_handler_tool_validation_error_is_not_a_rejection() -> None:
    outcome = run(
        call_action("tool", VALID),
        single_tool_executor(raising(ToolValidationError("own check failed")), SCHEMA),
    )
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "ToolValidationError: own check failed"


# ---- E11 ---------------------------------------------------------------------------------


async def scripted(arguments: Mapping[str, Any]) -> str:
    """Deterministic in its arguments, but yields to the loop a varying number of times."""
    for _ in range(arguments.get("yields", 0)):
        await asyncio.sleep(0)
    mode = arguments.get("mode", "return")
    if mode == "raise":
        raise ValueError(f"failed after {arguments.get('yields', 0)}")
    if mode == "env":
        raise ToolEnvironmentError("backend down")
    return f"{arguments.get('label', '')}:{arguments.get('yields', 0)}"


E11_SCHEMA = {
    "type": "object",
    "properties": {
        "yields": {"type": "integer"},
        "mode": {"type": "string"},
        "label": {"type": "string"},
    },
    "required": ["label"],
}

e11_actions = st.one_of(
    st.builds(Action, code=st.just("code")),
    st.builds(
        call_action,
        st.sampled_from(["scripted", "scripted", "missing"]),
        st.fixed_dictionaries(
            {},
            optional={
                "yields": st.integers(0, 5),
                "mode": st.sampled_from(["return", "raise", "env"]),
                "label": st.one_of(st.text(max_size=5), st.integers()),
            },
        ),
    ),
)


@given(st.lists(e11_actions, min_size=1, max_size=12))
def test_E11_concurrent_outcomes_equal_sequential_ones(actions: list[Action]) -> None:
    executor = ToolRegistry([make_spec("scripted", E11_SCHEMA, scripted)]).executor()

    async def sequential() -> list[ActionOutcome]:
        return [await executor.execute(action) for action in actions]

    async def concurrent() -> list[ActionOutcome]:
        return list(await asyncio.gather(*(executor.execute(action) for action in actions)))

    one_at_a_time = asyncio.run(sequential())
    together = asyncio.run(concurrent())
    assert together == one_at_a_time


# ---- E12 ---------------------------------------------------------------------------------


def test_E12_exception_with_broken_str_is_reported_not_crashed() -> None:
    outcome = run(
        call_action("tool", VALID), single_tool_executor(raising(UnprintableError()), SCHEMA)
    )
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "UnprintableError: <exception str() failed>"
    assert outcome.observation_is_synthetic is False


def test_E12_env_error_with_broken_str_is_still_env_error() -> None:
    outcome = run(
        call_action("tool", VALID), single_tool_executor(raising(UnprintableEnvError()), SCHEMA)
    )
    assert outcome.status is ActionStatus.ENV_ERROR
    assert outcome.observation == "UnprintableEnvError: <exception str() failed>"


# ---- E13 ---------------------------------------------------------------------------------


@given(st.dictionaries(simple_keys, json_values, max_size=5))
def test_E13_handler_gets_a_plain_private_copy(arguments: dict[str, Any]) -> None:
    seen: list[object] = []

    async def vandal(received: dict[str, Any]) -> str:
        seen.append(copy.deepcopy(received))
        assert_plain(received)
        for value in list(received.values()):
            if isinstance(value, dict):
                value.clear()
                value["vandal"] = 1
            elif isinstance(value, list):
                value.append("vandal")
        received.clear()
        received["vandal"] = True
        return "done"

    snapshot = copy.deepcopy(arguments)
    executor = single_tool_executor(vandal, {"type": "object"})
    call = ToolCall(name="tool", arguments=arguments)
    for _ in range(2):
        outcome = run(Action(tool_call=call), executor)
        assert outcome.observation == "done"
        assert thaw(call.arguments) == snapshot
    assert seen == [snapshot, snapshot], "a later call saw an earlier handler's mutation"


def assert_plain(value: object) -> None:
    """Only plain dicts and lists as containers, all the way down (E13)."""
    if isinstance(value, Mapping):
        assert type(value) is dict, f"handler got a {type(value).__name__}"
        for item in value.values():
            assert_plain(item)
    elif isinstance(value, (list, tuple)):
        assert type(value) is list, f"handler got a {type(value).__name__}"
        for item in value:
            assert_plain(item)


@pytest.mark.asyncio
async def test_E13_mutable_non_json_leaves_do_not_leak_into_the_call() -> None:
    """Arguments are normally JSON, but "whatever it mutates" covers any value a call holds."""
    seen: list[object] = []

    async def vandal(received: dict[str, Any]) -> str:
        seen.append(copy.deepcopy(received))
        received["tags"].add("vandal")
        received["raw"].extend(b"!!")
        return "done"

    executor = single_tool_executor(vandal, {"type": "object"})
    call = ToolCall(name="tool", arguments={"tags": {"a"}, "raw": bytearray(b"xy")})
    for _ in range(2):
        await executor.execute(Action(tool_call=call))
    assert call.arguments["tags"] == {"a"}, "the handler's mutation reached the recorded call"
    assert call.arguments["raw"] == bytearray(b"xy")
    assert seen[1] == {"tags": {"a"}, "raw": bytearray(b"xy")}, "a later call saw the mutation"


@pytest.mark.asyncio
async def test_E13_frozen_tuples_arrive_as_lists() -> None:
    handler = RecordingHandler()
    executor = single_tool_executor(handler, {"type": "object"})
    await executor.execute(call_action("tool", {"a": (1, (2, 3)), "b": {"c": [4, {"d": ()}]}}))
    received = handler.received[0]
    assert_plain(received)
    assert received == {"a": [1, [2, 3]], "b": {"c": [4, {"d": []}]}}


# ---- E14 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "property_schema, value",
    [
        ({"type": "string", "enum": ["a", "b"]}, "c"),
        ({"type": "integer", "minimum": 0}, -1),
        ({"type": "string", "pattern": "^[a-z]+$"}, "ABC"),
        ({"type": "array", "items": {"type": "integer"}}, ["x"]),
    ],
    ids=["enum", "minimum", "pattern", "items"],
)
def test_E14_subset_accepted_full_schema_violation_is_dispatched(
    property_schema: dict[str, Any], value: object
) -> None:
    handler = RecordingHandler(lambda arguments: f"got {arguments['v']!r}")
    schema = {"type": "object", "properties": {"v": property_schema}, "required": ["v"]}
    outcome = run(call_action("tool", {"v": value}), single_tool_executor(handler, schema))
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == f"got {value!r}"
    assert len(handler.calls) == 1


def test_E14_handler_failing_on_enum_violation_reports_ordinary_observation() -> None:
    def strict(arguments: dict[str, Any]) -> str:
        if arguments["v"] not in ("a", "b"):
            raise ValueError("v must be 'a' or 'b'")
        return "fine"

    schema = {"type": "object", "properties": {"v": {"enum": ["a", "b"]}}}
    outcome = run(
        call_action("tool", {"v": "c"}), single_tool_executor(RecordingHandler(strict), schema)
    )
    assert outcome.status is ActionStatus.EXECUTED
    assert outcome.observation == "ValueError: v must be 'a' or 'b'"
