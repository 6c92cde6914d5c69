"""The recovery subject of the kit: certify a durable runtime against J1-J13 (section 12).

The target is a factory ``factory(registry, directory)`` whose object has ``async
run(batch_id, actions)``. The inner shape: the catalog rows (`rows`) -> the schedules
(`schedules`) -> lifetimes in contained child processes (`lifetimes`, `_lifetime`) -> the
verdicts from the ledger (`clauses`) -> the Hypothesis search that shares lifetimes between
clauses (`search`). polyloop's own target is `conformance.recovery.reference:factory`.
"""

from __future__ import annotations

RECOVERY_CLAUSES: tuple[str, ...] = tuple(f"J{n}" for n in range(1, 14))
"""The clauses a recovery certification checks, in contract order."""

__all__ = ["RECOVERY_CLAUSES"]
