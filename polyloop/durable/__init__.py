"""Crash recovery: a durable batch journal and resume by replay policy (contract section 12).

`run_durable` runs a batch once and resumes it after a crash, in any process, over any
`BatchExecutor`; `SqliteJournalStore` is the store it writes to. Standard library only.
"""

from polyloop.durable._run import BatchState, JournalStore, read_batch, run_durable
from polyloop.durable._store import (
    SCHEMA_VERSION,
    JournalDamagedError,
    JournalStoreError,
    SqliteJournalStore,
    StoredRecord,
)

__all__ = [
    "SCHEMA_VERSION",
    "BatchState",
    "JournalDamagedError",
    "JournalStore",
    "JournalStoreError",
    "SqliteJournalStore",
    "StoredRecord",
    "read_batch",
    "run_durable",
]
