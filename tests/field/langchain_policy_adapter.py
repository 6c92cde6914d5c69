"""Policy factories over LangChain's ``create_agent``: a `ToolPolicy` as agent middleware.

`LangChainPolicyExecutor` is ``factory(registry, policy)`` (one tool call per model turn) and
`LangChainPolicyBatchExecutor` is ``factory(registry, policy, max_concurrency=N)`` (every call
of a batch in one ``AIMessage``, for P11). Both build one agent per executor:
``create_agent(model, tools, middleware=[...], checkpointer=InMemorySaver())``
(``langchain/agents/factory.py``), and run a turn the way an application runs the agent:
``await agent.ainvoke({"messages": [HumanMessage]}, config, version="v2")`` on a fresh thread,
then, while the run stops at approval interrupts, ``await agent.ainvoke(Command(resume=...),
config, version="v2")``. The chat model is scripted (`_ScriptedModel`, a small
``BaseChatModel``; ``GenericFakeChatModel`` has no ``bind_tools``, which ``create_agent``
calls): it answers the user turn with one ``AIMessage`` holding the turn's tool calls (ids
``call_<position>``), and anything after it with a final answer. No network.

Each spec is a ``StructuredTool`` with the spec's JSON Schema dict as ``args_schema`` and a
coroutine awaiting the handler with the keyword arguments as one dict, as in
`field.langchain_adapter` (LangChain validates nothing against a dict schema). The agent's
``ToolNode`` sends each pending call as its own task (``Send("tools", [tool_call])`` in the
model-to-tools edge of ``factory.py``) and runs the composed ``awrap_tool_call`` chain around
the tool (``ToolNode._arun_one``, ``langgraph/prebuilt/tool_node.py``), with
``handle_tool_errors`` at its default, which re-raises every exception but argument-validation
errors: an exception in a middleware or a tool ends the run, and the adapter lets it propagate.

Mapping decisions (the middleware list, first = outermost, ``_chain_async_tool_call_wrappers``):

- **Deciders**: one middleware per decider, in policy order, each deciding in its
  ``awrap_tool_call`` before it calls ``handler``. Not ``after_model``: the agent's
  before-tool place for a per-call decision is the tool-call chain (LangChain's own decider,
  ``AutoModeMiddleware``, blocks there), and only there does it come before the per-call
  approval and the wrappers in one order. A DENY returns an error ``ToolMessage`` (a fixed
  sentence and the reason) without calling ``handler``, as ``AutoModeMiddleware`` does, so
  later deciders are not asked; ALLOW, ASK and ``None`` call ``handler``, and ALLOW and ASK
  are noted for the approval below. The decider's answer is read as a `Verdict`
  (``verdict.decision``); a garbage answer raises ``AttributeError`` there, and that, like
  a decider's own exception, goes where LangChain sends a middleware's exception.
- **Combining**: LangChain has none. Nesting gives "any DENY wins" (a short circuit); ASK is
  the approval gate's ``when`` predicate. The policy's ``default`` has no counterpart: ALLOW
  is what the agent does anyway, ASK is read by the same predicate, DENY is one more
  middleware after the deciders that blocks a call no decider answered.
- **Approver**: ``HumanInTheLoopMiddleware(interrupt_on={tool: {"allowed_decisions":
  ["approve", "reject"], "when": ...}}, interrupt_mode="per_call")``, after the deciders:
  the per-call mode interrupts inside the tool-call chain, so the review comes after the
  deciders and before wrappers and the tool (the default ``"batched"`` mode interrupts in
  ``after_model``, before any ``wrap_tool_call``). ``when`` says "interrupt" when a decider
  asked, or when none answered and the default is ASK. The adapter answers each interrupt
  (in call order) by awaiting ``policy.approver(call, reasons)``, ``reasons`` being the ASK
  verdicts' reasons noted above, and resumes with ``Command(resume={interrupt.id:
  decision})``: ``True`` is ``{"type": "approve"}``, ``False`` is ``{"type": "reject"}``, and
  any other answer is passed on as it is, for LangGraph to check against the interrupt's
  ``response_schema``. With no approver the adapter rejects with the message
  `NO_REVIEWER`, the one way to end a run nobody can review. An approver's exception
  propagates (the run stays paused). On resume LangGraph runs the paused tool-call task
  again from its start, so every decider listed before the gate is called again.
- **Wrappers**: one ``awrap_tool_call`` middleware per wrapper, after the gate, in policy
  order (``wrappers[0]`` outermost). ``proceed()`` awaits ``handler(request)`` and returns
  the ``ToolMessage``'s text; the wrapper's result becomes the content of a new
  ``ToolMessage`` (its validator makes a non-str content ``str()``).
- **Post-processors**: the post-step of ``awrap_tool_call`` middleware between the gate and
  the wrappers (LangChain has no after-tool hook; ``after_model`` runs after the *next* model
  call), listed in reverse so that ``post[0]``'s post-step runs first. Each gets the previous
  text and its result becomes the message's content, as for wrappers. Nothing here decides
  what is post-processed: a denial or a rejection never reaches these middleware, and an
  exception raised inside them passes through.
- **Identity**: every listener gets the action's own `ToolCall`, found by the request's
  tool-call id; the handler gets the keyword arguments LangChain hands the tool.
- **Outcomes**: a call's ``ToolMessage`` in the final state is NOT_EXECUTED when the policy
  answered it instead of the tool (a denial here: ``lc_source`` ``"tool_policy"``; a
  rejection: ``HumanInTheLoopMiddleware``'s ``lc_source`` ``"hitl_interrupt_decision"``) or
  when its name is not a tool of the agent (``ToolNode``'s own answer), else EXECUTED with
  its text. A code action and arguments that are not an object (an ``AIMessage`` holds only
  dict arguments) never reach the agent: NOT_EXECUTED by the glue.
- **Batch**: the journal's ``started(i)`` is awaited in the tool's coroutine right before the
  handler (`field._batch_common`); the position comes from an innermost middleware that
  only reads the request's id. Outcomes are known when the run returns (a post-processor can
  reshape a message after the tool ended, so ``on_tool_end`` is not the final result).
  ``max_concurrency`` goes into the run's config, where Pregel's task executor caps the
  calls' tasks with it (``AsyncBackgroundExecutor``, ``langgraph/pregel/_executor.py``).
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
    ToolCallRequest,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    add_notification_metadata,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt

from field._batch_common import BatchFieldExecutor, Call, call_id, index_of
from field._common import NO_TOOL_CALL, executed, handler_of, not_executed, plain_json, thaw
from polyloop import (
    Action,
    ActionOutcome,
    Decision,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

__all__ = [
    "NO_REVIEWER",
    "LangChainPolicyBatchExecutor",
    "LangChainPolicyExecutor",
    "batch_factory",
    "factory",
]

BLOCKED = "The tool call was blocked by the tool-call policy; the tool was not executed."
"""The deny middleware's fixed sentence, followed by the DENY reason."""
NO_REVIEWER = "no reviewer is configured for this agent"
"""The reject message the adapter answers an approval interrupt with when there is no approver."""
POLICY_SOURCE = "tool_policy"
HITL_SOURCE = "hitl_interrupt_decision"

