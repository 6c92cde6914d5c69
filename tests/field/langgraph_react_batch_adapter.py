"""A `BatchExecutor` over LangGraph's default agent, ``create_react_agent`` (``version="v2"``).

`field.langgraph_batch_adapter` certifies a ``ToolNode`` fed one ``AIMessage``: one graph task
runs every call (``asyncio.gather`` in ``ToolNode._afunc``). The agent graph LangGraph builds
by default sends each call as its own task instead: ``create_react_agent(..., version="v2")``
(``langgraph/prebuilt/chat_agent_executor.py``, the default ``version``) routes a model response
with tool calls through ``should_continue``, which returns one ``Send("tools",
ToolCallWithContext(tool_call=call, ...))`` per call; Pregel runs those sends as the tasks of
one super-step (``langgraph/pregel/_runner.py`` ``PregelRunner.atick``), each submitted to the
run's ``AsyncBackgroundExecutor`` (``langgraph/pregel/_executor.py``). This adapter drives that
graph as an integrator would: ``create_react_agent(model, ToolNode(tools), version="v2")``,
``await graph.ainvoke({"messages": [HumanMessage("go")]}, config)``, with a scripted chat model
whose first answer is the batch (one ``AIMessage`` with the calls, ids ``call_<i>``) and whose
second, after the tools, is a text that ends the run.

The tools, the ``ToolNode`` (``awrap_tool_call`` carrying each call's position), the journal
signal (``on_tool_end``), outcomes, the glue's answer to non-object arguments and the recorded
calls (the ``AIMessage`` in the final state) are those of `field.langgraph_batch_adapter`.
What the Send path changes:

- **max_concurrency** goes into the ``RunnableConfig``; the run's ``AsyncBackgroundExecutor``
  holds a ``Semaphore(max_concurrency)`` and every task it runs, each call's included, is
  ``gated`` by it (``AsyncBackgroundExecutor.submit``), so the cap holds per run.
- **Exceptions**: a tool's exception (re-raised by ``_default_handle_tool_errors``) fails its
  task; the runner stops the step (``_should_stop_others``), ``_panic_or_proceed`` cancels the
  tasks still running and raises it, and the run ends with it.
- **Cancellation**: the cancelled run leaves ``AsyncBackgroundExecutor``, whose ``__aexit__``
  cancels every task and awaits them (``await asyncio.wait(tasks)``), not shielded: one
  cancellation drains the calls, a second one interrupts that wait.
- ``create_react_agent`` is deprecated in favour of ``langchain.agents.create_agent``; it
  stays LangGraph's prebuilt agent, and its deprecation warning is silenced where the graph is
  built.
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10

from field._batch_common import Call
from field.langgraph_batch_adapter import LangGraphBatchExecutor

_CALLS: contextvars.ContextVar[Sequence[Call]] = contextvars.ContextVar("langgraph_react_batch")


def _reply(messages: list[BaseMessage]) -> AIMessage:
    """The scripted model's answer: the batch to the user's message, then a text."""
    if isinstance(messages[-1], HumanMessage):
        return AIMessage(
            content="",
            tool_calls=[
                {"type": "tool_call", "name": call.name, "args": call.arguments, "id": call.id}
                for call in _CALLS.get()
            ],
        )
    return AIMessage(content="done")


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from the script above; ``bind_tools`` keeps it as it is (the
    tools' schemas are only ever shown to a model, and this one does not read them)."""

    @property
    def _llm_type(self) -> str:
        return "polyloop-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=_reply(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, run_manager, **kwargs)


class LangGraphReactBatchExecutor(LangGraphBatchExecutor):
    """The registry's tools in ``create_react_agent(version="v2")``: a turn is the scripted
    model's one response, each of its calls a ``Send`` task of its own."""

    def _compile(self, node: ToolNode) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return create_react_agent(ScriptedChatModel(), node, version="v2")

    async def _run(self, calls: Sequence[Call]) -> list[Any]:
        token = _CALLS.set(calls)
        try:
            output = await self._graph.ainvoke(
                {"messages": [HumanMessage(content="go")]}, self._config()
            )
        finally:
            _CALLS.reset(token)
        return list(output["messages"])
