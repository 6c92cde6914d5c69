"""The issue-9 zoo: every blind-spot category has an entry the kit must catch, exactly.

Each broken entry of `zoo.independent` is certified on its `VIOLATES` clauses (profile ci,
seed 0, level strict) and exactly those clauses must fail, each with a counterexample and a
reproduction line. An entry the kit misses today carries `KNOWN_MISS` and is a strict xfail,
so it turns red the day the kit learns to catch it (then delete the `KNOWN_MISS`); where
`KNOWN_UNSTABLE` says the ci-seed-0 verdict depends on the process, the xfail is not strict.
A liveness test per entry shows the planted bug on a hand-written call without the kit, so a
strict xfail can never hide a bug that is not there.

Each unusual entry of `zoo.independent_unusual` must certify on the clauses its twist
touches, except those in its `KNOWN_FALSE_VERDICTS`: clauses the kit wrongly fails today,
each a strict xfail of its own.

Only the public API is used: ``conformance.certify`` and the `Report` fields.
"""

from __future__ import annotations

import asyncio
import sys
import unicodedata
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from _verdicts import assert_fails_exactly
from zoo.independent import INDEPENDENT, LookalikeOutcome, ReturnsLookalikeOutcome, target_of
from zoo.independent_unusual import INDEPENDENT_UNUSUAL, REQUIRES

from conformance import certify
from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryExecutor,
    ReplayPolicy,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

SEED = 0
WHOLE_LEVEL = frozenset({ReturnsLookalikeOutcome.__name__})
"""Entries whose one bug could make other clauses fail too: certified on the whole strict
level (profile quick), where exactly their clauses must fail."""


def _param(entry: Any, reason: str | None) -> Any:
    unstable = getattr(entry, "KNOWN_UNSTABLE", None)
    marks = (
        [
            pytest.mark.xfail(
                strict=not unstable, reason=f"{reason} ({unstable})" if unstable else reason
            )
        ]
        if reason
        else []
    )
    oldest = getattr(entry, "MIN_PYTHON", None)
    if oldest is not None and sys.version_info < oldest:
        marks.append(pytest.mark.skip(reason=f"needs Python {'.'.join(map(str, oldest))}+"))
    return pytest.param(entry, id=entry.__name__, marks=marks)


def test_independent_zoo_covers_every_clause_it_names_and_is_precise() -> None:
    names = [entry.__name__ for entry in (*INDEPENDENT, *INDEPENDENT_UNUSUAL)]
    assert len(set(names)) == len(names)
    for entry in INDEPENDENT:
        assert entry.VIOLATES, f"{entry.__name__} names no clause"
        assert len(set(entry.VIOLATES)) == len(entry.VIOLATES)
        assert entry.__doc__ and len(entry.__doc__) > 40, f"{entry.__name__}: say the bug"
    covered = {clause for entry in INDEPENDENT for clause in entry.VIOLATES}
    assert covered >= {"V1", "V2", "V4", "V5", "V6", "V8", "E1", "E4", "E5", "E6", "E8"}
    assert covered >= {"E9", "E10", "E15"}


@pytest.mark.parametrize("entry", [_param(e, getattr(e, "KNOWN_MISS", None)) for e in INDEPENDENT])
def test_certify_fails_exactly_the_clauses_an_independent_entry_violates(entry: Any) -> None:
    whole = entry.__name__ in WHOLE_LEVEL
    only = None if whole else list(entry.VIOLATES)
    report = certify(
        target_of(entry),
        level="strict",
        profile="quick" if whole else "ci",
        seed=SEED,
        only=only,
        target_name=f"zoo.independent:{entry.__name__}",
    )
    assert_fails_exactly(report, entry.__name__, entry.VIOLATES)


def _needs(entry: Any) -> None:
    module = REQUIRES.get(entry.__name__)
    if module is not None:
        pytest.importorskip(module)


