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

from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool, ToolException

from field._common import FieldExecutor, executed, handler_of, not_executed, thaw, unknown_tool
from polyloop import ActionOutcome, ToolRegistry, ToolSpec


def _structured_tool(spec: ToolSpec, *, handle_errors: bool) -> StructuredTool:
    handler = handler_of(spec)

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
        args_schema=thaw(spec.parameters),
        coroutine=coroutine,
        handle_tool_error=handle_errors,
    )


class LangChainExecutor(FieldExecutor):
    """The registry's tools as LangChain `StructuredTool`s, ``handle_tool_error`` off."""

    handle_errors = False

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._tools = {
            spec.name: _structured_tool(spec, handle_errors=self.handle_errors)
            for spec in registry.specs
        }

    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        tool = self._tools.get(name)
        if tool is None:
            return not_executed(unknown_tool(name, self._registry))
        message = await tool.ainvoke(
            {"type": "tool_call", "name": name, "args": arguments, "id": self.next_call_id()}
        )
        if isinstance(message, ToolMessage):
            return executed(str(message.text))
        return executed(message if isinstance(message, str) else str(message))


class LangChainHandledErrorsExecutor(LangChainExecutor):
    """The same, with ``handle_tool_error=True`` and handler errors raised as `ToolException`."""

    handle_errors = True
