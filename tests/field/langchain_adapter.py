"""`ActionExecutor`s over langchain-core: one `StructuredTool` per spec, run by ``ainvoke``.

Each spec becomes ``StructuredTool(name, description, args_schema=<the spec's JSON Schema
dict>, coroutine=...)``; the coroutine takes the arguments as keyword arguments (that is how
`BaseTool` calls it) and awaits the spec's handler with them as one dict. The executor invokes
the tool the way a chat model's tool call reaches it in LangChain: ``tool.ainvoke({"type":
"tool_call", "name": ..., "args": ..., "id": ...})``, which returns a `ToolMessage`.

Mapping decisions:

- An unknown tool name is NOT_EXECUTED with this adapter's own message (langchain-core has no
  dispatcher by name; an agent framework on top of it looks the name up in its tool list).
- With a JSON-Schema dict as ``args_schema`` LangChain validates nothing:
  ``BaseTool._parse_input`` (``langchain_core/tools/base.py``) returns a dict input unchanged
  (``if isinstance(input_args, dict): return tool_input``), and ``_to_args_and_kwargs`` spreads
  it into keyword arguments; ``BaseTool.arun`` removes or injects ``run_manager``/``config``
  keys on the way.
- A returned `ToolMessage` is EXECUTED with its ``.text``. Non-str handler results have been
  stringified by ``_format_output`` already (``_stringify``: ``json.dumps`` first, so ``None``
  becomes ``"null"``; a list of str is message content, so its items are joined).
- `LangChainExecutor` (``handle_tool_error`` off, LangChain's default): every exception the
  handler raises is re-raised by ``BaseTool.arun`` (``raise error_to_raise``), and this
  executor lets it propagate, as a LangChain agent without error handling does: the run fails.
- `LangChainHandledErrorsExecutor` (``handle_tool_error=True``): LangChain only handles
  `ToolException` (``except ToolException`` in ``arun``), so the coroutine follows LangChain's
  convention for tools wrapping other code and re-raises any `Exception` of the handler as
  ``ToolException(str(exc))``; ``_handle_tool_error`` then makes ``e.args[0]`` the content of
  a ``ToolMessage(status="error")``, which is EXECUTED like any other message.
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, ToolException

from field._common import (
    NO_TOOL_CALL,
    executed,
    not_executed,
    plain_json,
    tool_parameters,
    unknown_tool,
)
from polyloop import Action, ActionOutcome, ToolRegistry, ToolSpec


def _structured_tool(spec: ToolSpec, *, handle_errors: bool) -> StructuredTool:
    handler = spec.handler
    assert handler is not None

    async def coroutine(**kwargs: Any) -> Any:
        if not handle_errors:
            return await handler(kwargs)
        try:
            return await handler(kwargs)
        except Exception as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=plain_json(spec.parameters),
        coroutine=coroutine,
        handle_tool_error=handle_errors,
    )


class LangChainExecutor:
    """The registry's tools as LangChain `StructuredTool`s, ``handle_tool_error`` off."""

    handle_errors = False

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._tools = {
            spec.name: _structured_tool(spec, handle_errors=self.handle_errors)
            for spec in registry.specs
        }
        self._call_ids = itertools.count(1)

    def parameters(self) -> dict[str, str]:
        return tool_parameters(self._registry)

    async def execute(self, action: Action) -> ActionOutcome:
        call = action.tool_call
        if call is None:
            return not_executed(NO_TOOL_CALL)
        tool = self._tools.get(call.name)
        if tool is None:
            return not_executed(unknown_tool(call.name, self._registry))
        message = await tool.ainvoke(
            {
                "type": "tool_call",
                "name": call.name,
                "args": plain_json(call.arguments),
                "id": f"call_{next(self._call_ids)}",
            }
        )
        if isinstance(message, ToolMessage):
            return executed(str(message.text))
        return executed(message if isinstance(message, str) else str(message))


class LangChainHandledErrorsExecutor(LangChainExecutor):
    """The same, with ``handle_tool_error=True`` and handler errors raised as `ToolException`."""

    handle_errors = True
