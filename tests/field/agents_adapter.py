"""An `ActionExecutor` over openai-agents: one `FunctionTool` per spec, run by
`agents.tool.invoke_function_tool`.

Each spec becomes ``FunctionTool(name, description, params_json_schema=<the spec's schema>,
on_invoke_tool=..., strict_json_schema=False)`` — the SDK's documented way to build a tool from
a JSON schema rather than a Python signature. Strict mode is off because the kit's schemas
(like most real ones) are not in OpenAI's strict subset; `FunctionTool.__post_init__` would
rewrite or reject them otherwise.

Mapping decisions:

- The call's arguments are sent as the JSON text a model would produce (``json.dumps``), and
  ``on_invoke_tool`` decodes them with ``json.loads`` and awaits the spec's handler with the
  result, as the SDK's custom-tool example does. The SDK validates nothing on this path
  (``invoke_function_tool`` → ``_invoke_function_tool_with_metadata`` in ``agents/tool.py``
  just awaits ``on_invoke_tool``); the schema only goes to the model.
- An unknown tool name is NOT_EXECUTED with the text of the Runner's ``ModelBehaviorError``
  (``Tool <name> not found in agent <agent>``, ``agents/run_internal/turn_resolution.py``).
- An `Exception` out of ``invoke_function_tool`` is turned into the model-visible text by the
  SDK's own failure policy for that tool, ``maybe_invoke_function_tool_failure_error_function``
  (for a plain `FunctionTool` that is ``default_tool_error_function``: a fixed "An error
  occurred while running the tool. Please try again."), and is EXECUTED, as in the Runner. So
  the exception's type and text never reach the model, and nothing is ever ENV_ERROR.
- A return value becomes the observation as the Runner sends it: a ``str`` unchanged, anything
  else ``str(value)`` (``ItemHelpers._convert_tool_output`` in ``agents/items.py``).
"""

from __future__ import annotations

import json
from typing import Any

from agents.tool import (
    FunctionTool,
    invoke_function_tool,
    maybe_invoke_function_tool_failure_error_function,
)
from agents.tool_context import ToolContext

from field._common import FieldExecutor, executed, handler_of, not_executed, thaw
from polyloop import ActionOutcome, ToolRegistry, ToolSpec

AGENT_NAME = "polyloop-field"


def _function_tool(spec: ToolSpec) -> FunctionTool:
    handler = handler_of(spec)

    async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
        return await handler(json.loads(input_json))

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=thaw(spec.parameters),
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=False,
    )


class AgentsExecutor(FieldExecutor):
    """The registry's tools as openai-agents `FunctionTool`s."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._tools = {spec.name: _function_tool(spec) for spec in registry.specs}

    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        tool = self._tools.get(name)
        if tool is None:
            return not_executed(f"Tool {name} not found in agent {AGENT_NAME}")
        try:
            arguments_json = json.dumps(arguments)
        except Exception:  # a model's call is JSON text; json.dumps cannot make this one
            # (it may even fail to name the type: a value's class can hide its __name__)
            return not_executed(f"the arguments of {name} are not JSON data")
        context: ToolContext[Any] = ToolContext(
            context=None,
            tool_name=tool.name,
            tool_call_id=self.next_call_id(),
            tool_arguments=arguments_json,
        )
        try:
            output = await invoke_function_tool(
                function_tool=tool, context=context, arguments=arguments_json
            )
        except Exception as exc:
            text = await maybe_invoke_function_tool_failure_error_function(
                function_tool=tool, context=context, error=exc
            )
            if text is None:
                raise
            return executed(text)
        return executed(output if isinstance(output, str) else str(output))