Handler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
Entry = Callable[[Call, Callable[[Any], Awaitable[Any]], Any], Awaitable[Any]]

_POSITION: contextvars.ContextVar[int] = contextvars.ContextVar("langchain_policy_position")


class _Note:
    """One call of a turn: the action's `ToolCall` and what the deciders answered, by position."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.answers: dict[int, Verdict] = {}

    def reasons(self) -> tuple[str, ...]:
        return tuple(
            verdict.reason
            for _, verdict in sorted(self.answers.items())
            if verdict.decision is Decision.ASK
        )


class _Ledger:
    """The calls of the running turns, by thread and tool-call id."""

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], _Note] = {}

    def open(self, thread: str, identifier: str, call: ToolCall) -> None:
        self._notes[thread, identifier] = _Note(call)

    def close(self, thread: str) -> None:
        for key in [key for key in self._notes if key[0] == thread]:
            del self._notes[key]

    def get(self, thread: str, identifier: str) -> _Note:
        return self._notes[thread, identifier]

    def note(self, request: ToolCallRequest) -> _Note:
        thread = request.runtime.config["configurable"]["thread_id"]
        return self._notes[thread, str(request.tool_call["id"])]


def _answered(request: ToolCallRequest, content: str, decision: str) -> ToolMessage:
    """A message the policy gives the model in place of the tool's result."""
    message = ToolMessage(
        content=content,
        name=request.tool_call["name"],
        tool_call_id=request.tool_call["id"],
        status="error",
    )
    # Typed for HumanMessage; HumanInTheLoopMiddleware marks its ToolMessage the same way.
    marked = add_notification_metadata(
        message,  # type: ignore[arg-type]
        source=POLICY_SOURCE,
        data={"decision": decision},
    )
    return cast(ToolMessage, marked)


