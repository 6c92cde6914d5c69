"""A policy factory over openai-agents: a `ToolPolicy` mapped onto the SDK's own per-call
mechanisms and run by ``Runner.run`` with the SDK's scripted model (``agents.testing``).

``factory(registry, policy)`` builds one ``Agent`` whose tools are ``FunctionTool``s made as in
`field.agents_adapter` (``params_json_schema=<the spec's schema>``, ``strict_json_schema=False``,
the invoker wrapped by ``with_function_tool_failure_error_handler``, the failure policy the SDK's
own ``@function_tool`` gets). Each ``execute`` is one run: a fresh ``ScriptedModel`` answers the
first model call with the action's one function call (``call_id`` ``call_<n>``) and the second
with a text message, and ``Runner.run`` does everything in between.

Mapping decisions (the SDK's names; files are in ``agents/``):

- **Deciders -> ``needs_approval`` and ``tool_input_guardrails``.** A decider answers allow /
  ask / deny / abstain; the SDK splits that over two hooks. ``needs_approval`` (a callable, the
  SDK's one per-call policy callback, evaluated first: ``function_needs_approval`` in
  ``run_internal/tool_execution.py``) awaits every decider once, in list order, with the
  action's `ToolCall`, and returns whether one answered ASK (or, when all abstained, whether the
  default is ASK). A decider's exception is raised there, into the SDK. Each decider also has
  its own input guardrail, which answers from what that decider said for this call:
  ``reject_content("Tool call denied: <reason>")`` for a DENY verdict, ``allow()`` for any other
  verdict or an abstention, and a garbage answer is handed to the SDK as the guardrail's output
  as it is. A default of DENY is one more guardrail, last, rejecting when every decider
  abstained. The guardrails run before the approval (``ToolExecutionConfig(
  pre_approval_tool_input_guardrails=True)``, the SDK's switch for not asking about a call a
  guardrail rejects) and again before the tool.
- **Approver -> the run's approval interruption.** A call ``needs_approval`` marks ends the run
  with a ``ToolApprovalItem`` in ``RunResult.interruptions``; the adapter answers each on
  ``result.to_state()`` with ``RunState.approve`` or ``RunState.reject`` and resumes with
  ``Runner.run(agent, state)``, as the SDK's human-in-the-loop guide does. The SDK has no
  approval callback for function tools, so this answer is the application's: the adapter calls
  ``policy.approver(call, reasons)`` (the reasons are the ASK verdicts' reasons, in decider
  order; the SDK's approval item carries none) and approves only ``True`` (the rule of the SDK's
  own approval callbacks, ``resolve_approval_status``: ``approve is True``); anything else, and
  a policy without an approver, rejects with no message of its own, so the model sees the SDK's
  rejection text; an approver's exception propagates, as an approval callback's does there.
- **Wrappers: no place.** openai-agents 0.24.0 has nothing that wraps a function tool's
  invocation (no tool middleware; ``RunHooks.on_tool_start``/``on_tool_end`` observe, and
  ``on_invoke_tool`` is the tool itself). ``policy.wrappers`` is not used: the stage is absent.
- **Post-processors -> ``tool_output_guardrails``.** One guardrail per post-processor, in order;
  each calls it with the call and the output the SDK hands the guardrail and returns
  ``reject_content(<its result>)``, the SDK's only way for a guardrail to replace a tool's output
  (``_execute_tool_output_guardrails``). Its exception propagates into the SDK.
- **Outcome.** The observation is the call's ``ToolCallOutputItem.output`` (a ``str`` unchanged,
  anything else ``str(value)``). The call is EXECUTED when the SDK's ``RunHooks.on_tool_start``
  fired for it (the SDK's signal that the tool is about to be invoked, after every guardrail
  and approval), otherwise NOT_EXECUTED and synthetic. An exception out of ``Runner.run``
  propagates unchanged: with the Runner's default ``tool_not_found_behavior``, an unknown name
  raises ``ModelBehaviorError``. Arguments ``json.dumps`` cannot write are NOT_EXECUTED, as in
  the other adapters (a model's call is JSON text).
- **Batches** (``batch_factory(registry, max_concurrency=N, policy)``, P11): the scripted
  model's first response holds every call of the batch (``call_<i>``), and the Runner runs them
  as one turn through ``_FunctionToolBatchExecutor`` (``run_internal/tool_execution.py``), at
  most ``ToolExecutionConfig(max_function_tool_concurrency=N)`` at a time; each call's task
  evaluates its own ``needs_approval``. The interruptions of the turn are answered in the order
  the run lists them, then the run resumes. The frame is `field._batch_common`'s: the
  journal's ``started(i)`` right before the handler, ``committed`` in model order; a call's
  outcome is known early when ``RunHooks.on_tool_end`` reports its final result.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, RunConfig, RunContextWrapper, RunHooks, Runner
from agents.items import ToolCallOutputItem
from agents.result import RunResult
from agents.run_config import ToolExecutionConfig
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool import FunctionTool, Tool, with_function_tool_failure_error_handler
from agents.tool_context import ToolContext
from agents.tool_guardrails import (
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)

from field._batch_common import BatchFieldExecutor, Call, index_of
from field._common import NO_TOOL_CALL, executed, handler_of, not_executed, plain_json, thaw
from polyloop import (
    Action,
    ActionOutcome,
    Decision,
    ToolCall,
    ToolHandler,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)
from polyloop.policy import Decider, PostProcessor

AGENT_NAME = "polyloop-field"
DENIED = "Tool call denied:"
DENIED_BY_DEFAULT = "Tool call denied: no rule allows it."
FINAL_TEXT = "done"

Invoke = Callable[[str, ToolHandler, Any], Awaitable[Any]]
"""How a tool's code is entered: ``(call_id, handler, arguments)``."""
Known = Callable[[str, ActionOutcome], None]
"""Where a call's final outcome is reported as soon as the SDK has it."""


