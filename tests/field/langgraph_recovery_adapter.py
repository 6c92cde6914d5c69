"""Recovery targets over LangGraph: a ``create_react_agent`` graph checkpointed by SQLite.

A durable runtime as a LangGraph user builds one (contract section 12, the kit's recovery
subject): each class here is a factory ``(registry, directory)``, its ``run(batch_id, actions)``
runs one agent turn on the thread ``batch_id``, checkpointed by ``AsyncSqliteSaver`` in
``directory/langgraph.sqlite`` (langgraph-checkpoint-sqlite; the async saver because the kit's
handlers are coroutines and the graph runs with ``ainvoke``), and a later ``run`` of the same
id in a new process resumes that thread.

The graph is ``langgraph.prebuilt.create_react_agent(model, tools, checkpointer=saver)``: the
agent most LangGraph users build (``langgraph/prebuilt/chat_agent_executor.py``), and the one
whose tool step is the finest unit LangGraph checkpoints. Its default ``version="v2"`` routes
every tool call of the model's ``AIMessage`` to its own ``ToolNode`` task (one ``Send`` each,
all in one superstep), so each call's ``ToolMessage`` is saved as that task's pending write
(``put_writes``) when the task ends, and a resume re-runs only the tasks without one. A
``StateGraph`` with a model node and a plain ``ToolNode`` (like ``version="v1"``) would put every
call in one task and re-run all of them. ``create_react_agent`` is marked deprecated in favour of
``langchain.agents.create_agent`` (the ``langchain`` package, not pinned here); its warning is
silenced while the graph is built.

The model is scripted (no network): a ``BaseChatModel`` whose answer depends only on the
messages it is shown. Without a ``ToolMessage`` after the last ``AIMessage`` it emits one
``AIMessage`` carrying the batch's calls (ids ``call_<i>``, arguments as plain JSON); after
the tools have answered, a final answer without calls. ``bind_tools`` returns the model
itself (the tools are already in its script), as LangGraph's own test models do.

Mapping decisions:

- **Run or resume.** ``aget_state`` on the thread: without a checkpoint the run invokes the
  graph with the user's message; with one it resumes the way LangGraph documents resuming
  after a failure, ``ainvoke(None, config)`` on the same thread (for a thread that already
  finished this runs nothing and returns its state). The calls given to a resume reach
  LangGraph only if it asks the model again; LangGraph never compares them with the thread
  (the glue does not either: that would be emulating J9).
- **Durability.** `LangGraphRecovery` leaves ``durability`` at LangGraph's default
  (``"async"``: a step's checkpoint is written while the next step runs);
  `LangGraphRecoverySync` passes ``durability="sync"`` to ``ainvoke`` (each step's checkpoint
  is awaited before the next step). In both, a finished tool task's pending write is saved
  in the background (``PregelLoop.put_writes`` submits ``aput_writes``).
- **Outcomes.** After the graph returns, call *i* is the ``ToolMessage`` whose
  ``tool_call_id`` is ``call_<i>``: EXECUTED with its ``.text``, except the error message
  ``ToolNode._validate_tool_call`` answers an unknown name with, which is NOT_EXECUTED (no
  tool code ran). A code action is NOT_EXECUTED by the glue and never reaches the model
  (LangGraph has no code actions). A call the finished thread has no ``ToolMessage`` for is
  an error of this runtime, raised, never made up.
- **Tool errors.** ``create_react_agent`` builds its ``ToolNode`` with the default
  ``handle_tool_errors`` (``_default_handle_tool_errors`` in
  ``langgraph/prebuilt/tool_node.py``): only argument-validation errors become a
  ``ToolMessage``; any other exception (the kit's ``ToolEnvironmentError``) fails the task,
  the graph raises it, and ``run`` lets it propagate. LangGraph has no ENV_ERROR: there is
  no outcome to map, and every later resume re-runs the failed task.
- **Not in LangGraph.** No replay policy: a ``ToolSpec``'s ``replay_policy`` (SAFE/NEVER) has
  no place in a LangGraph tool, so it is dropped, and LangGraph re-runs an unfinished tool
  task whatever the tool does. No ``started`` record: a task's checkpoint entry exists only
  once it has finished. No attempt bound across crashes (``RetryPolicy`` retries exceptions
  inside one process), so the runtime has no ``max_attempts``. No concurrency classification:
  every call of the message runs at once. No "interrupted" outcome. The glue adds none of
  these.

Cost: the kit starts a fresh interpreter per lifetime, and importing langchain-core and
LangGraph is most of it (3.7-4 s per lifetime at load 10 on the shared machine; 4-6 s with
`field._common`'s own imports, Hypothesis and the kit). So this module does not import the
field frame: its outcome helpers repeat `field._common`'s (the same words, the same flags).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.prebuilt import create_react_agent
from langgraph.types import Durability
from langgraph.warnings import LangGraphDeprecatedSinceV10

from polyloop import Action, ActionOutcome, ActionStatus, ToolRegistry, ToolSpec

__all__ = ["LangGraphRecovery", "LangGraphRecoverySync", "ScriptedModel"]

FINAL_ANSWER = "Every call of the batch has its result."
NO_TOOL_CALL = "The action has no tool call; this executor runs tool calls only, not code."
"""`field._common.NO_TOOL_CALL`'s words."""
_PREFIX = "call_"


