"""A `BatchExecutor` over openai-agents: one turn's function calls through
``agents.run_internal.tool_execution.execute_function_tool_calls``.

That function is what the Runner awaits for the function calls of one model response
(``_execute_tool_plan`` in ``agents/run_internal/tool_planning.py``): it builds a
``_FunctionToolBatchExecutor``, starts one asyncio task per call (at most
``RunConfig.tool_execution.max_function_tool_concurrency`` at a time, refilled in model order)
and returns one ``FunctionToolResult`` per call in model order. The adapter hands it the turn
as the Runner does: a ``ToolRunFunction(ResponseFunctionToolCall, FunctionTool)`` per call, the
agent's bindings, ``RunHooks()``, a ``RunContextWrapper`` and a ``RunConfig``.

Tools are built as in `field.agents_adapter` (``FunctionTool(params_json_schema=<the spec's
schema>, strict_json_schema=False)``, ``on_invoke_tool`` decoding the JSON text). Mapping
decisions:

- **Entered**: ``on_invoke_tool`` runs, i.e. the SDK's ``_invoke_function_tool_with_metadata``
  calls the tool's own code; it awaits the journal's ``started(i)`` and then the handler. The
  position comes from ``ToolContext.tool_call_id`` (``call_<i>``).
- **Classification**: the SDK has no per-tool or per-call exclusivity; every call of the turn
  is started up to the cap, whatever the spec's ``concurrency_safe`` says, so the classifier is
  never asked.
- **max_concurrency** maps to ``ToolExecutionConfig(max_function_tool_concurrency=N)``.
- **Outcomes**: a ``FunctionToolResult.output`` is EXECUTED, a str unchanged, anything else
  ``str(value)``; an exception of the tool has become the text of its failure policy
  (``default_tool_error_function``: "An error occurred while running the tool. Please try
  again.") inside the SDK, so nothing is ever ENV_ERROR. A propagated exception (a
  ``BaseException`` that is not an ``Exception``, or the ``UserError`` the SDK wraps other
  failures in) and a cancellation propagate.
- **The Runner's turn resolution first**: the calls go into a ``ModelResponse`` and through
  ``process_model_response`` (``agents/run_internal/turn_resolution.py``), as the Runner's
  ``get_single_step_result_from_response`` does before any tool runs; its ``functions`` are the
  ``ToolRunFunction`` runs handed to the batch. What happens to an unknown name is the run's
  ``RunConfig.tool_not_found_behavior``, so there are two factories, both certified:
  `AgentsBatchExecutor` sets ``"return_error_to_model"`` (the SDK answers the call alone with
  ``Tool '<name>' not found.``, built by the Runner's ``_build_tool_not_found_output_items``
  after the function calls ran: NOT_EXECUTED), and `AgentsDefaultBatchExecutor` keeps the
  Runner's default ``"raise_error"``: one unknown name raises ``ModelBehaviorError`` for the
  whole turn before any call runs, and the batch raises it.
- **Answered by the glue**: only arguments ``json.dumps`` cannot write (NOT_EXECUTED): a
  model's call is JSON text, and such a call cannot be put into a turn.
- **Recorded calls**: the turn's ``ResponseFunctionToolCall.arguments`` (JSON text), decoded.
- **Journal**: a call's outcome is known when the SDK hands its output item to the
  ``tool_output_committer`` callback (the Runner's hook for committing each tool output as it
  lands, ``_FunctionToolBatchExecutor._invoke_tool_and_run_post_invoke``); the frame commits
  each prefix in model order (`field._batch_common`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents import Agent, RunConfig, RunContextWrapper, RunHooks
from agents.items import ModelResponse, RunItem, ToolCallOutputItem
from agents.run_config import ToolExecutionConfig, ToolNotFoundBehavior
from agents.run_internal.agent_bindings import bind_public_agent
from agents.run_internal.tool_execution import execute_function_tool_calls
from agents.run_internal.turn_resolution import (
    _build_tool_not_found_output_items,
    process_model_response,
)
from agents.tool import FunctionTool, with_function_tool_failure_error_handler
from agents.tool_context import ToolContext
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall

from field._batch_common import BatchFieldExecutor, Call, index_of
from field._common import executed, handler_of, not_executed, thaw
from polyloop import ActionOutcome, ToolRegistry, ToolSpec

AGENT_NAME = "polyloop-field"


def _ignore(tool: FunctionTool, error: Exception, input_json: str) -> None:
    """The SDK's hook for a handled tool error (it logs there); nothing to do here."""


