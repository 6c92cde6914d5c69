"""polyloop's own recovery target: `run_durable` over `SqliteJournalStore` and the registry's
`RegistryBatchExecutor` (contract section 12). Certify it with
``polyloop-conformance certify conformance.recovery.reference:factory``.

A third-party journal store is certified the same way: write a factory like this one that puts
the store behind `run_durable` (`store_factory` shows the shape).

The runtime lets the kit observe its journal (``observe_journal``): the kit then also kills a
lifetime just after a `started` or `committed` record is durable, and judges by what the
runtime reported durable. Any runtime may offer it the same way (`ObservedStore`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from polyloop import Action, ActionOutcome, SqliteJournalStore, ToolRegistry, run_durable

__all__ = ["DurableRuntime", "ObservedStore", "factory", "store_factory"]


Report = Callable[[str, int], None]
"""What ``observe_journal`` is given: called with ``("started" | "committed", index)`` once the
record is durable (its ``append`` returned)."""


class ObservedStore:
    """A journal store that reports each durable `started` and `committed` record to the kit,
    and is otherwise `store` (its other attributes are the store's)."""

    def __init__(self, store: Any, report: Report) -> None:
        self.store = store
        self.report = report

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        self.store.append(batch_id, kind, index, body)
        if kind in ("started", "committed"):
            self.report(kind, index)

    def records(self, batch_id: str) -> Any:
        return self.store.records(batch_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def __repr__(self) -> str:
        return repr(self.store)


class DurableRuntime:
    """`run_durable` over one journal store in the target's directory."""

    def __init__(self, registry: ToolRegistry, store: Any, *, max_attempts: int = 3) -> None:
        self.registry = registry
        self.store = store
        self.max_attempts = max_attempts

    def observe_journal(self, report: Report) -> None:
        """Let the kit observe the journal: `report` hears of every durable record."""
        self.store = ObservedStore(self.store, report)

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
