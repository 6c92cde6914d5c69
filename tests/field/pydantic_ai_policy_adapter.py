"""A `ToolPolicy` mapped onto pydantic-ai's own permission mechanisms, driven by ``Agent.run``.

``factory(registry, policy)`` gives an `ActionExecutor`; ``batch_factory(registry,
max_concurrency=N, policy)`` a `BatchExecutor` (one model response with N parallel tool calls,
for P11). Both build an `Agent` on pydantic-ai's `FunctionModel`, whose first response holds the
call(s) (ids ``call_<i>``) and whose next one ends the run with a text, and run it with
``Agent.run`` (output ``[str, DeferredToolRequests]``); tools are built as in
`field.pydantic_ai_adapter` (``Tool.from_schema``, which validates nothing), with
``takes_ctx=True`` so the tool function sees its call id.

Mapping decisions (pydantic-ai-slim 2.68.0; paths inside ``site-packages/pydantic_ai``):

- **Deciders**: one ``after_tool_validate`` hook each, registered in order on one `Hooks`
  capability (the hook pydantic-ai documents as the place to defer a call once its arguments are
  valid; ``tool_manager.py`` ``ToolManager._run_validate_hooks``). The hook awaits the decider
  with the action's own `ToolCall` and translates its `Verdict` into the runtime's vocabulary:
  ``None`` or ALLOW returns the arguments (the next hook runs); DENY raises ``ToolFailed(reason)``
  (a terminal failure the model sees, the call not run); ASK raises
  ``ApprovalRequired(metadata={"reason": reason})`` unless ``ctx.tool_call_approved`` (the
  ``ApprovalRequiredToolset`` idiom). A decider's exception propagates from the hook, and an
  answer that is not a `Verdict` is returned as the hook's answer, as it is: what pydantic-ai
  makes of either is its own doing. pydantic-ai runs the hooks one after another and the first
  one that raises ends the chain; it combines nothing.
- **Default**: pydantic-ai has no "when no rule matches" mode. ``Decision.ASK`` maps to the
  runtime's unconditional approval gate, an ``ApprovalRequiredToolset`` around the tools (it
  raises ``ApprovalRequired`` from ``call_tool`` whatever the hooks said); ``Decision.DENY`` has
  no counterpart and is not mapped (the calls run as under ALLOW).
- **Approver**: pydantic-ai's human-in-the-loop flow. A run whose calls were deferred ends with
  a `DeferredToolRequests` output; the adapter asks ``policy.approver(call, reasons)`` once per
  call in ``requests.approvals`` (reasons: the deferring hook's ``metadata["reason"]``, or none
  for the default gate) and passes the answers, as they are, in
  ``DeferredToolResults(approvals=...)`` to a second ``Agent.run`` on the first one's messages.
  With no approver the run ends with the call pending; the adapter reports that call as
  NOT_EXECUTED with its own sentence (`PENDING`): pydantic-ai has no outcome for it.
- **Wrappers**: one `WrapperToolset` each around the function toolset, ``wrappers[0]`` outermost;
  its ``call_tool`` awaits the wrapper with the `ToolCall` and a ``proceed`` that calls the
  wrapped toolset's ``call_tool``.
- **Post-processors**: one ``after_tool_execute`` hook each on the same `Hooks` capability, in
  order; each gets the previous one's result and returns the new one.
- **Outcomes**: the call's ``ToolReturnPart`` in the run's messages: ``outcome="success"`` is
  EXECUTED with ``model_response_str()`` (what the model is shown); any other outcome (``failed``,
  ``denied``, ``retried``) and a ``RetryPromptPart`` are NOT_EXECUTED with that text. Exceptions
  pydantic-ai lets out of ``Agent.run`` propagate from ``execute``.
- **Batch form**: the frame of `field._batch_common` (``started`` right before the handler,
  inside the tool function). ``Agent.run`` gives no per-call signal without a streaming model,
  so every outcome is known, and committed, when the last run returns. As in
  `field.pydantic_ai_batch_adapter`, ``max_concurrency=1`` maps to
  ``ToolManager.parallel_execution_mode("sequential")`` and a tool that is not
  ``concurrency_safe=True`` is ``sequential=True``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import Hooks
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.messages import (
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
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ApprovalRequiredToolset, FunctionToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_ai.toolsets.wrapper import WrapperToolset

from field._batch_common import BatchFieldExecutor, Call, call_id, index_of
from field._common import NO_TOOL_CALL, executed, handler_of, not_executed, plain_json
from field._pydantic_ai_common import schema_tool
from polyloop import (
    Action,
    ActionOutcome,
    Decision,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)
from polyloop.ports import BatchJournal, ToolCall

__all__ = ["PENDING", "batch_factory", "factory"]

RETRIES = 1_000_000
"""Per-tool retry budget: large enough that no run exhausts it."""

PENDING = (
    "The run ended with this call awaiting approval (DeferredToolRequests) and no approver "
    "to answer it; pydantic-ai did not run it."
)
"""The adapter's own text for a call left pending: pydantic-ai gives it no outcome."""