class AgentsBatchExecutor(BatchFieldExecutor):
    """The registry's tools as openai-agents `FunctionTool`s, a turn resolved by the Runner's
    ``process_model_response`` and run by the SDK's batch; an unknown name is answered to the
    model (``tool_not_found_behavior="return_error_to_model"``)."""

    TOOL_NOT_FOUND: ToolNotFoundBehavior = "return_error_to_model"

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        super().__init__(registry, max_concurrency=max_concurrency)
        self._tools = {spec.name: self._function_tool(spec) for spec in registry.specs}
        self._agent: Agent[Any] = Agent(name=AGENT_NAME, tools=list(self._tools.values()))
        self._config = RunConfig(
            tracing_disabled=True,
            tool_execution=ToolExecutionConfig(max_function_tool_concurrency=max_concurrency),
            tool_not_found_behavior=self.TOOL_NOT_FOUND,
        )

    def _function_tool(self, spec: ToolSpec) -> FunctionTool:
        handler = handler_of(spec)

        async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
            return await self.enter(index_of(ctx.tool_call_id), handler, json.loads(input_json))

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=thaw(spec.parameters),
            # The failure policy the SDK's own function tools get (`@function_tool` wraps its
            # invoker the same way): an Exception becomes the tool's failure text.
            on_invoke_tool=with_function_tool_failure_error_handler(on_invoke_tool, _ignore),
            strict_json_schema=False,
        )

    def pre_resolve(self, call: Call) -> ActionOutcome | None:
        try:
            json.dumps(call.arguments)
        except Exception:  # a model's call is JSON text; json.dumps cannot make this one
            return not_executed(f"the arguments of {call.name} are not JSON data")
        return None

    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        items = [
            ResponseFunctionToolCall(
                type="function_call",
                call_id=call.id,
                name=call.name,
                arguments=json.dumps(call.arguments),
            )
            for call in calls
        ]
        self.recorded = {index_of(item.call_id): item for item in items}
        response = ModelResponse(output=list(items), usage=Usage(), response_id=None)
        # The Runner's turn resolution: with "raise_error" an unknown name raises here.
        processed = process_model_response(
            agent=self._agent,
            all_tools=list(self._tools.values()),
            response=response,
            output_schema=None,
            handoffs=[],
            run_config=self._config,
        )
        context = RunContextWrapper(context=None)
        results, _, _ = await execute_function_tool_calls(
            bindings=bind_public_agent(self._agent),
            tool_runs=processed.functions,
            hooks=RunHooks(),
            context_wrapper=context,
            config=self._config,
            tool_output_committer=self._committed_by_sdk,
        )
        missing = await _build_tool_not_found_output_items(
            agent=self._agent,
            calls=processed.function_tools_not_found,
            context_wrapper=context,
            run_config=self._config,
        )
        outcomes = {
            index_of(run.tool_call.call_id): _outcome(result.output)
            for run, result in zip(processed.functions, results, strict=True)
        }
        for item in missing:
            assert isinstance(item, ToolCallOutputItem), item
            outcomes[index_of(_call_id(item))] = not_executed(str(item.output))
        return outcomes

    def recorded_arguments(self) -> list[Any]:
        """The record is each call's JSON text: decoded, it is what the model wrote."""
        return [json.loads(self.recorded[index].arguments) for index in sorted(self.recorded)]

    def _committed_by_sdk(self, item: RunItem) -> None:
        """The SDK's per-call signal: a call's output item, committed as it lands."""
        if isinstance(item, ToolCallOutputItem):
            self.known(index_of(_call_id(item)), _outcome(item.output))


class AgentsDefaultBatchExecutor(AgentsBatchExecutor):
    """`AgentsBatchExecutor` with the Runner's default ``tool_not_found_behavior="raise_error"``:
    one unknown name in a turn raises ``ModelBehaviorError`` before any of its calls runs."""

    TOOL_NOT_FOUND: ToolNotFoundBehavior = "raise_error"


def _call_id(item: ToolCallOutputItem) -> str:
    raw = item.raw_item
    identifier = raw.get("call_id") if isinstance(raw, dict) else raw.call_id
    return str(identifier)


def _outcome(output: Any) -> ActionOutcome:
    return executed(output if isinstance(output, str) else str(output))