@dataclass
class _Pending:
    """One call in flight: the action's `ToolCall` and what each decider answered for it."""

    call: ToolCall
    answers: list[object] = field(default_factory=list)
    asked: tuple[str, ...] = ()
    started: bool = False


_RUN: contextvars.ContextVar[dict[str, _Pending] | None] = contextvars.ContextVar(
    "agents_policy_run", default=None
)
"""The calls of the run in progress, by call id: every task the Runner starts copies it."""


def _pending(call_id: str) -> _Pending:
    calls = _RUN.get()
    assert calls is not None and call_id in calls, f"no call {call_id} in this run"
    return calls[call_id]


def _ignore(tool: FunctionTool, error: Exception, input_json: str) -> None:
    """The SDK's hook for a handled tool error (it logs there); nothing to do here."""


def _text(output: object) -> str:
    return output if isinstance(output, str) else str(output)


def _call_id_of(item: Any) -> str:
    raw = item.raw_item
    identifier = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    return str(identifier)


class _Signals(RunHooks[Any]):
    """The SDK's own per-call signals: ``on_tool_start`` (the tool is about to be invoked)
    and ``on_tool_end`` (its final result, after the output guardrails)."""

    def __init__(self, known: Known | None) -> None:
        self._known = known

    async def on_tool_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool
    ) -> None:
        if isinstance(context, ToolContext):
            _pending(context.tool_call_id).started = True

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: Any
    ) -> None:
        if self._known is not None and isinstance(context, ToolContext):
            self._known(context.tool_call_id, executed(_text(result)))


