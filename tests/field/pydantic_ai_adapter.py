"""An `ActionExecutor` over pydantic-ai: ``Tool.from_schema`` tools run by
``ToolManager.handle_call``.

Each spec becomes ``Tool.from_schema(function, name, description, json_schema=<the spec's
schema>)`` in a `FunctionToolset`; the function takes the arguments as keywords (``from_schema``
calls it "with keywords only") and awaits the spec's handler with them as one dict. Per
`execute` the executor prepares a `ToolManager` for a run step (``ToolManager(toolset)
.for_run_step(ctx)``, as the agent graph does at each step, with a `RunContext` on pydantic-ai's
offline `TestModel`) and hands it a ``ToolCallPart`` through ``handle_call``, the path the agent
graph uses to validate and execute a model's tool call.

Mapping decisions:

- ``Tool.from_schema`` validates nothing: its `FunctionSchema` uses
  ``SchemaValidator(core_schema.any_schema())`` (``pydantic_ai/tools.py``); the JSON schema only
  goes to the model.
- A `ToolRetryError` (pydantic-ai's "tell the model to try again": an unknown tool name,
  arguments that are not a JSON object) happens before the tool runs, so it is NOT_EXECUTED,
  with the text pydantic-ai would show the model (``model_response_str`` of the retried
  `ToolReturnPart`, or ``model_response`` of a `RetryFeedbackPart`).
- A successful return becomes the observation pydantic-ai sends the model:
  ``ToolReturnPart(content=value).model_response_str()`` (``pydantic_ai/messages.py``): a str
  as-is, ``None`` as ``''``, anything else as JSON text.
- Any other exception raised by the handler propagates out of ``handle_call`` (the agent run
  fails; only `ModelRetry` is turned into a retry), and this executor lets it propagate.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ToolRetryError
from pydantic_ai.messages import ToolCallPart, ToolReturn, ToolReturnPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import RunUsage

from field._common import FieldExecutor, executed, handler_of, not_executed, thaw
from polyloop import ActionOutcome, ToolRegistry, ToolSpec


def _tool(spec: ToolSpec) -> Tool[None]:
    handler = handler_of(spec)

    async def function(**kwargs: Any) -> Any:
        return await handler(kwargs)

    return Tool.from_schema(
        function,
        name=spec.name,
        description=spec.description,
        json_schema=thaw(spec.parameters),
    )


class PydanticAiExecutor(FieldExecutor):
    """The registry's tools as pydantic-ai ``Tool.from_schema`` tools."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._toolset: FunctionToolset[None] = FunctionToolset(
            tools=[_tool(spec) for spec in registry.specs]
        )

    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        manager = await ToolManager[None](self._toolset).for_run_step(ctx)
        part = ToolCallPart(tool_name=name, args=arguments, tool_call_id=self.next_call_id())
        try:
            value = await manager.handle_call(part)
        except ToolRetryError as exc:
            retry = exc.tool_retry
            if isinstance(retry, ToolReturnPart):
                return not_executed(retry.model_response_str())
            return not_executed(retry.model_response())
        if isinstance(value, ToolReturn):
            value = value.return_value
        returned = ToolReturnPart(tool_name=name, content=value, tool_call_id=part.tool_call_id)
        return executed(returned.model_response_str())
