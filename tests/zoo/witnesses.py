"""One hand-written witness per bug: a concrete call on which the contract's answer is known.

Independent of the conformance kit, so a bug the kit misses is still shown to be live (and the
base executor to be correct on the same calls). ``WITNESSES[clause]`` is an async function taking
an executor factory and returning ``None`` when the executor behaves as the clause says, or a
one-line description of the deviation.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from _unprintable import UnprintableEnvError, UnprintableError

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

Factory = Callable[[ToolRegistry], Any]
Witness = Callable[[Factory], Awaitable["str | None"]]
Schema = Mapping[str, object]

SENTINEL = "SENTINEL-VALUE-5be1d2"
DRAFT07 = "http://json-schema.org/draft-07/schema#"


class Scripted:
    """An async handler that records what it received, then returns or raises as scripted."""

    def __init__(self, behaviour: Callable[[Any], object] = lambda arguments: "ok") -> None:
        self.behaviour = behaviour
        self.received: list[object] = []

    async def __call__(self, arguments: Any) -> Any:
        self.received.append(arguments)
        await asyncio.sleep(0)
        return self.behaviour(arguments)


def raises(exc: BaseException) -> Scripted:
    def behaviour(arguments: object) -> object:
        raise exc

    return Scripted(behaviour)


def returns(value: object) -> Scripted:
    return Scripted(lambda arguments: value)


def registry(handler: Scripted, parameters: Mapping[str, object] | None = None) -> ToolRegistry:
    schema = {"type": "object", "properties": {}} if parameters is None else parameters
    return ToolRegistry(
        [
            ToolSpec(name="tool", description="t", parameters=schema, handler=handler),
            ToolSpec(name="other", description="o", parameters={}, handler=returns("o")),
        ]
    )


def call(arguments: object, name: str = "tool") -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


async def outcome_of(factory: Factory, reg: ToolRegistry, action: Action) -> Any:
    """The outcome, or the exception ``execute`` raised (BaseException included)."""
    try:
        return await factory(reg).execute(action)
    except BaseException as exc:
        return exc


def describe(outcome: object) -> str:
    if isinstance(outcome, ActionOutcome):
        return (
            f"{outcome.status.name} synthetic={outcome.observation_is_synthetic} "
            f"completion={outcome.env_reported_completion} "
            f"truncated={outcome.observation_truncated_chars} {outcome.observation[:80]!r}"
        )
    return f"raised {type(outcome).__name__}"


def expect(
    outcome: object, status: ActionStatus, observation: str | None, synthetic: bool
) -> str | None:
    if not isinstance(outcome, ActionOutcome):
        return describe(outcome)
    if outcome.status is not status or outcome.observation_is_synthetic is not synthetic:
        return describe(outcome)
    if observation is not None and outcome.observation != observation:
        return describe(outcome)
    return None


async def rejected(
    factory: Factory, parameters: Mapping[str, object], arguments: object
) -> str | None:
    handler = Scripted()
    outcome = await outcome_of(factory, registry(handler, parameters), call(arguments))
    if handler.received:
        return "handler called for a call that must be rejected"
    return expect(outcome, ActionStatus.NOT_EXECUTED, None, True)


async def accepted(
    factory: Factory, parameters: Mapping[str, object], arguments: object
) -> str | None:
    outcome = await outcome_of(factory, registry(returns("ran"), parameters), call(arguments))
    return expect(outcome, ActionStatus.EXECUTED, "ran", False)


# --- dispatch ------------------------------------------------------------------------------------


async def e1(factory: Factory) -> str | None:
    outcome = await outcome_of(factory, registry(Scripted()), Action(code="print(1)"))
    return expect(outcome, ActionStatus.NOT_EXECUTED, None, True)


class RaisingEqKey:
    """A key hashed like ``"q"`` whose ``__eq__`` raises."""

    def __hash__(self) -> int:
        return hash("q")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ exploded")

    def __repr__(self) -> str:
        return "<RaisingEqKey>"


REQUIRES_Q = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


async def e2(factory: Factory) -> str | None:
    problem = await rejected(factory, {"type": "object", "required": ["a"]}, {})
    if problem:
        return problem
    problem = await rejected(factory, REQUIRES_Q, {RaisingEqKey(): "x"})
    return f"a key whose __eq__ raises: {problem}" if problem else None


async def e3(factory: Factory) -> str | None:
    reg = registry(raises(ToolEnvironmentError("backend down")))
    return expect(
        await outcome_of(factory, reg, call({})), ActionStatus.ENV_ERROR, "backend down", False
    )


class NameRaises(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no name")


class Nameless(Exception, metaclass=NameRaises):
    pass


async def e4(factory: Factory) -> str | None:
    for exc, text in ((RuntimeError("boom"), "RuntimeError: boom"), (Nameless("x"), "Nameless: x")):
        outcome = await outcome_of(factory, registry(raises(exc)), call({}))
        problem = expect(outcome, ActionStatus.EXECUTED, text, False)
        if problem:
            return f"{text.split(':')[0]} from the handler: {problem}"
    return None


async def e5(factory: Factory) -> str | None:
    text = "  \n" + "x" * 300 + " \t"
    return expect(
        await outcome_of(factory, registry(returns(text)), call({})),
        ActionStatus.EXECUTED,
        text,
        False,
    )


async def e6(factory: Factory) -> str | None:
    for exc in (asyncio.CancelledError("stop"), KeyboardInterrupt()):
        outcome = await outcome_of(factory, registry(raises(exc)), call({}))
        if (
            sys.version_info < (3, 11)
            and isinstance(exc, asyncio.CancelledError)
            and isinstance(outcome, asyncio.CancelledError)
        ):
            # Before 3.11, awaiting a task that ended in CancelledError raises a new
            # CancelledError (asyncio's own behaviour), so a task-based executor cannot hand
            # back the same object; it still propagates cancellation unchanged in kind.
            continue
        if outcome is not exc:
            return f"{type(exc).__name__} from the handler: {describe(outcome)}"
    return await _e6_late_cancel(factory)


async def _e6_late_cancel(factory: Factory) -> str | None:
    """A cancellation that arrives after the handler returned, while `execute` has not yet
    handed back its outcome, must still propagate (what `asyncio.wait_for` lost before 3.12).
    No clock: the witness cancels on the first loop turn at which the handler has returned."""
    finished = returns("done")
    task = asyncio.ensure_future(factory(registry(finished)).execute(call({})))
    for _ in range(1000):
        if finished.received or task.done():
            break
        await asyncio.sleep(0)
    sent = not task.done() and task.cancel()
    try:
        outcome = await task
    except BaseException:
        return None
    if sent:
        return f"cancelled after the handler returned, yet: {describe(outcome)}"
    return None


async def e7(factory: Factory) -> str | None:
    actions = [
        (registry(returns("x")), call({})),
        (registry(raises(RuntimeError("x"))), call({})),
        (registry(raises(ToolEnvironmentError("x"))), call({})),
        (registry(Scripted()), call({}, name="missing")),
        (registry(Scripted()), Action(code="x")),
    ]
    for reg, action in actions:
        outcome = await outcome_of(factory, reg, action)
        if not isinstance(outcome, ActionOutcome) or (
            outcome.env_reported_completion or outcome.observation_truncated_chars != 0
        ):
            return describe(outcome)
    return None


async def e8(factory: Factory) -> str | None:
    handler = Scripted()
    arguments = {"a": 1, "b": [1, {"c": "d"}]}
    await outcome_of(factory, registry(handler), call(arguments))
    if handler.received != [arguments]:
        return f"accepted call: handler received {handler.received!r}"
    for action in (call({}, name="missing"), Action(code="x")):
        handler = Scripted()
        await outcome_of(factory, registry(handler), action)
        if handler.received:
            return "handler called for an E1/E2 action"
    return await rejected(factory, {"type": "object", "required": ["a"]}, {})


class ClaimsStr:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


async def e9(factory: Factory) -> str | None:
    for result in (42, ClaimsStr()):
        outcome = await outcome_of(factory, registry(returns(result)), call({}))
        if not (isinstance(outcome, TypeError) and "'tool'" in str(outcome)):
            return f"{type(result).__name__} returned: {describe(outcome)}"
    return None


async def e10(factory: Factory) -> str | None:
    for exc in (ValueError("bad"), ToolValidationError("mine"), OSError("disk")):
        outcome = await outcome_of(factory, registry(raises(exc)), call({}))
        problem = expect(outcome, ActionStatus.EXECUTED, f"{type(exc).__name__}: {exc}", False)
        if problem:
            return f"{type(exc).__name__}: {problem}"
    return None


async def e11(factory: Factory) -> str | None:
    async def echo(arguments: Any) -> str:
        await asyncio.sleep(0)
        return str(arguments["n"])

    reg = ToolRegistry([ToolSpec(name="tool", description="t", parameters={}, handler=echo)])
    executor = factory(reg)
    outcomes = await asyncio.gather(*(executor.execute(call({"n": n})) for n in range(8)))
    got = [o.observation for o in outcomes]
    return None if got == [str(n) for n in range(8)] else f"concurrent observations {got}"


class StrSystemExit(Exception):
    def __str__(self) -> str:
        raise SystemExit(3)


async def e12(factory: Factory) -> str | None:
    for exc in (UnprintableError(), StrSystemExit()):
        outcome = await outcome_of(factory, registry(raises(exc)), call({}))
        text = f"{type(exc).__name__}: <exception str() failed>"
        problem = expect(outcome, ActionStatus.EXECUTED, text, False)
        if problem:
            return problem
    outcome = await outcome_of(factory, registry(raises(UnprintableEnvError())), call({}))
    return expect(
        outcome, ActionStatus.ENV_ERROR, "UnprintableEnvError: <exception str() failed>", False
    )


def _plain(value: object) -> bool:
    if isinstance(value, dict):
        return type(value) is dict and all(_plain(v) for v in value.values())
    if isinstance(value, (list, tuple, Mapping)):
        return type(value) is list and all(_plain(v) for v in value)
    return True


async def e13(factory: Factory) -> str | None:
    seen: list[object] = []

    def mutate(arguments: Any) -> str:
        seen.append(repr(arguments))
        ok = _plain(arguments)
        try:
            arguments["nested"]["k"].append(1)
            arguments["added"] = True
        except Exception as exc:
            return f"immutable {type(exc).__name__}"
        return "plain" if ok else "not plain"

    executor = factory(registry(Scripted(mutate)))
    action = call({"nested": {"k": [0]}})
    first = await executor.execute(action)
    second = await executor.execute(call({"nested": {"k": [0]}}))
    if first.observation != "plain":
        return f"handler got {seen[0]}: {first.observation}"
    if len(seen) != 2 or seen[0] != seen[1]:
        return f"a mutation reached a later call: {seen}"
    assert action.tool_call is not None
    if dict(action.tool_call.arguments).keys() != {"nested"}:
        return "a mutation reached the recorded call"
    del second
    return await _e13_non_json_leaf(factory)


class Box:
    def __init__(self) -> None:
        self.items: list[int] = []

    __hash__ = object.__hash__


async def _e13_non_json_leaf(factory: Factory) -> str | None:
    def vandal(arguments: Any) -> str:
        for box in arguments["tags"]:
            box.items.append(1)
        return "done"

    action = call({"tags": {Box()}})
    await outcome_of(factory, registry(Scripted(vandal)), action)
    assert action.tool_call is not None
    (recorded,) = action.tool_call.arguments["tags"]
    if recorded.items:
        return "a mutation of a set member reached the recorded call"
    return await _e13_object_key(factory) or await _e13_leaf_handed_over(factory)


async def _e13_object_key(factory: Factory) -> str | None:
    def vandal(arguments: Any) -> str:
        for key in arguments:
            key.items.append(1)
        return "done"

    action = call({Box(): "the only key"})
    await outcome_of(factory, registry(Scripted(vandal)), action)
    assert action.tool_call is not None
    (recorded,) = action.tool_call.arguments
    return "a mutation of an object key reached the recorded call" if recorded.items else None


async def _e13_leaf_handed_over(factory: Factory) -> str | None:
    got: list[object] = []

    def keep(arguments: Any) -> str:
        got.append(arguments.get("raw"))
        return "kept"

    await outcome_of(factory, registry(Scripted(keep)), call({"raw": bytearray(b"ab")}))
    if not got:
        return "the handler never got the call holding a bytearray"
    if got[0] != b"ab":
        return f"the handler got {got[0]!r} for bytearray(b'ab')"
    return None


# --- validation ----------------------------------------------------------------------------------


async def v1(factory: Factory) -> str | None:
    cases: list[tuple[Mapping[str, object], dict[str, object]]] = [
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 3.0}),
        (
            {"type": "object", "additionalProperties": False, "patternProperties": {"^x": {}}},
            {"xa": 1},
        ),
        (
            {
                "$schema": DRAFT07,
                "definitions": {"s": {"type": "string"}},
                "properties": {"r": {"$ref": "#/definitions/s", "type": "integer"}},
            },
            {"r": "text"},
        ),
        ({"properties": {"o": {"type": ["string", "null"]}}}, {"o": None}),
        ({"properties": {"d": {"type": "dict"}}}, {"d": {"a": 1}}),
    ]
    for schema, arguments in cases:
        problem = await accepted(factory, schema, arguments)
        if problem:
            return f"{arguments!r} under {schema!r}: {problem}"
    return None


async def v2(factory: Factory) -> str | None:
    outcome = await outcome_of(factory, registry(Scripted()), call({}, name="nope"))
    problem = expect(outcome, ActionStatus.NOT_EXECUTED, None, True)
    if problem:
        return problem
    text = outcome.observation
    if not all(n in text for n in ("nope", "'tool'", "'other'")):
        return f"message does not name the tool and the visible tools: {text!r}"
    return None


async def v3(factory: Factory) -> str | None:
    return await rejected(factory, {}, [1, 2])


async def _names_keys(
    factory: Factory, schema: Mapping[str, object], args: object, key: str
) -> str | None:
    problem = await rejected(factory, schema, args)
    if problem:
        return problem
    outcome = await outcome_of(factory, registry(Scripted(), schema), call(args))
    return None if key in outcome.observation else f"message does not name {key!r}"


_TWELVE = [f"key_{index:02d}_x" for index in range(12)]


async def _names_ten(factory: Factory, schema: Mapping[str, object], args: object) -> str | None:
    """Of twelve keys to name, the message names at least ten (the kit's floor)."""
    outcome = await outcome_of(factory, registry(Scripted(), schema), call(args))
    named = [key for key in _TWELVE if key in outcome.observation]
    return None if len(named) >= 10 else f"names {len(named)} of 12 keys: {outcome.observation!r}"


async def v4(factory: Factory) -> str | None:
    problem = await _names_keys(factory, {"required": ["needed_key"]}, {}, "needed_key")
    return problem or await _names_ten(factory, {"required": _TWELVE}, {})


async def v5(factory: Factory) -> str | None:
    schema = {"properties": {"a": {}}, "additionalProperties": False}
    problem = await _names_keys(factory, schema, {"a": 1, "surplus_key": 2}, "surplus_key")
    problem = problem or await _names_ten(factory, schema, dict.fromkeys(_TWELVE, 1))
    # Issue 18: closed with no properties at all, every key is unexpected.
    problem = problem or await _names_keys(
        factory, {"additionalProperties": False}, {"lone_key": 1}, "lone_key"
    )
    if problem:
        return problem
    schema = {"additionalProperties": False, "patternProperties": {"^x": {}}}
    return await accepted(factory, schema, {"xa": 1})


async def v6(factory: Factory) -> str | None:
    for type_name, value in (("integer", True), ("number", False), ("string", 1), ("array", {})):
        problem = await rejected(factory, {"properties": {"v": {"type": type_name}}}, {"v": value})
        if problem:
            return f"{value!r} for {type_name}: {problem}"
    wide = {"properties": {key: {"type": "string"} for key in _TWELVE}}
    problem = await _names_ten(factory, wide, dict.fromkeys(_TWELVE, 0))
    if problem:
        return problem
    schema = {**REQUIRES_Q, "properties": {"n": {"type": ["integer", "null"]}}}
    outcome = await outcome_of(factory, registry(Scripted(), schema), call({"n": None}))
    if isinstance(outcome, ActionOutcome) and "'n'" in outcome.observation:
        return f"a valid null for ['integer', 'null'] is named: {outcome.observation!r}"
    return None


async def v8(factory: Factory) -> str | None:
    reg = registry(Scripted(), {"required": ["a"], "properties": {"b": {"type": "integer"}}})
    outcome = await outcome_of(factory, reg, call({"b": SENTINEL}))
    if not isinstance(outcome, ActionOutcome) or SENTINEL in outcome.observation:
        return f"value echoed: {describe(outcome)}"
    long_keys = {f"{'k' * 200}{n}": n for n in range(50)}
    reg = registry(Scripted(), {"additionalProperties": False})
    for action in (call(long_keys), call({}, name="n" * 5000)):
        outcome = await outcome_of(factory, reg, action)
        if not isinstance(outcome, ActionOutcome) or len(outcome.observation) >= 2000:
            return f"message of {len(getattr(outcome, 'observation', ''))} chars"
    return None


WITNESSES: dict[str, Witness] = {
    "E1": e1, "E2": e2, "E3": e3, "E4": e4, "E5": e5, "E6": e6, "E7": e7, "E8": e8,
    "E9": e9, "E10": e10, "E11": e11, "E12": e12, "E13": e13,
    "V1": v1, "V2": v2, "V3": v3, "V4": v4, "V5": v5, "V6": v6, "V8": v8,
}  # fmt: skip
"""Clause ID -> witness. V7 and E14 have none: they permit, they never forbid."""


def violations(factory: Factory) -> dict[str, str]:
    """Clause ID -> deviation, for every witness the executor fails."""

    async def collect() -> dict[str, str]:
        found = {}
        for clause, witness in WITNESSES.items():
            problem = await witness(factory)
            if problem is not None:
                found[clause] = problem
        return found

    return asyncio.run(collect())
