"""`ActionOutcome`'s own checks, each with its exact message, on both of its paths.

`__post_init__` has a fast path for exact types and a full path for everything else (a `str`
subclass observation, a `bool` subclass is impossible, an `int` subclass count): the bound on
`observation_truncated_chars` must hold on both, at 0 and 1 as well as below 0 (a mutation run
found the full path's `count < 0` could become `count < 1` unnoticed: docs/detection.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyloop import ActionOutcome, ActionStatus


class Text(str):
    """A `str` subclass: valid, but it sends construction down the full path."""


class Count(int):
    """An `int` subclass: valid, but it sends construction down the full path."""


VALID: dict[str, Any] = {
    "status": ActionStatus.EXECUTED,
    "observation": "ok",
    "observation_is_synthetic": False,
    "env_reported_completion": False,
    "observation_truncated_chars": 0,
}


def build(**changes: Any) -> ActionOutcome:
    return ActionOutcome(**{**VALID, **changes})


def refusal(**changes: Any) -> tuple[type[BaseException], str]:
    with pytest.raises((TypeError, ValueError)) as caught:
        build(**changes)
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("observation", ["ok", Text("ok")])
@pytest.mark.parametrize("count", [0, 1, 7, Count(0), Count(3)])
def test_E7_truncated_chars_zero_and_positive_are_accepted_on_both_paths(
    observation: str, count: int
) -> None:
    outcome = build(observation=observation, observation_truncated_chars=count)
    assert outcome.observation_truncated_chars == count
    assert outcome.observation == "ok"


@given(st.integers(min_value=0, max_value=10**6), st.booleans())
def test_E7_any_non_negative_count_is_kept_on_either_path(count: int, subclass: bool) -> None:
    observation = Text("x") if subclass else "x"
    assert (
        build(
            observation=observation, observation_truncated_chars=count
        ).observation_truncated_chars
        == count
    )


@pytest.mark.parametrize("observation", ["ok", Text("ok")])
@pytest.mark.parametrize("count", [-1, Count(-1), -(10**20)])
def test_E7_a_negative_count_is_refused_with_its_value(observation: str, count: int) -> None:
    assert refusal(observation=observation, observation_truncated_chars=count) == (
        ValueError,
        f"ActionOutcome.observation_truncated_chars must be >= 0, got {int(count)}",
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"status": "executed"}, "ActionOutcome.status must be an ActionStatus, got str"),
        ({"status": None}, "ActionOutcome.status must be an ActionStatus, got NoneType"),
        ({"observation": b"ok"}, "ActionOutcome.observation must be a str, got bytes"),
        ({"observation": None}, "ActionOutcome.observation must be a str, got NoneType"),
        (
            {"observation_is_synthetic": 1},
            "ActionOutcome.observation_is_synthetic must be a bool, got int",
        ),
        (
            {"env_reported_completion": "no"},
            "ActionOutcome.env_reported_completion must be a bool, got str",
        ),
        (
            {"observation_truncated_chars": True},
            "ActionOutcome.observation_truncated_chars must be an int, got bool",
        ),
        (
            {"observation_truncated_chars": 1.0},
            "ActionOutcome.observation_truncated_chars must be an int, got float",
        ),
        (
            {"status": 1, "observation": 2},
            "ActionOutcome.status must be an ActionStatus, got int",
        ),
        (
            {"observation": 2, "observation_truncated_chars": -1},
            "ActionOutcome.observation must be a str, got int",
        ),
        (
            {"env_reported_completion": None, "observation_truncated_chars": "x"},
            "ActionOutcome.env_reported_completion must be a bool, got NoneType",
        ),
    ],
)
def test_E15_each_wrong_field_is_refused_with_its_exact_message(
    changes: dict[str, Any], message: str
) -> None:
    assert refusal(**changes) == (TypeError, message)


def test_E15_the_outcome_is_a_frozen_keyword_only_dataclass() -> None:
    outcome = build()
    assert dataclasses.is_dataclass(outcome)
    assert [f.name for f in dataclasses.fields(ActionOutcome)] == list(VALID)
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.observation = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ActionOutcome(*VALID.values())  # type: ignore[call-arg]
    assert outcome == build() and outcome != build(observation="other")
