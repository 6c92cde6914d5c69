"""The values an action executor hands back: status, replay policy and the outcome itself."""

from __future__ import annotations

import enum
from dataclasses import dataclass

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
        if not isinstance(self.status, ActionStatus):
            raise TypeError(
                f"ActionOutcome.status must be an ActionStatus, got {type(self.status).__name__}"
            )
        if not isinstance(self.observation, str):
            raise TypeError(
                f"ActionOutcome.observation must be a str, got {type(self.observation).__name__}"
            )
        for name in ("observation_is_synthetic", "env_reported_completion"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(
                    f"ActionOutcome.{name} must be a bool, got {type(getattr(self, name)).__name__}"
                )
        count = self.observation_truncated_chars
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(
                "ActionOutcome.observation_truncated_chars must be an int, "
                f"got {type(count).__name__}"
            )
        if count < 0:
            raise ValueError(f"ActionOutcome.observation_truncated_chars must be >= 0, got {count}")
