"""polyloop: the tool layer of an agent loop.

Tool specs, an immutable registry, a deliberately partial argument validator and the
registry-derived executor that turns every tool call into an `ActionOutcome`.
"""

from polyloop.ports import Action, ActionExecutor, ToolCall, plain_arguments
from polyloop.session import RunRequest, SyntheticObservations, observation_for_history
from polyloop.tools import (
    RegistryExecutor,
    ToolEnvironmentError,
    ToolHandler,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)
from polyloop.types import ActionOutcome, ActionStatus, ReplayPolicy

__version__ = "0.1.0"

__all__ = [
    "Action",
    "ActionExecutor",
    "ActionOutcome",
    "ActionStatus",
    "RegistryExecutor",
    "ReplayPolicy",
    "RunRequest",
    "SyntheticObservations",
    "ToolCall",
    "ToolEnvironmentError",
    "ToolHandler",
    "ToolRegistry",
    "ToolSpec",
    "ToolValidationError",
    "__version__",
    "observation_for_history",
    "plain_arguments",
]