def _text(message: ToolMessage | Command[Any]) -> str:
    if isinstance(message, ToolMessage):
        return message.content if isinstance(message.content, str) else str(message.text)
    raise TypeError(f"the tool-call chain returned {type(message).__name__}, not a ToolMessage")


def _reshaped(request: ToolCallRequest, text: object, status: Any = "success") -> ToolMessage:
    return ToolMessage(
        content=cast(Any, text),  # ToolMessage's validator makes a non-str content str()
        name=request.tool_call["name"],
        tool_call_id=request.tool_call["id"],
        status=status,
    )


class _Decide(AgentMiddleware):
    """Decider `position`, asked in this middleware's ``awrap_tool_call``."""

    def __init__(self, position: int, decider: Any, ledger: _Ledger) -> None:
        super().__init__()
        self._position, self._decider, self._ledger = position, decider, ledger

    @property
    def name(self) -> str:
        return f"policy_decider_{self._position}"

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        note = self._ledger.note(request)
        verdict = await self._decider(note.call)
        note.answers.pop(self._position, None)  # a resumed run asks again
        if verdict is not None:
            if verdict.decision is Decision.DENY:
                return _answered(request, f"{BLOCKED} {verdict.reason}".rstrip(), "deny")
            note.answers[self._position] = verdict
        return await handler(request)


class _DenyByDefault(AgentMiddleware):
    """The policy's default DENY: blocks a call no decider answered."""

    def __init__(self, ledger: _Ledger) -> None:
        super().__init__()
        self._ledger = ledger

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        if not self._ledger.note(request).answers:
            return _answered(request, BLOCKED, "deny")
        return await handler(request)


class _Wrap(AgentMiddleware):
    """Wrapper `position` around the rest of the chain."""

    def __init__(self, position: int, wrapper: Any, ledger: _Ledger) -> None:
        super().__init__()
        self._position, self._wrapper, self._ledger = position, wrapper, ledger

    @property
    def name(self) -> str:
        return f"policy_wrapper_{self._position}"

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        async def proceed() -> str:
            return _text(await handler(request))

        return _reshaped(request, await self._wrapper(self._ledger.note(request).call, proceed))


class _Post(AgentMiddleware):
    """Post-processor `position`, in the post-step of this middleware's ``awrap_tool_call``."""

    def __init__(self, position: int, post: Any, ledger: _Ledger) -> None:
        super().__init__()
        self._position, self._post, self._ledger = position, post, ledger

    @property
    def name(self) -> str:
        return f"policy_post_{self._position}"

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        message = await handler(request)
        text = await self._post(self._ledger.note(request).call, _text(message))
        status = message.status if isinstance(message, ToolMessage) else "success"
        return _reshaped(request, text, status)


class _Position(AgentMiddleware):
    """Innermost: the call's position, for the journal's ``started`` in the tool."""

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Handler
    ) -> ToolMessage | Command[Any]:
        _POSITION.set(index_of(str(request.tool_call["id"])))
        return await handler(request)


