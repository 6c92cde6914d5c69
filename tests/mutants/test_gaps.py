"""Each kit gap of `gaps.py`: a witness call proving the executor breaks its clause, and a strict
xfail that `certify` catches it (it does not yet: see each class's KNOWN_MISS)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gaps import (
    GAPS,
    ClaimedStrAccepted,
    ExceptionNameCrashes,
    FalseTypeComplaint,
    HostileKeyCrashesValidation,
    NonJsonLeavesShared,
    StrSystemExitEscapes,
)

from polyloop import (
    Action,
    ActionStatus,
    RegistryExecutor,
    ToolCall,
    ToolRegistry,
    ToolSpec,
)

SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "n": {"type": ["integer", "null"]}},
    "required": ["q"],
}


def registry(handler: Any) -> ToolRegistry:
    return ToolRegistry([ToolSpec(name="tool", description="", parameters=SCHEMA, handler=handler)])


def execute(kind: type, handler: Any, arguments: object) -> Any:
    executor = kind(registry(handler))
    return asyncio.run(
        executor.execute(Action(tool_call=ToolCall(name="tool", arguments=arguments)))
    )


async def ok(arguments: dict[str, Any]) -> str:
    return "ok"


def raising(exc: BaseException) -> Any:
    async def handler(arguments: dict[str, Any]) -> str:
        raise exc

    return handler


class StrSystemExit(Exception):
    def __str__(self) -> str:
        raise SystemExit(3)


class NameRaises(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise RuntimeError("no name")


class Nameless(Exception, metaclass=NameRaises):
    pass


class ClaimsStr:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


class Box:
    def __init__(self) -> None:
        self.items: list[int] = []

    __hash__ = object.__hash__


class RaisingEqKey:
    def __hash__(self) -> int:
        return hash("q")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ exploded")

    def __deepcopy__(self, memo: dict[int, object]) -> RaisingEqKey:
        return RaisingEqKey()


# ---- witnesses: the bug is real, and RegistryExecutor does not have it -------------------------


def test_E12_witness_str_system_exit_escapes() -> None:
    with pytest.raises(SystemExit):
        execute(StrSystemExitEscapes, raising(StrSystemExit()), {"q": "x"})
    outcome = execute(RegistryExecutor, raising(StrSystemExit()), {"q": "x"})
    assert outcome.observation == "StrSystemExit: <exception str() failed>"


def test_E4_witness_exception_name_crashes() -> None:
    with pytest.raises(RuntimeError, match="no name"):
        execute(ExceptionNameCrashes, raising(Nameless("boom")), {"q": "x"})
    outcome = execute(RegistryExecutor, raising(Nameless("boom")), {"q": "x"})
    assert outcome.status is ActionStatus.EXECUTED and outcome.observation == "Nameless: boom"


def test_E9_witness_claimed_str_gives_a_type_error_not_naming_the_tool() -> None:
    async def liar(arguments: dict[str, Any]) -> Any:
        return ClaimsStr()

    with pytest.raises(TypeError) as caught:
        execute(ClaimedStrAccepted, liar, {"q": "x"})
    assert "'tool'" not in str(caught.value)
    with pytest.raises(TypeError, match="tool 'tool'"):
        execute(RegistryExecutor, liar, {"q": "x"})


def test_E13_witness_non_json_leaf_mutation_reaches_the_record() -> None:
    async def vandal(arguments: dict[str, Any]) -> str:
        for box in arguments["tags"]:
            box.items.append(1)
        return "done"

    for kind, leaks in ((NonJsonLeavesShared, True), (RegistryExecutor, False)):
        call = ToolCall(name="tool", arguments={"q": "x", "tags": {Box()}})
        executor = kind(registry(vandal))
        asyncio.run(executor.execute(Action(tool_call=call)))
        (recorded,) = call.arguments["tags"]
        assert (recorded.items == [1]) is leaks


def test_E2_witness_hostile_key_crashes_execute() -> None:
    with pytest.raises(RuntimeError, match="exploded"):
        execute(HostileKeyCrashesValidation, ok, {RaisingEqKey(): "x"})
    outcome = execute(RegistryExecutor, ok, {RaisingEqKey(): "x"})
    assert outcome.status is ActionStatus.NOT_EXECUTED


def test_V6_witness_valid_later_listed_type_is_accused() -> None:
    outcome = execute(FalseTypeComplaint, ok, {"n": None})
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert "'n' must be" in outcome.observation, "the message names a valid value as wrong"
    honest = execute(RegistryExecutor, ok, {"n": None})
    assert "'n'" not in honest.observation


# ---- the kit: strict xfail until it catches each gap ---------------------------------------


@pytest.mark.parametrize("gap", GAPS, ids=[gap.__name__ for gap in GAPS])
def test_kit_catches_gap(gap: type, request: pytest.FixtureRequest) -> None:
    request.applymarker(pytest.mark.xfail(strict=True, reason=f"kit gap: {gap.KNOWN_MISS}"))
    from conformance import certify

    report = certify(gap, only=list(gap.VIOLATES), level="strict", profile="ci", seed=0)
    assert not report.passed, f"certify passes {gap.__name__}: {gap.KNOWN_MISS}"