_SCRIPT: contextvars.ContextVar[Sequence[ToolCallPart]] = contextvars.ContextVar("pfp_script")
_CALLS: contextvars.ContextVar[dict[str, ToolCall]] = contextvars.ContextVar("pfp_calls")

Enter = Callable[[str, Any, dict[str, Any]], Awaitable[Any]]
"""How the tool function enters a handler: (call id, handler, keyword arguments) -> result."""


def _call_of(identifier: str | None) -> ToolCall:
    """The action's own `ToolCall` for a pydantic-ai call id (listeners get it, P7)."""
    assert identifier is not None
    return _CALLS.get()[identifier]


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model: the call(s) first, then a text that ends the run."""
    if len(messages) == 1:
        return ModelResponse(parts=list(_SCRIPT.get()))
    return ModelResponse(parts=[TextPart("done")])


def _decider_hook(decider: Any) -> Callable[..., Awaitable[Any]]:
    async def after_tool_validate(
        ctx: RunContext[None], /, *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        verdict = await decider(_call_of(call.tool_call_id))
        if verdict is None:
            return args
        if not isinstance(verdict, Verdict):
            return verdict  # the runtime's hook slot gets the answer as it is
        if verdict.decision is Decision.DENY:
            raise ToolFailed(verdict.reason)
        if verdict.decision is Decision.ASK and not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={"reason": verdict.reason})
        return args

    return after_tool_validate


def _post_hook(post: Any) -> Callable[..., Awaitable[Any]]:
    async def after_tool_execute(
        ctx: RunContext[None],
        /,
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        result: Any,
    ) -> Any:
        return await post(_call_of(call.tool_call_id), result)

    return after_tool_execute


@dataclass
class _WrapperLayer(WrapperToolset[None]):
    """One policy wrapper as a pydantic-ai wrapper toolset."""

    wrapper: Any = field(default=None, kw_only=True)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[None], tool: ToolsetTool[None]
    ) -> Any:
        wrapped = self.wrapped

        async def proceed() -> Any:
            return await wrapped.call_tool(name, tool_args, ctx, tool)

        return await self.wrapper(_call_of(ctx.tool_call_id), proceed)


def _outcome(part: ToolReturnPart | RetryPromptPart) -> ActionOutcome:
    if isinstance(part, RetryPromptPart):
        return not_executed(part.model_response())
    if part.outcome == "success":
        return executed(part.model_response_str())
    return not_executed(part.model_response_str())


class _PolicedAgent:
    """The registry's tools and the policy's listeners in one pydantic-ai `Agent`."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy, enter: Enter) -> None:
        self._policy = policy
        self._enter = enter
        hooks: Hooks[None] = Hooks()
        for decider in policy.deciders:
            hooks.on.after_tool_validate(_decider_hook(decider))
        for post in policy.post:
            hooks.on.after_tool_execute(_post_hook(post))
        toolset: AbstractToolset[None] = FunctionToolset(
            tools=[self._tool(spec) for spec in registry.specs]
        )
        for wrapper in reversed(policy.wrappers):
            toolset = _WrapperLayer(toolset, wrapper=wrapper)
        if policy.default is Decision.ASK:
            toolset = ApprovalRequiredToolset(toolset)
        self.agent: Agent[None, str | DeferredToolRequests] = Agent(
            FunctionModel(_respond),
            toolsets=[toolset],
            capabilities=[hooks],
            output_type=[str, DeferredToolRequests],
            retries=RETRIES,
        )

    def _tool(self, spec: ToolSpec) -> Tool[None]:
        handler = handler_of(spec)
        enter = self._enter

        async def function(ctx: RunContext[None], **kwargs: Any) -> Any:
            return await enter(ctx.tool_call_id or "", handler, kwargs)

        return schema_tool(spec, function)

    async def run(self, calls: dict[str, tuple[ToolCall, Any]]) -> dict[str, ActionOutcome]:
        """One turn: the calls (by id: the action's `ToolCall`, plain arguments) as one model
        response, deferred calls answered by the approver in a second run; outcomes by id."""
        script = [
            ToolCallPart(tool_name=tool_call.name, args=arguments, tool_call_id=identifier)
            for identifier, (tool_call, arguments) in calls.items()
        ]
        script_token = _SCRIPT.set(script)
        calls_token = _CALLS.set({identifier: pair[0] for identifier, pair in calls.items()})
        try:
            result = await self.agent.run("go")
            pending: set[str] = set()
            while isinstance(result.output, DeferredToolRequests):
                requests = result.output
                approver = self._policy.approver
                if approver is None:
                    pending = {asked.tool_call_id for asked in requests.approvals}
                    break
                approvals: dict[str, Any] = {}
                for asked in requests.approvals:
                    reason = requests.metadata.get(asked.tool_call_id, {}).get("reason")
                    reasons = () if reason is None else (reason,)
                    approvals[asked.tool_call_id] = await approver(
                        _call_of(asked.tool_call_id), reasons
                    )
                result = await self.agent.run(
                    message_history=result.all_messages(),
                    deferred_tool_results=DeferredToolResults(approvals=approvals),
                )
            messages = result.all_messages()
        finally:
            _CALLS.reset(calls_token)
            _SCRIPT.reset(script_token)
        outcomes = {identifier: not_executed(PENDING) for identifier in pending}
        for message in messages:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id:
                        outcomes[part.tool_call_id] = _outcome(part)
        return outcomes