class _PolicyAgent:
    """One ``Agent`` whose function tools carry the policy's mapping, and one run per turn."""

    def __init__(
        self,
        registry: ToolRegistry,
        policy: ToolPolicy,
        *,
        invoke: Invoke,
        known: Known | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self._policy = policy
        self._invoke = invoke
        self._hooks = _Signals(known)
        self._agent: Agent[Any] = Agent(
            name=AGENT_NAME, tools=[self._function_tool(spec) for spec in registry.specs]
        )
        self._execution = ToolExecutionConfig(
            max_function_tool_concurrency=max_concurrency,
            pre_approval_tool_input_guardrails=True,
        )

    # -- the SDK's hooks ----------------------------------------------------------------------

    def _function_tool(self, spec: ToolSpec) -> FunctionTool:
        handler = handler_of(spec)

        async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
            return await self._invoke(ctx.tool_call_id, handler, json.loads(input_json))

        policy = self._policy
        gates = [self._input_guardrail(i) for i in range(len(policy.deciders))]
        if policy.default is Decision.DENY:
            gates.append(ToolInputGuardrail(guardrail_function=_default_gate, name="default"))
        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=thaw(spec.parameters),
            on_invoke_tool=with_function_tool_failure_error_handler(on_invoke_tool, _ignore),
            strict_json_schema=False,
            needs_approval=self._needs_approval,
            tool_input_guardrails=gates,
            tool_output_guardrails=[
                _output_guardrail(i, post) for i, post in enumerate(policy.post)
            ],
        )

    async def _needs_approval(
        self, context: RunContextWrapper[Any], params: dict[str, Any], call_id: str
    ) -> bool:
        pending = _pending(call_id)
        pending.answers = []
        deciders: tuple[Decider, ...] = self._policy.deciders
        for decider in deciders:
            pending.answers.append(await decider(pending.call))
        pending.asked = tuple(
            answer.reason
            for answer in pending.answers
            if isinstance(answer, Verdict) and answer.decision is Decision.ASK
        )
        abstained = all(answer is None for answer in pending.answers)
        return bool(pending.asked) or (abstained and self._policy.default is Decision.ASK)

    @staticmethod
    def _input_guardrail(position: int) -> ToolInputGuardrail[Any]:
        async def decider_gate(data: ToolInputGuardrailData) -> Any:
            answer = _pending(data.context.tool_call_id).answers[position]
            if isinstance(answer, Verdict) and answer.decision is Decision.DENY:
                return ToolGuardrailFunctionOutput.reject_content(f"{DENIED} {answer.reason}")
            if answer is None or isinstance(answer, Verdict):
                return ToolGuardrailFunctionOutput.allow()
            return answer  # a garbage answer reaches the SDK as the decider gave it

        return ToolInputGuardrail(guardrail_function=decider_gate, name=f"decider-{position}")

    # -- one run per turn ---------------------------------------------------------------------

    async def run_turn(self, turn: Sequence[tuple[str, ToolCall, str]]) -> dict[str, ActionOutcome]:
        """Run one model turn holding `turn`'s calls ``(call_id, call, arguments_json)``,
        answering its approval interruptions; each call's outcome by call id."""
        calls = {call_id: _Pending(call) for call_id, call, _ in turn}
        token = _RUN.set(calls)
        try:
            result = await self._run(turn)
        finally:
            _RUN.reset(token)
        outputs = {
            _call_id_of(item): item.output
            for item in result.new_items
            if isinstance(item, ToolCallOutputItem)
        }
        return {
            call_id: (executed if pending.started else not_executed)(_text(outputs.get(call_id)))
            for call_id, pending in calls.items()
        }

    async def _run(self, turn: Sequence[tuple[str, ToolCall, str]]) -> RunResult:
        model = ScriptedModel(
            [
                [function_call(call.name, text, call_id=call_id) for call_id, call, text in turn],
                [assistant_message(FINAL_TEXT)],
            ]
        )
        config = RunConfig(model=model, tracing_disabled=True, tool_execution=self._execution)
        result = await Runner.run(
            self._agent, "Run the tools.", run_config=config, hooks=self._hooks
        )
        while result.interruptions:
            state = result.to_state()
            for item in result.interruptions:
                pending = _pending(_call_id_of(item))
                approver = self._policy.approver
                granted = approver is not None and await approver(pending.call, pending.asked)
                if granted is True:
                    state.approve(item)
                else:
                    state.reject(item)
            result = await Runner.run(self._agent, state, run_config=config, hooks=self._hooks)
        return result