def _plain(value: Any) -> Any:
    """A plain copy of deep-frozen JSON arguments (mappings as dicts, sequences as lists), as
    a model's parser hands them to LangChain."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _outcome(status: ActionStatus, text: str) -> ActionOutcome:
    """As `field._common.executed` / `not_executed`: synthetic only when no tool code ran."""
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=status is ActionStatus.NOT_EXECUTED,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class ScriptedModel(BaseChatModel):
    """A chat model that emits one turn of tool calls, then a final answer."""

    calls: list[dict[str, Any]]

    @property
    def _llm_type(self) -> str:
        return "polyloop-scripted"

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        answered = bool(messages) and isinstance(messages[-1], ToolMessage)
        if answered:
            message = AIMessage(content=FINAL_ANSWER)
        else:
            message = AIMessage(content="", tool_calls=self.calls)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self


def _structured_tool(spec: ToolSpec) -> StructuredTool:
    """The spec as a LangChain tool; its replay policy has nowhere to go."""
    handler = spec.handler
    assert handler is not None, f"tool {spec.name!r} has no handler"

    async def coroutine(**kwargs: Any) -> Any:
        return await handler(kwargs)

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=_plain(spec.parameters),
        coroutine=coroutine,
    )


class LangGraphRecovery:
    """One agent turn per batch id on a SQLite-checkpointed LangGraph thread."""

    durability: Durability | None = None
    """``None``: LangGraph's default (``"async"``)."""

    def __init__(self, registry: ToolRegistry, directory: str) -> None:
        self._registry = registry
        self._tools = [_structured_tool(spec) for spec in registry.specs]
        self._path = os.path.join(directory, "langgraph.sqlite")

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        outcomes: list[ActionOutcome | None] = [None] * len(actions)
        calls: list[dict[str, Any]] = []
        for index, action in enumerate(actions):
            tool_call = action.tool_call
            if tool_call is None:
                outcomes[index] = _outcome(ActionStatus.NOT_EXECUTED, NO_TOOL_CALL)
                continue
            arguments = _plain(tool_call.arguments)
            identifier = f"{_PREFIX}{index}"
            calls.append(
                {"type": "tool_call", "name": tool_call.name, "args": arguments, "id": identifier}
            )
        if calls:
            replies = await self._turn(batch_id, calls)
            for call in calls:
                index = int(call["id"].removeprefix(_PREFIX))
                outcomes[index] = self._outcome(batch_id, index, replies.get(call["id"]))
        return tuple(outcome for outcome in outcomes if outcome is not None)

    async def _turn(self, batch_id: str, calls: list[dict[str, Any]]) -> dict[str, ToolMessage]:
        """Run or resume the thread; its ``ToolMessage``s by tool-call id."""
        config: Any = {"configurable": {"thread_id": batch_id}}
        options: dict[str, Any] = {}
        if self.durability is not None:
            options["durability"] = self.durability
        async with AsyncSqliteSaver.from_conn_string(self._path) as saver:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
                graph = create_react_agent(
                    ScriptedModel(calls=calls), self._tools, checkpointer=saver
                )
            snapshot = await graph.aget_state(config)
            given: Any = None
            if snapshot.created_at is None:  # no checkpoint on this thread: a first run
                given = {"messages": [HumanMessage(f"Run the calls of batch {batch_id}.")]}
            state = await graph.ainvoke(given, config, **options)
        return {
            message.tool_call_id: message
            for message in state["messages"]
            if isinstance(message, ToolMessage)
        }

    def _outcome(self, batch_id: str, index: int, reply: ToolMessage | None) -> ActionOutcome:
        if reply is None:
            raise RuntimeError(
                f"LangGraph finished thread {batch_id!r} without a ToolMessage for call {index}"
            )
        text = str(reply.text)
        if reply.status == "error" and reply.name not in self._registry.names():
            return _outcome(ActionStatus.NOT_EXECUTED, text)  # ToolNode._validate_tool_call
        return _outcome(ActionStatus.EXECUTED, text)


class LangGraphRecoverySync(LangGraphRecovery):
    """The same graph run with ``durability="sync"``."""

    durability = "sync"
