"""Contract section 7: `polyloop.session` — SyntheticObservations, N1, N2 (RunRequest)."""

from __future__ import annotations

import dataclasses

import pytest
from _helpers import FixedExecutor, make_registry, make_spec, outcome, simple_keys
from hypothesis import given
from hypothesis import strategies as st

from polyloop import (
    ActionOutcome,
    ActionStatus,
    RunRequest,
    SyntheticObservations,
    ToolRegistry,
    observation_for_history,
)

outcomes = st.builds(
    ActionOutcome,
    status=st.sampled_from(ActionStatus),
    observation=st.text(max_size=20),
    observation_is_synthetic=st.booleans(),
    env_reported_completion=st.booleans(),
    observation_truncated_chars=st.integers(0, 100),
)
synthetic_texts = st.builds(
    SyntheticObservations,
    not_executed=st.text(max_size=20).map(lambda t: "NOT-EXECUTED " + t),
    env_error=st.text(max_size=20).map(lambda t: "ENV-ERROR " + t),
)


OWN = FixedExecutor(answer=outcome(observation="own"), params={"own": "yes"})
"""A project's own executor: structurally an ActionExecutor, not a RegistryExecutor."""


# ---- SyntheticObservations ---------------------------------------------------------------


def test_N_synthetic_observations_defaults_are_fixed_non_empty_texts() -> None:
    first, second = SyntheticObservations(), SyntheticObservations()
    assert first == second
    for text in (first.not_executed, first.env_error):
        assert isinstance(text, str)
        assert text.strip()
    assert first.not_executed != first.env_error


def test_N_synthetic_observations_is_frozen_keyword_only() -> None:
    texts = SyntheticObservations(not_executed="a", env_error="b")
    assert (texts.not_executed, texts.env_error) == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        texts.not_executed = "c"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SyntheticObservations("a", "b")  # type: ignore[misc]


# ---- N1 ----------------------------------------------------------------------------------


@given(outcomes, synthetic_texts)
def test_N1_history_shows_executed_observation_else_synthetic_text(
    outcome: ActionOutcome, synthetic: SyntheticObservations
) -> None:
    shown = observation_for_history(outcome, synthetic)
    expected = {
        ActionStatus.EXECUTED: outcome.observation,
        ActionStatus.NOT_EXECUTED: synthetic.not_executed,
        ActionStatus.ENV_ERROR: synthetic.env_error,
    }[outcome.status]
    assert shown == expected


@given(outcomes)
def test_N1_default_synthetic_texts_replace_not_executed_and_env_error(
    outcome: ActionOutcome,
) -> None:
    defaults = SyntheticObservations()
    shown = observation_for_history(outcome, defaults)
    if outcome.status is ActionStatus.EXECUTED:
        assert shown == outcome.observation
    elif outcome.status is ActionStatus.NOT_EXECUTED:
        assert shown == defaults.not_executed
    else:
        assert shown == defaults.env_error
    assert shown == observation_for_history(outcome, SyntheticObservations())


# ---- N2 ----------------------------------------------------------------------------------


@given(st.lists(simple_keys, min_size=1, max_size=5, unique=True))
def test_N2_registry_executor_with_equal_registry_accepted(names: list[str]) -> None:
    tools = ToolRegistry([make_spec(name) for name in names])
    same_content = ToolRegistry([make_spec(name) for name in names])
    request = RunRequest(tools=tools, action_executor=same_content.executor())
    assert request.tools == tools
    assert request.action_executor.registry == tools  # type: ignore[attr-defined]


@given(st.lists(simple_keys, min_size=2, max_size=5, unique=True), st.data())
def test_N2_registry_executor_with_other_registry_raises_value_error(
    names: list[str], data: st.DataObject
) -> None:
    tools = ToolRegistry([make_spec(name) for name in names])
    kind = data.draw(st.sampled_from(["subset", "reordered", "changed"]))
    if kind == "subset":
        other = tools.restrict_to(names[1:])
    elif kind == "reordered":
        other = ToolRegistry([make_spec(name) for name in reversed(names)])
    else:
        other = ToolRegistry(
            [make_spec(names[0], {"type": "object", "required": ["x"]})]
            + [make_spec(name) for name in names[1:]]
        )
    with pytest.raises(ValueError):
        RunRequest(tools=tools, action_executor=other.executor())


def test_N2_other_executor_accepted_with_any_registry() -> None:
    tools = make_registry("a", "b")
    request = RunRequest(tools=tools, action_executor=OWN)
    assert request.tools == tools
    request = RunRequest(tools=ToolRegistry([make_spec("c", handler=None)]), action_executor=OWN)
    assert tuple(request.tools.names()) == ("c",)


def test_N2_run_request_is_frozen_keyword_only() -> None:
    tools = make_registry("a")
    request = RunRequest(tools=tools, action_executor=tools.executor())
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.tools = ToolRegistry()  # type: ignore[misc]
    with pytest.raises(TypeError):
        RunRequest(tools, tools.executor())  # type: ignore[misc]
    assert request.synthetic_observations == SyntheticObservations()


@pytest.mark.parametrize(
    "tools, executor",
    [
        (5, OWN),
        ([make_spec("a")], OWN),
        (None, OWN),
        (ToolRegistry(), object()),
        (ToolRegistry(), None),
        (ToolRegistry(), "executor"),
    ],
    ids=[
        "tools-int",
        "tools-list",
        "tools-None",
        "executor-object",
        "executor-None",
        "executor-str",
    ],
)
def test_API_run_request_bad_input_raises_type_or_value_error(
    tools: object, executor: object
) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        RunRequest(tools=tools, action_executor=executor)  # type: ignore[arg-type]
    message = str(info.value)
    assert "tools" in message or "action_executor" in message or "executor" in message


def test_API_observation_for_history_bad_input_raises_type_or_value_error() -> None:
    with pytest.raises((TypeError, ValueError)):
        observation_for_history("not an outcome", SyntheticObservations())  # type: ignore[arg-type]
