"""Each broken executor's bug shows on one realistic call, and the witness gets that call right.

This proves the zoo honest without the kit: the input is JSON-decoded data and the handlers are
plain async functions, so a kit that misses one of these misses a real bug.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import pkgutil
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from polyloop import Action, ActionOutcome, ActionStatus, ToolCall, ToolRegistry, ToolSpec

PACKAGE = __name__.rsplit(".", 1)[0]
Factory = Callable[[ToolRegistry], Any]
Scenario = Callable[[Factory], Awaitable[bool]]
DRAFT07 = "http://json-schema.org/draft-07/schema#"
_CORRECT_NAMES = [
    m.name
    for m in pkgutil.iter_modules([str(Path(__file__).parent / "correct")])
    if not m.name.startswith("_")
]


async def _echo(arguments: dict[str, Any]) -> str:
    await asyncio.sleep(0)
    return json.dumps(arguments, sort_keys=True)


def _executor(factory: Factory, schema: Mapping[str, Any], handler: Any = _echo) -> Any:
    spec = ToolSpec(name="tool", description="a tool", parameters=schema, handler=handler)
    return factory(ToolRegistry([spec]))


def _call(arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name="tool", arguments=json.loads(json.dumps(arguments))))


async def _raises(factory: Factory, error: BaseException) -> bool:
    async def handler(arguments: dict[str, Any]) -> str:
        raise error

    try:
        await _executor(factory, {"type": "object"}, handler).execute(_call({}))
    except BaseException as exc:
        return exc is error
    return False


async def _cancel_while_running(factory: Factory) -> bool:
    started = asyncio.Event()

    async def handler(arguments: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.ensure_future(_executor(factory, {}, handler).execute(_call({})))
    await started.wait()
    task.cancel()
    for _ in range(50):  # a few loop turns, not a clock: a conforming executor ends at once
        if task.done():
            break
        await asyncio.sleep(0)
    if not task.done():
        task.cancel()
        return False
    return task.cancelled()


async def _cancel_as_handler_returns(factory: Factory) -> bool:
    release, returned = asyncio.Event(), asyncio.Event()

    async def handler(arguments: dict[str, Any]) -> str:
        await release.wait()
        returned.set()
        return "done"

    task = asyncio.ensure_future(_executor(factory, {}, handler).execute(_call({})))
    for _ in range(5):
        await asyncio.sleep(0)
    release.set()
    while not returned.is_set():
        await asyncio.sleep(0)
    if not task.cancel():
        return True  # the call had already finished: nothing was cancelled
    try:
        await task
    except asyncio.CancelledError:
        return True
    return False


class Stop(BaseException):
    """A BaseException that, unlike KeyboardInterrupt, asyncio does not re-raise out of the loop."""


async def _e6(factory: Factory) -> bool:
    return (
        await _raises(factory, Stop())
        and await _raises(factory, asyncio.CancelledError("from the handler"))
        and await _cancel_while_running(factory)
    )


async def _e11(factory: Factory) -> bool:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    actions = [_call({"n": n}) for n in range(4)]
    serial = [await _executor(factory, schema).execute(a) for a in actions]
    executor = _executor(factory, schema)
    together = await asyncio.gather(*(executor.execute(a) for a in actions))
    return list(together) == serial


async def _e12(factory: Factory) -> bool:
    class UnprintableError(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    async def handler(arguments: dict[str, Any]) -> str:
        raise UnprintableError

    try:
        done = await _executor(factory, {}, handler).execute(_call({}))
    except Exception:
        return False
    return done.observation == "UnprintableError: <exception str() failed>"


async def _e15(factory: Factory) -> bool:
    executor = _executor(factory, {})
    first = dict(executor.parameters())
    done = await executor.execute(_call({}))
    return (
        inspect.iscoroutinefunction(executor.execute)
        and type(done) is ActionOutcome
        and dict(executor.parameters()) == first
        and all(isinstance(k, str) and isinstance(v, str) for k, v in first.items())
    )


def _v1(schema: dict[str, Any], arguments: Any) -> Scenario:
    jsonschema.validators.validator_for(schema)(schema).validate(
        arguments
    )  # full JSON Schema: valid

    async def scenario(factory: Factory) -> bool:
        done = await _executor(factory, schema).execute(_call(arguments))
        return done.status is ActionStatus.EXECUTED

    return scenario


def _names_keys(schema: dict[str, Any], arguments: Any, keys: list[str], at_least: int) -> Scenario:
    async def scenario(factory: Factory) -> bool:
        done = await _executor(factory, schema).execute(_call(arguments))
        named = sum(f"'{k}'" in done.observation for k in keys)
        return done.status is ActionStatus.NOT_EXECUTED and named >= at_least

    return scenario


_KEYS = [f"key_{n:02}" for n in range(12)]
_REF_TYPED = {"$ref": "#/definitions/text", "type": "integer"}
_PATTERNS = {"additionalProperties": False, "patternProperties": {"^x-": {}}}

SCENARIOS: dict[str, Scenario] = {
    "e6_catch_base_exception": _e6,
    "e6_keyboard_interrupt_outcome": lambda factory: _raises(factory, KeyboardInterrupt()),
    "e6_cancel_as_outcome": _e6,
    "e6_finish_after_cancel": _e6,
    "e6_cancel_to_timeout": _e6,
    "e6_wait_for_race": _cancel_as_handler_returns,
    "e11_current_call_attribute": _e11,
    "e11_thread_local_state": _e11,
    "e11_shared_argument_buffer": _e11,
    "e11_coalesce_by_name": _e11,
    "e12_unguarded_str": _e12,
    "e12_wrong_fallback_text": _e12,
    "e12_fallback_without_class": _e12,
    "e12_repr_fallback": _e12,
    "e15_outcome_lookalike": _e15,
    "e15_parameters_count_calls": _e15,
    "e15_sync_execute": _e15,
    "e15_parameters_tuple": _e15,
    "v1_integral_float": _v1({"properties": {"n": {"type": "integer"}}}, {"n": 3.0}),
    "v1_number_is_float": _v1({"properties": {"x": {"type": "number"}}}, {"x": 3}),
    "v1_type_list_first": _v1({"properties": {"s": {"type": ["string", "null"]}}}, {"s": None}),
    "v1_pattern_fullmatch": _v1(_PATTERNS, {"x-trace": 1}),
    "v1_ref_siblings_draft07": _v1(
        {"$schema": DRAFT07, "definitions": {"text": {}}, "properties": {"q": _REF_TYPED}},
        {"q": "x"},
    ),
    "v1_dialect_exact_uri": _v1(
        {
            "$schema": DRAFT07.rstrip("#"),
            "definitions": {"text": {}},
            "properties": {"q": _REF_TYPED},
        },
        {"q": "x"},
    ),
    "v4_first_missing_only": _names_keys({"required": _KEYS}, {}, _KEYS, 10),
    "v4_no_key_named": _names_keys({"required": ["path"]}, {}, ["path"], 1),
    "v4_five_names": _names_keys({"required": _KEYS}, {}, _KEYS, 10),
    "v4_required_from_properties": _names_keys(
        {"properties": {"q": {}}, "required": ["q", "limit"]}, {"q": 1}, ["limit"], 1
    ),
    "v5_ignores_pattern_properties": _v1(_PATTERNS, {"x-trace": 1}),
    "v5_no_key_named": _names_keys(
        {"additionalProperties": False}, {"verbose": True}, ["verbose"], 1
    ),
    "v5_first_extra_only": _names_keys(
        {"additionalProperties": False}, dict.fromkeys(_KEYS, 1), _KEYS, 10
    ),
    "v5_needs_properties": _names_keys(
        {"additionalProperties": False}, {"verbose": True}, ["verbose"], 1
    ),
}


def _verdict(scenario: Scenario, factory: Factory) -> bool:
    try:
        return asyncio.run(scenario(factory))
    except KeyboardInterrupt:
        return True  # raised in a task, asyncio re-raises it out of the loop: it did propagate


def _factory(kind: str, name: str) -> Factory:
    module = importlib.import_module(f"{PACKAGE}.{kind}.{name}")
    factory: Factory = module.make_executor
    return factory


def test_every_broken_module_has_a_scenario() -> None:
    from .test_specificity_layout import BROKEN

    assert sorted(m.__name__.rsplit(".", 1)[-1] for m in BROKEN) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_bug_shows_and_the_witness_gets_it_right(name: str) -> None:
    module = importlib.import_module(f"{PACKAGE}.broken.{name}")
    if name == "e6_wait_for_race" and sys.version_info >= (3, 12):
        pytest.skip("wait_for no longer swallows a late cancellation from 3.12 on")
    scenario = SCENARIOS[name]
    assert module.CLAUSE in name.upper()
    assert _verdict(scenario, _factory("correct", "witness")), "the witness must conform"
    assert not _verdict(scenario, module.make_executor), f"{name} should show its bug"


_CORRECT = ["witness", *sorted(set(_CORRECT_NAMES) - {"witness"})]


@pytest.mark.parametrize("scenario", sorted(set(SCENARIOS)))
@pytest.mark.parametrize("correct", _CORRECT)
def test_every_correct_executor_passes_every_scenario(correct: str, scenario: str) -> None:
    assert _verdict(SCENARIOS[scenario], _factory("correct", correct))
