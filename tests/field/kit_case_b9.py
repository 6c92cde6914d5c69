"""A reproducer for the lead (kit judgement, not a field adapter): B9 charged for B6's cause.

`GatherAll` runs every call of a batch at once through polyloop's own `execute` and never asks
a classifier. By the contract it breaks B6 (an exclusive call overlaps its siblings) and B7,
but B9 holds: B9 says the classifier is called at most once per accepted call, before the call
is entered, never for a rejected call, and that its answer never changes an outcome — a
classifier that is never called keeps all of that. The kit of branch wp-batchkit (before its
merge) fails B9 too, with the B6 cause ("a classifier that does not answer an exact True ...
makes its call exclusive"; it was entered beside a running call):

    cd /tmp && PYTHONPATH=/work/wt-batchkit:/work/wt-fieldbatch/tests \\
        python -m conformance certify field.kit_case_b9:GatherAll --level strict \\
        --profile ci --seed 0 --only B6,B9

The same double charge is what openai-agents-batch and langgraph-batch get for B9 in
``expected.json`` (pinned as the kit's verdict, with B6's cause).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from polyloop import Action, ActionOutcome, ToolRegistry
from polyloop.ports import BatchJournal


class GatherAll:
    """Every call at once (`asyncio.gather` of `execute`), committed in model order."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        self._executor = registry.executor()
        self._names = ",".join(registry.names())
        self._cap = max_concurrency

    def parameters(self) -> dict[str, str]:
        return {"tools": self._names, "max_concurrency": str(self._cap)}

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes = await asyncio.gather(*(self._executor.execute(a) for a in actions))
        if journal is not None:
            for index, outcome in enumerate(outcomes):
                await journal.committed(index, outcome)
        return tuple(outcomes)
