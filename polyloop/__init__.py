"""polyloop: the tool layer of an agent loop.

Tool specs, an immutable registry, a deliberately partial argument validator, the
registry-derived executor that turns every tool call into an `ActionOutcome`, and the batch
executor that runs one model turn's calls concurrently where safe, in model order.
"""

from polyloop.batch import RegistryBatchExecutor
from polyloop.durable import (
    JournalDamagedError,
    JournalStoreError,
    SqliteJournalStore,
    run_durable,
)
from polyloop.policy import Decision, ToolPolicy, Verdict
from polyloop.ports import (
    Action,
    ActionExecutor,
    BatchExecutor,
    BatchJournal,
    ToolCall,
    plain_arguments,
)
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
    "BatchExecutor",
    "BatchJournal",
    "Decision",
    "JournalDamagedError",
    "JournalStoreError",
    "RegistryBatchExecutor",
    "RegistryExecutor",
    "ReplayPolicy",
    "RunRequest",
    "SqliteJournalStore",
    "SyntheticObservations",
    "ToolCall",
    "ToolEnvironmentError",
    "ToolHandler",
    "ToolPolicy",
    "ToolRegistry",
    "ToolSpec",
    "ToolValidationError",
    "Verdict",
    "__version__",
    "observation_for_history",
    "plain_arguments",
    "run_durable",
]
