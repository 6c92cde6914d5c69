"""polyloop's own recovery target: `run_durable` over `SqliteJournalStore` and the registry's
`RegistryBatchExecutor` (contract section 12). Certify it with
``polyloop-conformance certify conformance.recovery.reference:factory``.

A third-party journal store is certified the same way: write a factory like this one that puts
the store behind `run_durable` (`store_factory` shows the shape).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from polyloop import Action, ActionOutcome, SqliteJournalStore, ToolRegistry, run_durable

__all__ = ["DurableRuntime", "factory", "store_factory"]


class DurableRuntime:
    """`run_durable` over one journal store in the target's directory."""

    def __init__(self, registry: ToolRegistry, store: Any, *, max_attempts: int = 3) -> None:
        self.registry = registry
        self.store = store
        self.max_attempts = max_attempts

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        return await run_durable(
            self.registry.batch_executor(),
            actions,
            store=self.store,
            batch_id=batch_id,
            max_attempts=self.max_attempts,
        )


def store_factory(
    make_store: Callable[[str], Any], *, max_attempts: int = 3
) -> Callable[[ToolRegistry, str], DurableRuntime]:
    """A recovery target for `make_store(directory)`, a journal store with ``append`` and
    ``records`` as `polyloop.durable.JournalStore` says, behind `run_durable`."""

    def make(registry: ToolRegistry, directory: str) -> DurableRuntime:
        return DurableRuntime(registry, make_store(directory), max_attempts=max_attempts)

    return make


def factory(registry: ToolRegistry, directory: str) -> DurableRuntime:
    """polyloop's reference: `run_durable` over ``SqliteJournalStore(directory/journal.db)``."""
    return DurableRuntime(registry, SqliteJournalStore(os.path.join(directory, "journal.db")))