@pytest.mark.parametrize("entry", INDEPENDENT_UNUSUAL, ids=lambda e: e.__name__)
def test_certify_passes_an_unusual_but_correct_executor_on_its_twist(entry: Any) -> None:
    _needs(entry)
    clauses = [c for c in entry.TWIST_CLAUSES if c not in entry.KNOWN_FALSE_VERDICTS]
    # profile quick keeps CI time modest; measure_independent.py --unusual runs them at ci.
    report = certify(entry, level="strict", profile="quick", seed=SEED, only=clauses)
    assert report.passed, report.to_text()


@pytest.mark.parametrize(
    ("entry", "clause"),
    [
        pytest.param(
            entry,
            clause,
            id=f"{entry.__name__}-{clause}",
            marks=pytest.mark.xfail(strict=True, reason=reason),
        )
        for entry in INDEPENDENT_UNUSUAL
        for clause, reason in entry.KNOWN_FALSE_VERDICTS.items()
    ],
)
def test_certify_passes_an_unusual_executor_where_the_kit_is_wrong_today(
    entry: Any, clause: str
) -> None:
    _needs(entry)
    report = certify(entry, level="strict", profile="ci", seed=SEED, only=[clause])
    assert report.passed, report.to_text()


# ---------------------------------------------------------------------------------------------
# Liveness: each planted bug shows on one hand-written call, without the kit


async def _ok(arguments: dict[str, Any]) -> str:
    return "ok"


def _registry(*specs: tuple[str, dict[str, Any]], handler: Any = _ok, **extra: Any) -> ToolRegistry:
    return ToolRegistry(
        specs=[
            ToolSpec(name=name, description="", parameters=schema, handler=handler, **extra)
            for name, schema in specs
        ]
    )


def _run(awaitable: Awaitable[Any]) -> Any:
    return asyncio.run(_wrap(awaitable))


