"""A `BatchExecutor` over LangGraph's prebuilt ``ToolNode``: one ``AIMessage``'s tool calls.

Each spec becomes a langchain-core ``StructuredTool`` as in `field.langchain_adapter`
(``args_schema=<the spec's JSON Schema dict>``, a coroutine awaiting the handler with the
keyword arguments as one dict), and the registry's tools one ``ToolNode``. A batch is the
node's input as an agent graph produces it, ``{"messages": [AIMessage(tool_calls=[...])]}``
(ids ``call_<i>``), run by the smallest graph that holds the node (``StateGraph(MessagesState)``,
``START → tools → END``, compiled; ``ToolNode`` needs the runtime a graph gives its nodes) with
``await graph.ainvoke(input, config)``. ``ToolNode._afunc``
(``langgraph/prebuilt/tool_node.py``) builds one ``_arun_one`` coroutine per call and awaits
``asyncio.gather`` over all of them; the output is ``{"messages": [ToolMessage, ...]}`` in
call order, after the input message.

Mapping decisions:

- **Entered**: the tool's coroutine runs (``ToolNode._execute_tool_async`` →
  ``tool.ainvoke`` → ``StructuredTool._arun`` → the coroutine); it awaits the journal's
  ``started(i)`` and then the handler. The coroutine does not see its call id, so an
  ``awrap_tool_call`` wrapper (``ToolNode``'s documented interception hook, which here only
  calls ``execute(request)``) puts the position of ``request.tool_call["id"]`` into a context
  variable of that call's task.
- **Classification**: ``ToolNode`` has none; every call of the message runs at once, so the
  classifier is never asked.
- **max_concurrency** goes into the ``RunnableConfig`` (``{"max_concurrency": N}``), the knob
  LangChain documents for parallel work; ``ToolNode`` honours it only on its sync path
  (``_func``: ``get_executor_for_config(config)`` → ``executor.map``), not on ``_afunc``.
- **Errors**: ``handle_tool_errors`` is left at its default (``_default_handle_tool_errors``):
  only argument-validation errors (``ToolInvocationError``) become a ``ToolMessage``; every
  other exception of a tool is re-raised, ``gather`` propagates the first one, and the adapter
  lets it propagate (the graph step fails). ``gather`` does not cancel the other calls.
- **Journal**: a call's outcome is known when LangChain's ``on_tool_end`` callback reports
  its ``ToolMessage`` (a handler passed in the config's ``callbacks``); an unknown name is
  known when the node returns. The frame commits each prefix in model order
  (`field._batch_common`).
- **Recorded calls**: the ``tool_calls`` args of the ``AIMessage`` in the graph's final
  messages state (the history a model call is sent), read after the turn.
- **Outcomes**: a ``ToolMessage`` is EXECUTED with its ``.text`` (non-str results have been
  stringified by ``_format_output``); an unknown name is NOT_EXECUTED with the error
  ``ToolMessage`` that ``ToolNode._validate_tool_call`` answers it with (naming the available
  tools). Arguments that are not a JSON object are NOT_EXECUTED by the glue: ``AIMessage``
  only holds ``dict`` arguments (a chat model's parser puts such a call into
  ``invalid_tool_calls``, which ``ToolNode`` never runs).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from field._batch_common import BatchFieldExecutor, Call, index_of
from field._common import executed, handler_of, not_executed, thaw
from polyloop import ActionOutcome, ToolRegistry, ToolSpec

_INDEX: contextvars.ContextVar[int] = contextvars.ContextVar("langgraph_batch_index")


async def _position(
    request: ToolCallRequest,
    execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
) -> ToolMessage | Command[Any]:
    """``awrap_tool_call``: run the call unchanged, its position visible to its tool."""
    _INDEX.set(index_of(request.tool_call["id"]))
    return await execute(request)


class _ToolEnd(AsyncCallbackHandler):
    """LangChain's per-call signal: ``on_tool_end`` with the call's ``ToolMessage``."""

    run_inline = True

    def __init__(self, executor: BatchFieldExecutor) -> None:
        self._executor = executor

    async def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        if isinstance(output, ToolMessage):
            self._executor.known(index_of(output.tool_call_id), executed(str(output.text)))


class LangGraphBatchExecutor(BatchFieldExecutor):
    """The registry's tools in one LangGraph ``ToolNode``, a turn as one ``AIMessage``."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._node = ToolNode(
            [self._structured_tool(spec) for spec in registry.specs], awrap_tool_call=_position
        )
        self._graph = self._compile(self._node)

    def _compile(self, node: ToolNode) -> Any:
        """The smallest graph that holds the node: ``START -> tools -> END``."""
        graph = StateGraph(MessagesState)
        graph.add_node("tools", node)
        graph.add_edge(START, "tools")
        graph.add_edge("tools", END)
        return graph.compile()

    def _config(self) -> RunnableConfig:
        return {"max_concurrency": self.max_concurrency, "callbacks": [_ToolEnd(self)]}

    async def _run(self, calls: Sequence[Call]) -> list[Any]:
        """Run the graph on the turn; the messages of its final state."""
        message = AIMessage(
            content="",
            tool_calls=[
                {"type": "tool_call", "name": call.name, "args": call.arguments, "id": call.id}
                for call in calls
            ],
        )
        output = await self._graph.ainvoke({"messages": [message]}, self._config())
        return list(output["messages"])

    def _structured_tool(self, spec: ToolSpec) -> StructuredTool:
        handler = handler_of(spec)

        async def coroutine(**kwargs: Any) -> Any:
            return await self.enter(_INDEX.get(), handler, kwargs)

        return StructuredTool(
            name=spec.name,
            description=spec.description,
            args_schema=thaw(spec.parameters),
            coroutine=coroutine,
        )

    def pre_resolve(self, call: Call) -> ActionOutcome | None:
        if type(call.arguments) is not dict:
            return not_executed(f"the arguments of {call.name} are not a JSON object")
        return None

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        messages = await self._run(calls)
        # The runtime's record of the turn: the AIMessage holding the calls, in the final state.
        request = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        self.recorded = {index_of(call["id"]): call["args"] for call in request.tool_calls}
        names = {call.index: call.name for call in calls}
        outcomes: dict[int, ActionOutcome] = {}
        for reply in messages:
            if not isinstance(reply, ToolMessage):
                continue
            index = index_of(reply.tool_call_id)
            text = str(reply.text)
            if names[index] not in self._node.tools_by_name:
                outcomes[index] = not_executed(text)
            else:
                outcomes[index] = executed(text)
        return outcomes
