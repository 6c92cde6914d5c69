"""H4 and a handler that raises on valid arguments (issue 37, item 2): an allowed observation by
default (E4, counted in the report), a failure of H4 under ``fail_on_raise=True``.

Every tool here is checked with a seed and a handful of examples, so each test runs in well
under a second and a verdict never depends on the clock.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.toolcheck import ToolContract
from conformance.tools import (
    ToolCheckFailed,
    ToolCheckReport,
    check_registry,
    check_tool,
    tool_property,
)
from polyloop import ToolRegistry, ToolSpec
from polyloop.tools import ToolEnvironmentError

ODD_N = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class OwnError(Exception):
    """An exception class of the tool's own."""


def raising_on_odd(exception: type[Exception]) -> Any:
    async def handler(arguments: dict[str, Any]) -> str:
        if arguments["n"] % 2:
            raise exception(f"odd {arguments['n']}")
        return "even"

    return handler


async def never_raises(arguments: dict[str, Any]) -> str:
    return str(arguments["n"])


def spec(handler: Any, name: str = "parity") -> ToolSpec:
    return ToolSpec(name=name, description="Check a number.", parameters=ODD_N, handler=handler)


@pytest.mark.parametrize("exception", [ValueError, OwnError, ToolEnvironmentError])
def test_H4_fail_on_raise_fails_a_handler_raising_on_valid_arguments(
    exception: type[Exception],
) -> None:
    report = check_tool(spec(raising_on_odd(exception)), seed=0, examples=25, fail_on_raise=True)
    assert report.statuses["H4"] == "fail"
    (finding,) = report.findings_for("H4")
    assert finding.code == "handler-raised"
    assert finding.path == "handler"
    # Shrunk like every H4 counterexample: the smallest odd integer.
    assert dict(finding.example or {}) in ({"n": 1}, {"n": -1})
    assert finding.message.startswith(f"the handler raised {exception.__name__}: odd ")
    assert "fail_on_raise" in finding.fix


@pytest.mark.parametrize("exception", [ValueError, ToolEnvironmentError])
def test_H4_without_fail_on_raise_a_raising_handler_still_passes_and_is_counted(
    exception: type[Exception],
) -> None:
    report = check_tool(spec(raising_on_odd(exception)), seed=0, examples=25)
    assert report.statuses["H4"] == "pass" and report.passed
    assert report.findings == ()
    stats = report.handler_stats
    assert stats is not None and 0 < stats.raised < stats.calls
    assert stats.exceptions == {exception.__name__: stats.raised}


def test_H4_fail_on_raise_passes_a_handler_that_never_raises() -> None:
    report = check_tool(spec(never_raises), seed=0, examples=25, fail_on_raise=True)
    assert report.statuses["H4"] == "pass"
    assert report.handler_stats is not None and report.handler_stats.raised == 0


def test_H4_check_registry_fail_on_raise_names_only_the_raising_tool() -> None:
    registry = ToolRegistry(
        [spec(raising_on_odd(ValueError), "parity"), spec(never_raises, "echo")]
    )
    check_registry(registry, seed=0, examples=25)  # default: raising is an observation
    with pytest.raises(ToolCheckFailed) as caught:
        check_registry(registry, seed=0, examples=25, fail_on_raise=True)
    report = caught.value.report
    assert isinstance(report, ToolCheckReport)
    assert [tool.tool for tool in report.tools if not tool.passed] == ["parity"]
    text = str(caught.value)
    assert "FAIL parity\n  H4 handler: the handler raised ValueError: odd " in text
    # The statistics' smallest raising call is the shrunk one the finding shows.
    assert 'smallest: {"n": 1} -> ValueError: odd 1' in text or 'smallest: {"n": -1}' in text


def test_H4_fail_on_raise_leaves_a_schema_only_tool_to_its_validator() -> None:
    """No handler: nothing is called, so the option changes nothing (V1 alone is judged)."""
    draft = {"name": "parity", "description": "d", "parameters": ODD_N}
    report = check_tool(draft, seed=0, examples=10, fail_on_raise=True)
    assert report.statuses["H4"] == "pass"
    assert report.handler_stats is None


def test_H4_tool_property_fail_on_raise_turns_a_raise_into_a_test_failure() -> None:
    """The standalone property (a HypoFuzz target) follows the same option."""
    tool = spec(raising_on_odd(ValueError))
    tool_property(tool)()  # default: raising is allowed
    with pytest.raises(AssertionError, match="the handler raised ValueError: odd"):
        tool_property(tool, fail_on_raise=True)()


class _StrictTools(ToolContract):
    tools = (spec(raising_on_odd(ValueError)),)
    fail_on_raise = True
    seed = 0
    examples = 25


class _LenientTools(_StrictTools):
    fail_on_raise = False


def test_H4_tool_contract_takes_fail_on_raise_as_check_tool_does(request: Any) -> None:
    """The pytest base class has the option too: its H4 test fails on the raising handler,
    and passes without the option (the raise is an observation, E4)."""
    with pytest.raises(pytest.fail.Exception, match="H4 fail for tool 'parity'"):
        _StrictTools()._check_clause("H4", "parity", request)
    _LenientTools()._check_clause("H4", "parity", request)