async def _wrap(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _call(name: str, arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


def _outcome_of(entry: Any, registry: ToolRegistry, action: Action) -> Any:
    executor = target_of(entry)(registry)
    return _run(executor.execute(action))


def _rejected(outcome: Any) -> bool:
    return outcome.status is ActionStatus.NOT_EXECUTED


_D7 = "http://json-schema.org/draft-07/schema"
_REF_SIBLING = {
    "type": "object",
    "properties": {"path": {"$ref": "#/definitions/P", "type": "string"}},
    "definitions": {"P": {"type": ["string", "array"]}},
}


class _Counting:
    """A handler (`handler`, an ``async def``) that records what it got in `calls`."""

    def __init__(self, behaviour: Callable[[int], Awaitable[Any]]) -> None:
        self.calls: list[Any] = []

        async def handler(arguments: Any) -> Any:
            self.calls.append(arguments)
            return await behaviour(len(self.calls))

        self.handler = handler


def _live_v1(schema: dict[str, Any], arguments: dict[str, Any]) -> Callable[[Any], None]:
    def check(entry: Any) -> None:
        outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", arguments))
        assert _rejected(outcome), "the valid call was not rejected: the V1 bug is dead"

    return check


def _live_v2(known: str, called: str) -> Callable[[Any], None]:
    def check(entry: Any) -> None:
        outcome = _outcome_of(entry, _registry((known, {"type": "object"})), _call(called, {}))
        assert not _rejected(outcome), f"{called!r} was rejected: the V2 bug is dead"

    return check


def _live_observation(text: str) -> Callable[[Any], None]:
    async def returns(arguments: Any) -> str:
        return text

    def check(entry: Any) -> None:
        outcome = _outcome_of(entry, _registry(("t", {}), handler=returns), _call("t", {}))
        assert outcome.observation != text, "the observation is exact: the E5 bug is dead"

    return check


def _live_str_subclass(entry: Any) -> None:
    class Text(str):
        pass

    async def returns(arguments: Any) -> str:
        return Text("from a str subclass")

    with pytest.raises(TypeError):  # the E5 bug: a str subclass is taken for a non-str value
        _outcome_of(entry, _registry(("t", {}), handler=returns), _call("t", {}))


def _live_exception(exc: Exception, clause: str) -> Callable[[Any], None]:
    async def raises(arguments: Any) -> str:
        raise exc

    def check(entry: Any) -> None:
        outcome = _outcome_of(entry, _registry(("t", {}), handler=raises), _call("t", {}))
        if clause == "E10":
            assert outcome.status is ActionStatus.ENV_ERROR, "the E10 bug is dead"
        else:
            assert outcome.observation != f"{type(exc).__name__}: {exc}", "the E4 bug is dead"

    return check


class Outer:
    class Timeout(Exception):
        """A nested exception class: its __qualname__ is ``Outer.Timeout``."""


def _caused() -> Exception:
    try:
        raise OSError("disk")
    except OSError as cause:
        try:
            raise RuntimeError("write failed") from cause
        except RuntimeError as exc:
            return exc


def _group() -> Exception:
    builtin = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)
    group = builtin.get("ExceptionGroup")
    if group is None:
        pytest.skip("ExceptionGroup is new in Python 3.11")
    result: Exception = group("two failures", [KeyError("a"), ValueError("b")])
    return result


def _live_e9(entry: Any) -> None:
    async def returns_int(arguments: Any) -> Any:
        return 42

    returns_int.__qualname__ = "handler_function"
    registry = _registry(("read_file", {}), handler=returns_int)
    with pytest.raises(TypeError) as raised:
        _outcome_of(entry, registry, _call("read_file", {}))
    assert "read_file" not in str(raised.value), "the message names the tool: the E9 bug is dead"


def _live_e6(entry: Any) -> None:
    async def scenario() -> BaseException:
        started = asyncio.Event()

        async def waits(arguments: Any) -> str:
            started.set()
            await asyncio.get_running_loop().create_future()
            return "never"

        executor = entry(_registry(("t", {}), handler=waits))
        task = asyncio.ensure_future(executor.execute(_call("t", {})))
        await started.wait()
        task.cancel("stop: the user pressed Ctrl-C")
        try:
            await task
        except asyncio.CancelledError as exc:
            return exc
        raise AssertionError("execute did not raise CancelledError")

    raised = asyncio.run(scenario())
    assert "stop: the user pressed Ctrl-C" not in raised.args, "the E6 bug is dead"


def _live_e8_default(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
    schema = {"type": "object", "properties": {"limit": {"type": "integer", "default": 10}}}
    _outcome_of(entry, _registry(("t", schema), handler=handler.handler), _call("t", {}))
    assert handler.calls != [{}], "the handler got exactly {}: the E8 bug is dead"


def _live_e8_big_int(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
    _outcome_of(entry, _registry(("t", {}), handler=handler.handler), _call("t", {"n": 2**64 + 1}))
    assert handler.calls[0]["n"] != 2**64 + 1, "the handler got the exact int: E8 bug dead"


def _live_e8_retry(entry: Any) -> None:
    async def behaviour(n: int) -> str:
        raise ToolEnvironmentError("backend down")

    handler = _Counting(behaviour)
    _outcome_of(entry, _registry(("t", {}), handler=handler.handler), _call("t", {}))
    assert len(handler.calls) != 1, "the handler ran once: the E8 bug is dead"


def _live_e8_memo(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, f"run {n}"))
    executor = entry(_registry(("t", {}), handler=handler.handler, replay_policy=ReplayPolicy.SAFE))

    async def twice() -> None:
        await executor.execute(_call("t", {"q": 1}))
        await executor.execute(_call("t", {"q": 1}))

    _run(twice())
    assert len(handler.calls) != 2, "the handler ran for both calls: the E8 bug is dead"


def _live_e8_coalesce(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0.01, f"run {n}"))
    executor = entry(_registry(("t", {}), handler=handler.handler))

    async def together() -> None:
        await asyncio.gather(*(executor.execute(_call("t", {"q": 1})) for _ in range(2)))

    _run(together())
    assert len(handler.calls) != 2, "the handler ran for both calls: the E8 bug is dead"


def _live_e1(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
    code = '{"name": "read_file", "arguments": {"path": "a.txt"}}'
    outcome = _outcome_of(
        entry, _registry(("read_file", {}), handler=handler.handler), Action(code=code)
    )
    assert handler.calls and outcome.status is ActionStatus.EXECUTED, "the E1 bug is dead"


def _live_v8(entry: Any) -> None:
    schema = {"type": "object", "properties": {"limit": {"type": "string"}}}
    outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", {"limit": 987654}))
    assert _rejected(outcome) and "987654" in outcome.observation, "the V8 bug is dead"


def _live_v6(entry: Any) -> None:
    schema = {**_REF_SIBLING, "$defs": _REF_SIBLING["definitions"]}
    schema["properties"] = {"path": {"$ref": "#/$defs/P", "type": "string"}}
    outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", {"path": ["a"]}))
    assert not _rejected(outcome), "the wrong type was rejected: the V6 bug is dead"


def _live_string_as_number(entry: Any) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", {"x": "7"}))
    assert not _rejected(outcome), "a string was rejected for a number: the V6 bug is dead"


def _live_cross_registry_required(entry: Any) -> None:
    strict = {"type": "object", "required": ["q"]}
    _outcome_of(entry, _registry(("t", strict)), _call("t", {"q": "x"}))
    # the same class, a registry whose "t" requires nothing: the stale list rejects {}
    executor = entry(_registry(("t", {"type": "object"})))
    assert _rejected(_run(executor.execute(_call("t", {})))), "the state bug is dead"


def _live_cross_registry_closed(entry: Any) -> None:
    factory = target_of(entry)
    first = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    second = {"type": "object", "properties": {"b": {}}, "additionalProperties": False}
    _run(factory(_registry(("t", first))).execute(_call("t", {"a": 1})))
    outcome = _run(factory(_registry(("t", second))).execute(_call("t", {"b": 1})))
    assert _rejected(outcome), "the valid key was accepted: the shared-state bug is dead"


def _live_e15(entry: Any) -> None:
    executor = entry(_registry(("b", {}), ("a", {})))
    params = getattr(executor, "parameters", None)
    if params is None:
        return  # no parameters() at all: the bug itself
    first, second = params(), params()
    plain = all(isinstance(k, str) and isinstance(v, str) for k, v in first.items())
    exact = first == {"tools": "b,a"} or not isinstance(executor, RegistryExecutor)
    assert not (plain and first == second and exact), "parameters() conforms: E15 bug dead"


def _live_e15_lookalike(entry: Any) -> None:
    outcome = _outcome_of(entry, _registry(("t", {})), _call("t", {}))
    assert isinstance(outcome, LookalikeOutcome) and not isinstance(outcome, ActionOutcome)


def _live_v8_literal(entry: Any) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", {"n": None}))
    assert _rejected(outcome) and "got null (null)" in outcome.observation, "V8 bug dead"


def _live_e8_special_name(name: str, *, raises: bool = False) -> Callable[[Any], None]:
    """The handler does not get exactly ``{name: "v"}``: dropped, or (`raises`) execute
    raised TypeError before the handler ran."""

    def check(entry: Any) -> None:
        handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
        schema = {"type": "object", "properties": {name: {"type": "string"}}}
        registry = _registry(("t", schema), handler=handler.handler)
        if raises:
            with pytest.raises(TypeError):
                _outcome_of(entry, registry, _call("t", {name: "v"}))
        else:
            _outcome_of(entry, registry, _call("t", {name: "v"}))
        assert handler.calls != [{name: "v"}], f"{name!r} reached the handler: E8 bug dead"

    return check


def _live_e8_nested_default(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
    options = {"type": "object", "properties": {"depth": {"type": "integer", "default": 2}}}
    schema = {"type": "object", "properties": {"q": {"type": "string"}, "opts": options}}
    registry = _registry(("t", schema), handler=handler.handler)
    _outcome_of(entry, registry, _call("t", {"opts": {}}))
    assert handler.calls != [{"opts": {}}], "the handler got exactly the call: E8 bug dead"


def _live_e6_system_exit(entry: Any) -> None:
    async def exits(arguments: Any) -> str:
        raise SystemExit(2)

    outcome = _outcome_of(entry, _registry(("t", {}), handler=exits), _call("t", {}))
    assert isinstance(outcome, ActionOutcome), "SystemExit propagated: the E6 bug is dead"


def _live_v5_null_extra(entry: Any) -> None:
    schema = {"type": "object", "properties": {"q": {}}, "additionalProperties": False}
    outcome = _outcome_of(entry, _registry(("t", schema)), _call("t", {"q": 1, "extra": None}))
    assert not _rejected(outcome), "the undeclared null key was rejected: the V5 bug is dead"


def _live_e8_probe(entry: Any) -> None:
    handler = _Counting(lambda n: asyncio.sleep(0, "ok"))
    schema = {"type": "object", "required": ["q"]}
    executor = entry(_registry(("t", schema), handler=handler.handler))

    async def rejected_then_idle() -> Any:
        outcome = await executor.execute(_call("t", {}))
        await asyncio.sleep(0.01)
        return outcome

    outcome = asyncio.run(rejected_then_idle())
    assert _rejected(outcome) and handler.calls, "no probe of the rejected call: E8 bug dead"


def _live_verdict_memo(entry: Any) -> None:
    schema = {"type": "object", "required": ["q"]}
    executor = entry(_registry(("t", schema)))

    async def both() -> tuple[Any, Any]:
        first = await executor.execute(_call("t", {"q": 1}))
        return first, await executor.execute(_call("t", {}))

    first, second = _run(both())
    assert not _rejected(first) and not _rejected(second), "the V4 memo bug is dead"


def _live_one_member_group(entry: Any) -> None:
    group = _group().__class__

    async def raises(arguments: Any) -> str:
        raise group("unhandled errors in a TaskGroup", [ToolEnvironmentError("down")])

    outcome = _outcome_of(entry, _registry(("t", {}), handler=raises), _call("t", {}))
    assert outcome.status is ActionStatus.ENV_ERROR, "the group was kept: the E10 bug is dead"


def _live_e11_loops(entry: Any) -> None:
    async def slow(arguments: Any) -> str:
        await asyncio.sleep(0.001)
        return "ok"

    executor = entry(_registry(("t", {}), handler=slow))

    async def together() -> list[Any]:
        calls = (executor.execute(_call("t", {"q": n})) for n in range(2))
        return list(await asyncio.gather(*calls, return_exceptions=True))

    results = asyncio.run(together()) + asyncio.run(together())
    assert any(isinstance(r, RuntimeError) for r in results), "one loop only: E11 bug dead"


LIVE: dict[str, Callable[[Any], None]] = {
    "LegacyDialectOnlyWithHash": _live_v1({**_REF_SIBLING, "$schema": _D7}, {"path": ["a"]}),
    "RefSilencesSiblingsOnlyInDraft07": _live_v1(
        {**_REF_SIBLING, "$schema": "http://json-schema.org/draft-06/schema#"}, {"path": ["a"]}
    ),
    "RefSilencesSiblingsInEveryDialect": _live_v6,
    "FalsyAdditionalPropertiesCloses": _live_v1(
        {"type": "object", "properties": {}, "additionalProperties": {}}, {"extra": 1}
    ),
    "AdditionalPropertiesSchemaCloses": _live_v1(
        {"type": "object", "additionalProperties": {"type": "string"}}, {"extra": "x"}
    ),
    "PatternPropertiesAnchoredMatch": _live_v1(
        {"type": "object", "additionalProperties": False, "patternProperties": {"_id$": {}}},
        {"user_id": 1},
    ),
    "IntegralFloatByDecimalText": _live_v1(
        {"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 1e16}
    ),
    "IntegersLimitedTo64Bits": _live_v1(
        {"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 2**64}
    ),
    "NumberCheckOnlyRulesOutBools": _live_string_as_number,
    "NumberViaFloat": _live_v1(
        {"type": "object", "properties": {"n": {"type": "number"}}}, {"n": 10**400}
    ),
    "ArgumentsThroughFloat64": _live_e8_big_int,
    "MinimumTreatedAsExclusive": _live_v1(
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}, {"n": 1}
    ),
    "MaximumTreatedAsExclusive": _live_v1(
        {"type": "object", "properties": {"n": {"type": "number", "maximum": 100.5}}},
        {"n": 100.5},
    ),
    "ExclusiveMinimumAsIntegerStep": _live_v1(
        {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 2}}},
        {"n": 2.5},
    ),
    "MaxLengthCountsUtf8Bytes": _live_v1(
        {"type": "object", "properties": {"s": {"type": "string", "maxLength": 8}}},
        {"s": "日本語のテキスト"},
    ),
    "StrictDateTimeFormat": _live_v1(
        {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}},
        {"at": "1985-04-12T23:20:50.52+01:00"},
    ),
    "ToolLookupSwapsDashAndUnderscore": _live_v2("read_file", "read-file"),
    "ToolLookupStripsFunctionsPrefix": _live_v2("read_file", "functions.read_file"),
    "ToolLookupDropsNamespace": _live_v2("read_file", "github/read_file"),
    "EchoesNonStringValues": _live_v8,
    "ExceptionQualnameInObservation": _live_exception(Outer.Timeout("slow"), "E4"),
    "AppendsExceptionCause": _live_exception(_caused(), "E4"),
    "UnwrapsExceptionGroup": lambda entry: _live_exception(_group(), "E4")(entry),
    "NetworkErrorsAreEnvErrors": _live_exception(ConnectionRefusedError(111, "refused"), "E10"),
    "TimeoutIsEnvError": _live_exception(TimeoutError("slow"), "E10"),
    "ExactStrResultOnly": _live_str_subclass,
    "NormalisesCrlf": _live_observation("a\r\nb"),
    "NormalisesUnicodeNfc": _live_observation(unicodedata.normalize("NFD", "café")),
    "StripsTrailingSpacesPerLine": _live_observation("a  \nb"),
    "DropsC1ControlCharacters": _live_observation("a\x85b\x7f"),
    "NonStrMessageNamesHandler": _live_e9,
    "ReraisesFreshCancelledError": _live_e6,
    "FillsSchemaDefaults": _live_e8_default,
    "RetriesEnvironmentErrorOnce": _live_e8_retry,
    "MemoisesSafeTools": _live_e8_memo,
    "CoalescesConcurrentCalls": _live_e8_coalesce,
    "ParsesCodeAsToolCall": _live_e1,
    "RequiredKeysCachedByToolName": _live_cross_registry_required,
    "SharedClosedKeysFactory": _live_cross_registry_closed,
    "WithoutParameters": _live_e15,
    "ParametersNotStrings": _live_e15,
    "ParametersCountCalls": _live_e15,
    "SortedParametersRegistryExecutor": _live_e15,
    "CommaSpaceParametersRegistryExecutor": _live_e15,
    "ReturnsLookalikeOutcome": _live_e15_lookalike,
    # ---- issue 9 round 3
    "DropsRunnableConfigKeys": _live_e8_special_name("config"),
    "RaisesOnSelfProperty": _live_e8_special_name("self", raises=True),
    "EchoesBooleanAndNullValues": _live_v8_literal,
    # ---- issue 37
    "FillsNestedDefaultsKeepsTopLevelKeys": _live_e8_nested_default,
    "SystemExitBecomesObservation": _live_e6_system_exit,
    "ProbesHandlerOfRejectedCall": _live_e8_probe,
    "MemoisesValidationVerdictPerToolName": _live_verdict_memo,
    "DropsNullUndeclaredKeys": _live_v5_null_extra,
    "UnwrapsSingleMemberGroup": _live_one_member_group,
    "SerialisesWithSharedLock": _live_e11_loops,
    "AssertsFormat": _live_v1(
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
        {"d": "tomorrow"},
    ),
    "EnumMembersComparedFrozen": _live_v1(
        {"type": "object", "properties": {"p": {"enum": [[1, 2], "x"]}}}, {"p": [1, 2]}
    ),
    "PatternFullmatch": _live_v1(
        {"type": "object", "properties": {"s": {"type": "string", "pattern": "[a-z]"}}},
        {"s": "Ab-1"},
    ),
}


def test_every_independent_entry_has_a_liveness_check() -> None:
    assert sorted(LIVE) == sorted(entry.__name__ for entry in INDEPENDENT)


@pytest.mark.parametrize("entry", INDEPENDENT, ids=lambda e: e.__name__)
def test_independent_bug_is_live_without_the_kit(entry: Any) -> None:
    LIVE[entry.__name__](entry)
