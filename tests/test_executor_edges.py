"""Edges of `RegistryExecutor` that the E table implies but ordinary JSON calls never reach.

Each test here was written for a mutant of `polyloop/tools.py` that every other library test
let through (`tox -e mutants`): the executor's keyword-only `policy`, the validation fast
path's treatment of keys that are not exact `str`, and a handler's `str` subclass result.
"""

from __future__ import annotations

import pytest
from _helpers import RecordingHandler, call_action, returning, run, single_tool_executor

from polyloop import ActionStatus, RegistryExecutor, ToolPolicy, ToolRegistry

CLOSED = {
    "type": "object",
    "required": ["n"],
    "additionalProperties": False,
    "properties": {"n": {"type": "integer"}},
}


def test_executor_policy_is_keyword_only() -> None:
    """`policy` is passed by keyword (`registry.executor(policy=...)`), the registry either
    way: a policy given by position is refused rather than taken for something else."""
    registry = ToolRegistry([])
    with pytest.raises(TypeError):
        registry.executor(ToolPolicy())  # type: ignore[misc]
    with pytest.raises(TypeError):
        RegistryExecutor(registry, ToolPolicy())  # type: ignore[misc]
    assert RegistryExecutor(registry=registry).registry is registry
    assert registry.executor(policy=ToolPolicy()).registry is registry


def test_E2_a_key_that_is_not_a_str_is_undeclared_under_a_closed_schema() -> None:
    """A key of another type is no declared property: under `additionalProperties: false` the
    call is rejected, however valid its declared keys are, and the handler never runs."""
    handler = RecordingHandler(lambda arguments: "ran")
    executor = single_tool_executor(handler, CLOSED)
    outcome = run(call_action("tool", {1: "x", "n": 1}), executor)
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert outcome.observation_is_synthetic
    assert "unexpected argument(s) 1" in outcome.observation
    assert handler.received == []
    assert run(call_action("tool", {"n": 1}), executor).status is ActionStatus.EXECUTED


class _EqualsEverything:
    """A key that hashes as ``"n"`` and claims to equal any key (an object that lies)."""

    def __hash__(self) -> int:
        return hash("n")

    def __eq__(self, other: object) -> bool:
        return True


def test_E2_a_key_that_claims_to_be_a_declared_one_is_not() -> None:
    """Only an exact `str` names a property: a key that hashes as ``"n"`` and equals anything
    neither supplies the required ``n`` nor is a declared key."""
    handler = RecordingHandler(lambda arguments: "ran")
    executor = single_tool_executor(handler, CLOSED)
    outcome = run(call_action("tool", {_EqualsEverything(): 1}), executor)
    assert outcome.status is ActionStatus.NOT_EXECUTED
    assert "missing required argument(s) 'n'" in outcome.observation
    assert handler.received == []


class _Text(str):
    pass


@pytest.mark.parametrize("result", [_Text("from a str subclass"), "plain"])
def test_E5_a_str_subclass_result_is_the_handlers_own_text(result: str) -> None:
    """A `str` subclass is a `str` (E5, E9): the outcome is EXECUTED with its text as an
    exact `str`, and the text is the handler's own, not the executor's (not synthetic)."""
    executor = single_tool_executor(returning(result), {"type": "object"})
    outcome = run(call_action("tool", {}), executor)
    assert outcome.status is ActionStatus.EXECUTED
    assert type(outcome.observation) is str
    assert outcome.observation == str.__str__(result)
    assert outcome.observation_is_synthetic is False
