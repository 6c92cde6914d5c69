"""The batch subject of the kit: certify a `BatchExecutor` against B1-B18.

The same inner shape as the executor half: the catalog rows (`conformance.catalog`, section
``batch``) -> one property per clause (`properties`) -> its check (`checks`, `checks_stop`)
and its traps -> the schedule harness (`harness`, `drive`, `together`, `oracle`,
`strategies`), run on the kit's deadline runner (`trial`) and searched by Hypothesis
(`search`).

The factory contract: a batch factory is called ``factory(registry, max_concurrency=N)`` and
returns an object with ``async execute_batch(actions, journal=None)``; every schedule gets a
fresh executor with the cap the schedule drew (1-4). A factory that cannot take the keyword is
a set-up error naming it.
"""

from __future__ import annotations

BATCH_CLAUSES: tuple[str, ...] = tuple(f"B{n}" for n in range(1, 19))
"""The clauses a batch certification checks, in contract order."""

__all__ = ["BATCH_CLAUSES"]
