"""Known gaps of the batch half of the kit, each a strict xfail that certification catches the bug
(it does not yet: the test fails the day it does, and the xfail goes), beside the bug shown live
without the kit."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from zoo.batch_base import ZooBatch

from conformance import certify
from polyloop import Action, ActionOutcome, ToolCall, ToolRegistry, ToolSpec


class NeverEndsABatch(ZooBatch):
    """Runs every handler of a batch of two or more calls, then keeps its event loop busy and
    never returns, as `polyloop/batch.py` does with `_commit_ready`'s `index + 1` turned into
    `index + 0` (B1: one outcome per call)."""

    VIOLATES = ("B1",)
    KNOWN_MISS = (
        "a livelock is not told from an executor that busy-polls while a handler waits at the "
        "kit's gate: the loop never goes quiet (harness.settle's Unsettled), so every example "
        "is inconclusive and B1 is skipped, not failed"
    )

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes = await super().execute_batch(actions, journal)
        if len(outcomes) < 2:
            return outcomes
        while True:
            await asyncio.sleep(0)


async def _echo(arguments: dict[str, Any]) -> str:
    return "ok"


def test_a_batch_that_never_ends_is_live_without_the_kit() -> None:
    registry = ToolRegistry(
        [ToolSpec(name="t", description="d", parameters={"type": "object"}, handler=_echo)]
    )
    call = Action(tool_call=ToolCall(name="t", arguments={}))

    async def run() -> None:
        executor = NeverEndsABatch(registry, max_concurrency=2)
        assert len(await executor.execute_batch([call])) == 1
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(executor.execute_batch([call, call]), 0.5)

    asyncio.run(run())


@pytest.mark.xfail(
    strict=True, raises=AssertionError, reason=f"kit gap: {NeverEndsABatch.KNOWN_MISS}"
)
def test_B1_kit_fails_a_batch_that_never_ends() -> None:
    report = certify(NeverEndsABatch, only=["B1"], level="strict", profile="ci", seed=0)
    assert not report.passed, report.to_text()