async def _default_gate(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    if all(answer is None for answer in _pending(data.context.tool_call_id).answers):
        return ToolGuardrailFunctionOutput.reject_content(DENIED_BY_DEFAULT)
    return ToolGuardrailFunctionOutput.allow()


def _output_guardrail(position: int, post: PostProcessor) -> ToolOutputGuardrail[Any]:
    async def post_gate(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        call = _pending(data.context.tool_call_id).call
        return ToolGuardrailFunctionOutput.reject_content(await post(call, data.output))

    return ToolOutputGuardrail(guardrail_function=post_gate, name=f"post-{position}")


def _json_text(call: ToolCall) -> str | None:
    try:
        return json.dumps(plain_json(call.arguments))
    except Exception:  # a model's call is JSON text; json.dumps cannot make this one
        return None


async def _enter(call_id: str, handler: ToolHandler, arguments: Any) -> Any:
    return await handler(arguments)


class AgentsPolicyExecutor:
    """The registry's tools as openai-agents `FunctionTool`s under the SDK's approval and
    guardrails, each call one ``Runner.run`` of a scripted model."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy) -> None:
        self._registry = registry
        self._serial = 0
        self._runtime = _PolicyAgent(registry, policy, invoke=_enter)

    def parameters(self) -> dict[str, str]:
        return {"tools": ",".join(self._registry.names())}

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return not_executed(NO_TOOL_CALL)
        text = _json_text(call)
        if text is None:
            return not_executed(f"the arguments of {call.name} are not JSON data")
        self._serial += 1
        call_id = f"call_{self._serial}"
        outcomes = await self._runtime.run_turn([(call_id, call, text)])
        return outcomes[call_id]


class AgentsPolicyBatchExecutor(BatchFieldExecutor):
    """The same tools and policy, a batch run as one model turn by the SDK's Runner."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int, policy: ToolPolicy) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._runtime = _PolicyAgent(
            registry,
            policy,
            invoke=self._enter,
            known=self._known,
            max_concurrency=max_concurrency,
        )
        self._actions: contextvars.ContextVar[Sequence[Action]] = contextvars.ContextVar(
            "agents_policy_batch"
        )

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        token = self._actions.set(tuple(actions))
        try:
            return await super().execute_batch(actions, journal)
        finally:
            self._actions.reset(token)

    def pre_resolve(self, call: Call) -> ActionOutcome | None:
        tool_call = self._actions.get()[call.index].tool_call
        assert tool_call is not None
        if _json_text(tool_call) is None:
            return not_executed(f"the arguments of {call.name} are not JSON data")
        return None

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        actions = self._actions.get()
        turn = []
        for call in calls:
            tool_call = actions[call.index].tool_call
            assert tool_call is not None
            turn.append((call.id, tool_call, json.dumps(call.arguments)))
        outcomes = await self._runtime.run_turn(turn)
        return {index_of(call_id): outcome for call_id, outcome in outcomes.items()}

    async def _enter(self, call_id: str, handler: ToolHandler, arguments: Any) -> Any:
        return await self.enter(index_of(call_id), handler, arguments)

    def _known(self, call_id: str, outcome: ActionOutcome) -> None:
        self.known(index_of(call_id), outcome)


def factory(registry: ToolRegistry, policy: ToolPolicy) -> AgentsPolicyExecutor:
    """The kit's policy target: the registry's tools under `policy`, run by the SDK's Runner."""
    return AgentsPolicyExecutor(registry, policy)


def batch_factory(
    registry: ToolRegistry, max_concurrency: int, policy: ToolPolicy
) -> AgentsPolicyBatchExecutor:
    """The kit's batch policy target: a batch is one model turn, at most `max_concurrency`
    calls at a time (``ToolExecutionConfig.max_function_tool_concurrency``)."""
    return AgentsPolicyBatchExecutor(registry, max_concurrency=max_concurrency, policy=policy)
