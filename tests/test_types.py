"""Contract section 1: `polyloop.types` — ActionStatus, ReplayPolicy, ActionOutcome."""

from __future__ import annotations

import dataclasses
import enum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyloop.types import ActionOutcome, ActionStatus, ReplayPolicy

FIELDS = (
    "status",
    "observation",
    "observation_is_synthetic",
    "env_reported_completion",
    "observation_truncated_chars",
)


def outcome_kwargs(**overrides: object) -> dict[str, object]:
    kwargs: dict[str, object] = {
        "status": ActionStatus.EXECUTED,
        "observation": "done",
        "observation_is_synthetic": False,
        "env_reported_completion": False,
        "observation_truncated_chars": 0,
    }
    kwargs.update(overrides)
    return kwargs


def test_types_action_status_has_exactly_three_members() -> None:
    assert issubclass(ActionStatus, enum.Enum)
    assert {member.name for member in ActionStatus} == {"EXECUTED", "NOT_EXECUTED", "ENV_ERROR"}
    assert len(list(ActionStatus)) == 3


def test_types_replay_policy_has_exactly_safe_and_never() -> None:
    assert issubclass(ReplayPolicy, enum.Enum)
    assert {member.name for member in ReplayPolicy} == {"SAFE", "NEVER"}
    assert len(list(ReplayPolicy)) == 2


def test_types_action_outcome_fields_in_contract_order() -> None:
    assert dataclasses.is_dataclass(ActionOutcome)
    assert tuple(field.name for field in dataclasses.fields(ActionOutcome)) == FIELDS


def test_types_action_outcome_is_frozen_slotted_keyword_only() -> None:
    outcome = ActionOutcome(**outcome_kwargs())  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.observation = "changed"  # type: ignore[misc]
    assert "__slots__" in vars(ActionOutcome)
    assert not hasattr(outcome, "__dict__")
    with pytest.raises(TypeError):
        ActionOutcome(ActionStatus.EXECUTED, "done", False, False, 0)  # type: ignore[misc]


@given(
    status=st.sampled_from(ActionStatus),
    observation=st.text(),
    synthetic=st.booleans(),
    completion=st.booleans(),
    truncated=st.integers(min_value=0),
)
def test_types_action_outcome_keeps_valid_values(
    status: ActionStatus, observation: str, synthetic: bool, completion: bool, truncated: int
) -> None:
    outcome = ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=completion,
        observation_truncated_chars=truncated,
    )
    assert (
        outcome.status,
        outcome.observation,
        outcome.observation_is_synthetic,
        outcome.env_reported_completion,
        outcome.observation_truncated_chars,
    ) == (status, observation, synthetic, completion, truncated)
    assert outcome == ActionOutcome(
        **outcome_kwargs(
            status=status,
            observation=observation,
            observation_is_synthetic=synthetic,
            env_reported_completion=completion,
            observation_truncated_chars=truncated,
        )
    )  # type: ignore[arg-type]


_not_bool = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.floats(allow_nan=False))
WRONG_VALUES = {
    "status": st.one_of(
        st.sampled_from([s.value for s in ActionStatus] + [s.name for s in ActionStatus]),
        st.sampled_from(ReplayPolicy),
        st.integers(),
        st.none(),
    ),
    "observation": st.one_of(
        st.none(), st.integers(), st.binary(max_size=5), st.lists(st.text(), max_size=2)
    ),
    "observation_is_synthetic": _not_bool,
    "env_reported_completion": _not_bool,
    "observation_truncated_chars": st.one_of(
        st.booleans(), st.floats(allow_nan=False), st.text(max_size=3), st.none()
    ),
}


@given(data=st.data(), field=st.sampled_from(sorted(WRONG_VALUES)))
def test_types_action_outcome_rejects_wrong_types(data: st.DataObject, field: str) -> None:
    wrong = data.draw(WRONG_VALUES[field], label=field)
    with pytest.raises((TypeError, ValueError)) as info:
        ActionOutcome(**outcome_kwargs(**{field: wrong}))  # type: ignore[arg-type]
    assert field in str(info.value), f"the message should name the field {field!r}"


@given(st.integers(max_value=-1))
def test_types_action_outcome_rejects_negative_truncation(count: int) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        ActionOutcome(**outcome_kwargs(observation_truncated_chars=count))  # type: ignore[arg-type]
    assert "observation_truncated_chars" in str(info.value)
