"""Each batch adapter as an `ActionExecutor` whose ``execute`` is a one-call batch (no journal).

A preview of the V/E half of a batch certification with a kit that certifies only
`ActionExecutor`s: ``PYTHONPATH=tests polyloop-conformance certify
field.one_call_preview:LangGraph --level strict --profile ci --seed 0``. Once the kit
certifies batch factories (V/E through one-call batches, then B1-B18) this module is no longer
needed.
"""

from __future__ import annotations

from typing import Any

from field._batch_common import BatchFieldExecutor
from field.agents_batch_adapter import AgentsBatchExecutor
from field.langgraph_batch_adapter import LangGraphBatchExecutor
from field.pydantic_ai_batch_adapter import PydanticAiBatchExecutor
from polyloop import Action, ActionOutcome, ToolRegistry


def _wrap(cls: type[BatchFieldExecutor]) -> type[Any]:
    class OneCall:
        def __init__(self, registry: ToolRegistry) -> None:
            self._batch = cls(registry, max_concurrency=10)

        async def execute(self, action: Action) -> ActionOutcome:
            (outcome,) = await self._batch.execute_batch([action])
            return outcome

        def parameters(self) -> dict[str, str]:
            return {"tools": self._batch.parameters()["tools"]}

    OneCall.__name__ = OneCall.__qualname__ = f"OneCall{cls.__name__}"
    return OneCall


Agents = _wrap(AgentsBatchExecutor)
Pydantic = _wrap(PydanticAiBatchExecutor)
LangGraph = _wrap(LangGraphBatchExecutor)