class _ScriptedModel(BaseChatModel):
    """A chat model that answers a user turn with the tool calls scripted for it (by the
    message id) and anything else with a final answer."""

    script: dict[str, AIMessage]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage) and last.id in self.script:
            reply = self.script[last.id]
        else:
            reply = AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return self._generate(messages)


class _PolicyAgent:
    """One ``create_agent`` agent with the policy as middleware, run turn by turn."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy, enter: Entry | None) -> None:
        self._registry, self._policy, self._enter = registry, policy, enter
        self._ledger = _Ledger()
        self._threads = itertools.count(1)
        self._model = _ScriptedModel(script={})
        self.max_concurrency: int | None = None
        self.agent = create_agent(
            self._model,
            [self._tool(spec) for spec in registry.specs],
            middleware=self._middleware(),
            checkpointer=InMemorySaver(),
        )

    def _tool(self, spec: ToolSpec) -> StructuredTool:
        handler = handler_of(spec)
        enter = self._enter

        async def coroutine(**kwargs: Any) -> Any:
            if enter is None:
                return await handler(kwargs)
            return await enter(Call(_POSITION.get(), spec.name, None), handler, kwargs)

        return StructuredTool(
            name=spec.name,
            description=spec.description,
            args_schema=thaw(spec.parameters),
            coroutine=coroutine,
        )

    def _asks(self, request: ToolCallRequest) -> bool:
        """The approval gate's ``when``: a decider asked, or none answered and the default
        is ASK."""
        decisions = {verdict.decision for verdict in self._ledger.note(request).answers.values()}
        if Decision.ASK in decisions:
            return True
        return not decisions and self._policy.default is Decision.ASK

    def _middleware(self) -> list[AgentMiddleware]:
        policy, ledger = self._policy, self._ledger
        gate = cast(
            InterruptOnConfig, {"allowed_decisions": ["approve", "reject"], "when": self._asks}
        )
        stack: list[AgentMiddleware] = [
            _Decide(position, decider, ledger) for position, decider in enumerate(policy.deciders)
        ]
        if policy.default is Decision.DENY:
            stack.append(_DenyByDefault(ledger))
        stack.append(
            HumanInTheLoopMiddleware(
                interrupt_on={name: gate for name in self._registry.names()},
                interrupt_mode="per_call",
            )
        )
        posts = list(enumerate(policy.post))
        stack.extend(_Post(position, post, ledger) for position, post in reversed(posts))
        stack.extend(_Wrap(position, w, ledger) for position, w in enumerate(policy.wrappers))
        if self._enter is not None:
            stack.append(_Position())
        return stack

    async def run(self, calls: Sequence[tuple[Call, ToolCall]]) -> dict[int, ActionOutcome]:
        """Run one model turn holding `calls`; their outcomes by position."""
        thread = f"turn-{next(self._threads)}"
        for call, tool_call in calls:
            self._ledger.open(thread, call.id, tool_call)
        self._model.script[thread] = AIMessage(
            content="",
            tool_calls=[
                {"type": "tool_call", "name": call.name, "args": call.arguments, "id": call.id}
                for call, _ in calls
            ],
        )
        config: Any = {"configurable": {"thread_id": thread}}
        if self.max_concurrency is not None:
            config["max_concurrency"] = self.max_concurrency
        try:
            turn: Any = {"messages": [HumanMessage(content="Run the tool calls.", id=thread)]}
            while True:
                output = await self.agent.ainvoke(turn, config, version="v2")
                if not output.interrupts:
                    break
                turn = Command(resume=await self._review(thread, output.interrupts))
        finally:
            self._ledger.close(thread)
            del self._model.script[thread]
        return self._outcomes(output.value["messages"], [call for call, _ in calls])

    async def _review(self, thread: str, interrupts: Sequence[Interrupt]) -> dict[str, Any]:
        """Each approval interrupt answered by the approver, in call order."""
        answers: dict[str, Any] = {}
        for pending in sorted(interrupts, key=lambda i: index_of(i.value["tool_call_id"])):
            approver = self._policy.approver
            if approver is None:
                answers[pending.id] = {"type": "reject", "message": NO_REVIEWER}
                continue
            note = self._ledger.get(thread, pending.value["tool_call_id"])
            answer: Any = await approver(note.call, note.reasons())
            if answer is True:
                answer = {"type": "approve"}
            elif answer is False:
                answer = {"type": "reject"}
            answers[pending.id] = answer
        return answers

    def _outcomes(
        self, messages: Sequence[BaseMessage], calls: Sequence[Call]
    ) -> dict[int, ActionOutcome]:
        names = {call.id: call.name for call in calls}
        tools = set(self._registry.names())
        outcomes: dict[int, ActionOutcome] = {}
        for message in messages:
            if not isinstance(message, ToolMessage) or message.tool_call_id not in names:
                continue
            text = _text(message)
            source = message.additional_kwargs.get("lc_source")
            if source in (POLICY_SOURCE, HITL_SOURCE) or names[message.tool_call_id] not in tools:
                outcome = not_executed(text)
            else:
                outcome = executed(text)
            outcomes[index_of(message.tool_call_id)] = outcome
        return outcomes


def _plain_call(index: int, tool_call: ToolCall) -> Call | ActionOutcome:
    arguments = plain_json(tool_call.arguments)
    if type(arguments) is not dict:
        return not_executed(f"the arguments of {tool_call.name} are not a JSON object")
    return Call(index, tool_call.name, arguments)


class LangChainPolicyExecutor:
    """``factory(registry, policy)``: one tool call per turn of a ``create_agent`` agent."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy) -> None:
        self._registry = registry
        self._agent = _PolicyAgent(registry, policy, None)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self._registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        tool_call = action.tool_call
        if tool_call is None:
            return not_executed(NO_TOOL_CALL)
        call = _plain_call(0, tool_call)
        if isinstance(call, ActionOutcome):
            return call
        outcomes = await self._agent.run([(call, tool_call)])
        return outcomes[0]


