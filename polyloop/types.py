"""The values an action executor hands back: status, replay policy and the outcome itself."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from polyloop._json import type_label

__all__ = ["ActionOutcome", "ActionStatus", "ReplayPolicy"]


class ActionStatus(enum.Enum):
    """What happened to an action."""

    EXECUTED = "executed"
    """The tool ran; its observation (text or error) goes back to the model."""
    NOT_EXECUTED = "not_executed"
    """The library refused the action before any tool ran (no tool call, invalid call)."""
    ENV_ERROR = "env_error"
    """The environment itself is broken; retrying this call would not help."""


class ReplayPolicy(enum.Enum):
    """May an action whose fate a crash left unknown be run again at recovery?"""

    SAFE = "safe"
    """Repeating is harmless (reads, searches)."""
    NEVER = "never"
    """Side effects that must not repeat; recovery stops instead."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionOutcome:
    """The result of executing one action.

    `env_reported_completion` is the environment's own word that the goal is reached; it is
    kept apart from a tool's `completes_run` flag because one has evidence behind it and the
    other is the agent's claim. `observation_truncated_chars` is how much the producer of the
    observation cut, so a reader knows the text is partial.
    """

    status: ActionStatus
    observation: str
    observation_is_synthetic: bool
    env_reported_completion: bool
    observation_truncated_chars: int

    def __post_init__(self) -> None:
        if (
            type(self.status) is ActionStatus
            and type(self.observation) is str
            and type(self.observation_is_synthetic) is bool
            and type(self.env_reported_completion) is bool
            and type(self.observation_truncated_chars) is int
            and self.observation_truncated_chars >= 0
        ):
            return  # every executor builds one per action: keep the valid case cheap
        if not isinstance(self.status, ActionStatus):
            raise TypeError(
                f"ActionOutcome.status must be an ActionStatus, got {type_label(self.status)}"
            )
        if not isinstance(self.observation, str):
            raise TypeError(
                f"ActionOutcome.observation must be a str, got {type_label(self.observation)}"
            )
        for name in ("observation_is_synthetic", "env_reported_completion"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"ActionOutcome.{name} must be a bool, got {type_label(getattr(self, name))}"
                )
        count = self.observation_truncated_chars
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(
                f"ActionOutcome.observation_truncated_chars must be an int, got {type_label(count)}"
            )
        if count < 0:
            raise ValueError(f"ActionOutcome.observation_truncated_chars must be >= 0, got {count}")


_new = object.__new__
_set_status = vars(ActionOutcome)["status"].__set__
_set_observation = vars(ActionOutcome)["observation"].__set__
_set_synthetic = vars(ActionOutcome)["observation_is_synthetic"].__set__
_set_completion = vars(ActionOutcome)["env_reported_completion"].__set__
_set_truncated = vars(ActionOutcome)["observation_truncated_chars"].__set__


def _trusted_outcome(status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
    """Build an outcome whose field types the caller guarantees (the executor's hot path).

    Going through the slot descriptors skips the frozen-dataclass `__init__` and its checks,
    which would otherwise cost more than validating the call itself. Never reached with
    outside data: `RegistryExecutor` passes its own status, a `str` and a literal bool.
    """
    outcome: ActionOutcome = _new(ActionOutcome)
    _set_status(outcome, status)
    _set_observation(outcome, observation)
    _set_synthetic(outcome, synthetic)
    _set_completion(outcome, False)
    _set_truncated(outcome, 0)
    return outcome