async def _plain_enter(identifier: str, handler: Any, arguments: dict[str, Any]) -> Any:
    return await handler(arguments)


class PydanticAiPolicyExecutor:
    """An `ActionExecutor`: each action's tool call is one model response of an agent run."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy) -> None:
        self._registry = registry
        self._agent = _PolicedAgent(registry, policy, _plain_enter)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self._registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        tool_call = action.tool_call
        if tool_call is None:
            return not_executed(NO_TOOL_CALL)
        identifier = call_id(0)
        outcomes = await self._agent.run({identifier: (tool_call, plain_json(tool_call.arguments))})
        return outcomes[identifier]


_ACTIONS: contextvars.ContextVar[Sequence[Action]] = contextvars.ContextVar("pfp_actions")


class PydanticAiPolicyBatchExecutor(BatchFieldExecutor):
    """A `BatchExecutor`: one batch is one model response with parallel tool calls."""

    def __init__(
        self, registry: ToolRegistry, *, max_concurrency: int = 10, policy: ToolPolicy
    ) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._agent = _PolicedAgent(registry, policy, self._enter_batch)

    async def _enter_batch(self, identifier: str, handler: Any, arguments: dict[str, Any]) -> Any:
        return await self.enter(index_of(identifier), handler, arguments)

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        token = _ACTIONS.set(tuple(actions))
        try:
            return await super().execute_batch(actions, journal)
        finally:
            _ACTIONS.reset(token)

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        actions = _ACTIONS.get()
        turn: dict[str, tuple[ToolCall, Any]] = {}
        for call in calls:
            tool_call = actions[call.index].tool_call
            assert tool_call is not None
            turn[call.id] = (tool_call, call.arguments)
        if self.max_concurrency == 1:
            with ToolManager.parallel_execution_mode("sequential"):
                outcomes = await self._agent.run(turn)
        else:
            outcomes = await self._agent.run(turn)
        return {index_of(identifier): outcome for identifier, outcome in outcomes.items()}


def factory(registry: ToolRegistry, policy: ToolPolicy) -> PydanticAiPolicyExecutor:
    """The kit's policy target: ``factory(registry, policy=ToolPolicy(...))``."""
    return PydanticAiPolicyExecutor(registry, policy)


def batch_factory(
    registry: ToolRegistry, max_concurrency: int = 10, *, policy: ToolPolicy
) -> PydanticAiPolicyBatchExecutor:
    """The kit's batch policy target: ``factory(registry, max_concurrency=N, policy=...)``."""
    return PydanticAiPolicyBatchExecutor(registry, max_concurrency=max_concurrency, policy=policy)
