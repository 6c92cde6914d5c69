"""A `BatchExecutor` over pydantic-ai: one model response's tool calls run by an agent run.

The adapter drives the agent graph itself (``Agent.iter``, node by node): an `Agent` on
pydantic-ai's `FunctionModel` whose first response is the batch (one ``ToolCallPart`` per call,
ids ``call_<i>``) and whose second ends the run with a text. Between the two the graph's
``CallToolsNode`` runs the response's calls through ``process_tool_calls`` →
``_ToolCallProcessor._call_tools`` (``pydantic_ai/_tool_execution.py``): the calls are split
into segments at ``sequential=True`` barriers (``_segment_by_barriers``), each segment runs as
one asyncio task per call, and the returns are put into the next ``ModelRequest`` sorted by call
index. The adapter reads that request. Tools are built as in `field.pydantic_ai_adapter`
(``Tool.from_schema``, which validates nothing), with ``takes_ctx=True`` so the tool function
sees its call id.

Mapping decisions:

- **Entered**: the tool function runs (``ToolManager`` → ``FunctionToolset.call_tool`` → the
  function); it awaits the journal's ``started(i)`` and then the handler. The position comes
  from ``RunContext.tool_call_id``.
- **Classification**: ``concurrency_safe=True`` maps to ``sequential=False``; anything else
  (False, a callable, ``completes_run=True``) maps to ``sequential=True``, pydantic-ai's
  barrier. The flag is per tool, fixed when the tool is built, so a callable classifier is
  never asked: the adapter keeps polyloop's fail-closed reading and makes that tool a barrier.
- **max_concurrency**: pydantic-ai has no tool-level cap; ``max_concurrency=1`` maps to the
  run-scoped ``ToolManager.parallel_execution_mode("sequential")``, any other value to the
  default ``"parallel"`` mode (every call of a segment at once).
- **Outcomes**: a ``ToolReturnPart`` is EXECUTED with ``model_response_str()`` (a str as-is,
  ``None`` as ``''``, anything else JSON text), as the model is shown it; a retry (an unknown
  tool, arguments that are not an object: a ``ToolReturnPart`` with ``outcome="retried"`` or a
  ``RetryPromptPart``) is NOT_EXECUTED with the text the model is shown. Tool retries are
  unlimited (``retries`` is set high), so a batch with several bad calls is answered per call
  instead of ending the run with ``UnexpectedModelBehavior``.
- **Journal**: a call's outcome is known when the run emits its ``FunctionToolResultEvent``
  (pydantic-ai's per-call signal, in completion order), read by driving the run node by node
  with ``Agent.iter`` and streaming the ``CallToolsNode`` (``node.stream(run.ctx)``), the
  documented way to see tool events without a streaming model (``Agent.run`` with an
  ``event_stream_handler`` needs one); the frame commits each prefix in model order
  (`field._batch_common`).
- **Recorded calls**: the ``ToolCallPart`` args of the run's first ``ModelResponse`` (the
  objects the run keeps in its history and sends back to the model), read after the turn.
- **Exceptions**: only ``ModelRetry``/``ToolFailed`` become per-call parts; any other exception
  cancels and drains the segment's siblings (``cancel_and_drain`` in ``_call_tools``) and ends
  the run, and the adapter lets it propagate. pydantic-ai keeps the returns of siblings that
  finished in the interrupted request (visible through ``capture_run_messages``), but the calls
  without one have no outcome from the runtime, so the adapter commits nothing for that turn.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterable, Iterator, Sequence
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.messages import (
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tool_manager import ToolManager

from field._batch_common import BatchFieldExecutor, Call, index_of
from field._common import executed, handler_of, not_executed
from field._pydantic_ai_common import schema_tool
from polyloop import ActionOutcome, ToolRegistry, ToolSpec

RETRIES = 1_000_000
"""Per-tool retry budget: large enough that no batch exhausts it."""

_CALLS: contextvars.ContextVar[Sequence[Call]] = contextvars.ContextVar("pydantic_ai_batch")


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model: the batch first, then a text that ends the run. A coroutine, so
    the run never waits on a worker thread (`FunctionModel` runs a plain function in one)."""
    if len(messages) == 1:
        return ModelResponse(
            parts=[
                ToolCallPart(tool_name=call.name, args=call.arguments, tool_call_id=call.id)
                for call in _CALLS.get()
            ]
        )
    return ModelResponse(parts=[TextPart("done")])


class PydanticAiBatchExecutor(BatchFieldExecutor):
    """The registry's tools as pydantic-ai ``Tool.from_schema`` tools, a turn run by an `Agent`."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._agent: Agent[None, str] = Agent(
            FunctionModel(_respond),
            tools=[self._tool(spec) for spec in registry.specs],
            retries=RETRIES,
        )

    def _tool(self, spec: ToolSpec) -> Tool[None]:
        handler = handler_of(spec)

        async def function(ctx: RunContext[None], **kwargs: Any) -> Any:
            return await self.enter(index_of(ctx.tool_call_id), handler, kwargs)

        return schema_tool(spec, function)

    @contextlib.contextmanager
    def _mode(self) -> Iterator[None]:
        if self.max_concurrency == 1:
            with ToolManager.parallel_execution_mode("sequential"):
                yield
        else:
            yield

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        token = _CALLS.set(calls)
        try:
            with self._mode():
                async with self._agent.iter("go") as run:
                    async for node in run:
                        if Agent.is_call_tools_node(node):
                            async with node.stream(run.ctx) as events:
                                await self._events(events)
                messages = run.all_messages()
        finally:
            _CALLS.reset(token)
        response = next(message for message in messages if isinstance(message, ModelResponse))
        self.recorded = {
            index_of(part.tool_call_id): part.args
            for part in response.parts
            if isinstance(part, ToolCallPart)
        }
        request = next(
            message
            for position, message in enumerate(messages)
            if position > 0 and isinstance(message, ModelRequest)
        )
        outcomes: dict[int, ActionOutcome] = {}
        for part in request.parts:
            if isinstance(part, (ToolReturnPart, RetryPromptPart)):
                outcomes[index_of(part.tool_call_id)] = _outcome(part)
        return outcomes

    async def _events(self, events: AsyncIterable[object]) -> None:
        """The run's per-call signal: a ``FunctionToolResultEvent`` as each call settles."""
        async for event in events:
            if isinstance(event, FunctionToolResultEvent):
                part = event.part
                if isinstance(part, (ToolReturnPart, RetryPromptPart)):
                    self.known(index_of(part.tool_call_id), _outcome(part))


def _outcome(part: ToolReturnPart | RetryPromptPart) -> ActionOutcome:
    if isinstance(part, RetryPromptPart):
        return not_executed(part.model_response())
    if part.outcome == "retried":
        return not_executed(part.model_response_str())
    return executed(part.model_response_str())
