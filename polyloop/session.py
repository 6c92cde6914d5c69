"""What a run needs to know about its tools and executor, and what the model's history shows."""

from __future__ import annotations

from dataclasses import dataclass, field

from polyloop.ports import ActionExecutor
from polyloop.tools import RegistryExecutor, ToolRegistry
from polyloop.types import ActionOutcome, ActionStatus

__all__ = ["RunRequest", "SyntheticObservations", "observation_for_history"]


@dataclass(frozen=True, kw_only=True)
class SyntheticObservations:
    """The fixed texts the model sees in place of NOT_EXECUTED and ENV_ERROR observations.

    Fixed, configured texts rather than the executor's own words make a run reproducible: the
    same configuration shows the model the same sentence every time, whatever the executor
    wrote for the audit log.
    """

    not_executed: str = (
        "The action was not executed: it was not a valid call to one of the available tools."
    )
    env_error: str = "The environment failed while running the action; it was not completed."

    def __post_init__(self) -> None:
        for name in ("not_executed", "env_error"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(
                    f"SyntheticObservations.{name} must be a str, got {type(value).__name__}"
                )


def observation_for_history(outcome: ActionOutcome, synthetic: SyntheticObservations) -> str:
    """The text that enters the model's history for `outcome` (N1)."""
    if not isinstance(outcome, ActionOutcome):
        raise TypeError(
            f"observation_for_history takes an ActionOutcome, got {type(outcome).__name__}"
        )
    if not isinstance(synthetic, SyntheticObservations):
        raise TypeError(
            "observation_for_history takes SyntheticObservations as its second argument, "
            f"got {type(synthetic).__name__}"
        )
    if outcome.status is ActionStatus.EXECUTED:
        return outcome.observation
    if outcome.status is ActionStatus.NOT_EXECUTED:
        return synthetic.not_executed
    return synthetic.env_error


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """The tools and the executor of one run.

    When the executor is the registry-derived one, its registry must be the run's registry:
    otherwise the model would be shown one tool set while another one runs (N2). A project's
    own executor is accepted with any registry, which then serves schemas and validation only.
    """

    tools: ToolRegistry
    action_executor: ActionExecutor
    synthetic_observations: SyntheticObservations = field(default_factory=SyntheticObservations)

    def __post_init__(self) -> None:
        if not isinstance(self.tools, ToolRegistry):
            raise TypeError(
                f"RunRequest.tools must be a ToolRegistry, got {type(self.tools).__name__}"
            )
        if not isinstance(self.action_executor, ActionExecutor):
            raise TypeError(
                "RunRequest.action_executor must provide async execute(action) and "
                f"parameters(), got {type(self.action_executor).__name__}"
            )
        if not isinstance(self.synthetic_observations, SyntheticObservations):
            raise TypeError(
                "RunRequest.synthetic_observations must be SyntheticObservations, "
                f"got {type(self.synthetic_observations).__name__}"
            )
        executor = self.action_executor
        if isinstance(executor, RegistryExecutor) and executor.registry != self.tools:
            raise ValueError(
                "RunRequest: the RegistryExecutor's registry differs from tools "
                f"(executor serves {list(executor.registry.names())!r}, tools has "
                f"{list(self.tools.names())!r}); build the executor with tools.executor()"
            )