_ACTIONS: contextvars.ContextVar[Sequence[Action]] = contextvars.ContextVar(
    "langchain_policy_actions"
)


class LangChainPolicyBatchExecutor(BatchFieldExecutor):
    """``factory(registry, policy, max_concurrency=N)``: a batch as one ``AIMessage``."""

    def __init__(
        self, registry: ToolRegistry, policy: ToolPolicy, max_concurrency: int = 10
    ) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._agent = _PolicyAgent(registry, policy, self._entered)
        self._agent.max_concurrency = max_concurrency

    async def _entered(self, call: Call, handler: Any, arguments: Any) -> Any:
        return await self.enter(call.index, handler, arguments)

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        token = _ACTIONS.set(tuple(actions))
        try:
            return await super().execute_batch(actions, journal)
        finally:
            _ACTIONS.reset(token)

    def pre_resolve(self, call: Call) -> ActionOutcome | None:
        if type(call.arguments) is not dict:
            return not_executed(f"the arguments of {call.name} are not a JSON object")
        return None

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        actions = _ACTIONS.get()
        pairs: list[tuple[Call, ToolCall]] = []
        for call in calls:
            tool_call = actions[call.index].tool_call
            assert tool_call is not None and call.id == call_id(call.index)
            pairs.append((call, tool_call))
        return await self._agent.run(pairs)


def factory(registry: ToolRegistry, policy: ToolPolicy) -> LangChainPolicyExecutor:
    """The policy factory the kit certifies: one tool call per model turn."""
    return LangChainPolicyExecutor(registry, policy)


def batch_factory(
    registry: ToolRegistry, policy: ToolPolicy, max_concurrency: int = 10
) -> LangChainPolicyBatchExecutor:
    """The batch policy factory (P11): a batch's calls in one ``AIMessage``."""
    return LangChainPolicyBatchExecutor(registry, policy, max_concurrency)
