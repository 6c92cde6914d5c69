"""An `ActionExecutor` over the MCP Python SDK: a low-level `Server`, a `ClientSession` in memory.

The server lists one MCP tool per `ToolSpec` (name, description, the spec's JSON Schema as
``inputSchema``) and its ``tools/call`` handler runs the spec's handler. The executor reaches it
the way an MCP host does: `mcp.Client(server)` (the SDK's in-memory transport, a real
`ClientSession` speaking JSON-RPC over memory streams), then ``session.call_tool``.

Mapping decisions (each is what an integrator following the MCP SDK would do):

- Server side, mirroring what the SDK's own high-level `MCPServer._handle_call_tool`
  (``mcp/server/mcpserver/server.py``) does for its tools:

  - an unknown tool name raises ``MCPError(INVALID_PARAMS)``: the `CallToolResult` docstring
    (``mcp_types/_types.py``) says errors in *finding* the tool are protocol errors;
  - the arguments are validated against the tool's ``inputSchema`` with `jsonschema` (which the
    SDK itself uses for output schemas, ``ClientSession._output_schema_validator``). The 2.x
    low-level `Server` no longer validates (1.x's ``@server.call_tool(validate_input=True)`` did);
    like 1.x, a violation comes back as an ``isError`` result ``Input validation error: ...``,
    which the spec asks for so the model can correct itself;
  - any `Exception` from the handler, or from turning its result into ``TextContent``, comes
    back as ``CallToolResult(is_error=True, content=[TextContent(text=str(exc))])``, exactly
    as `MCPServer` returns it. A handler's return value goes into ``TextContent(text=...)``
    unconverted: pydantic decides what is text.

- Client side: a `CallToolResult` is EXECUTED whether or not ``isError`` is set (the model reads
  the error text; that is the point of ``isError``), with the text blocks joined by newlines;
  an `MCPError` (a JSON-RPC error: unknown tool, malformed params, a server-side crash) is
  NOT_EXECUTED with the error's message, and so is a pydantic `ValidationError` the client
  raises before sending (arguments that are not a dict). Nothing the client sees
  distinguishes a broken environment, so this adapter never reports ENV_ERROR.

- The transport is the SDK's in-memory stream pair (`mcp.shared.memory.
  create_client_server_memory_streams`): the server's ``run`` loop and a `ClientSession`
  exchange real JSON-RPC messages, as over stdio. (`mcp.Client(server)` would instead use a
  direct in-process dispatcher that skips serialisation and raises a server's `MCPError` out
  of the client's task group as an `ExceptionGroup`.)
- The connection (initialize handshake included) is opened per `execute` call: anyio ties a
  session to the task that entered it. A host would keep one session open; it would then be
  bound to the event loop of the first call, which the kit does not promise to keep.
"""

from __future__ import annotations

from typing import Any

import anyio
import jsonschema
import jsonschema.validators
import mcp_types as types
from mcp import ClientSession
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from pydantic import ValidationError

from field._common import FieldExecutor, executed, not_executed, thaw
from polyloop import ActionOutcome, ToolRegistry, ToolSpec


def _build_server(registry: ToolRegistry) -> Server[Any]:
    specs: dict[str, ToolSpec] = {spec.name: spec for spec in registry.specs}
    tools = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=thaw(spec.parameters),
        )
        for spec in specs.values()
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = specs.get(params.name)
        if spec is None or spec.handler is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = params.arguments or {}
        schema = thaw(spec.parameters)
        validator_cls = jsonschema.validators.validator_for(schema)
        error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(arguments))
        if error is not None:
            text = f"Input validation error: {error.message}"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)],
                is_error=True,
            )
        try:
            result = await spec.handler(arguments)
            return types.CallToolResult(content=[types.TextContent(type="text", text=result)])
        except Exception as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )

    return Server("polyloop-field", on_list_tools=list_tools, on_call_tool=call_tool)


def _text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


class McpExecutor(FieldExecutor):
    """The registry's tools served by an MCP low-level `Server`, called through a
    `ClientSession` over the SDK's in-memory transport."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._server = _build_server(registry)

    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        result = await self._call(name, arguments)
        if isinstance(result, MCPError):
            return not_executed(result.message)
        if isinstance(result, ValidationError):
            # The client's own request model (`CallToolRequestParams.arguments: dict | None`)
            # refused the call, so it was never sent.
            return not_executed(
                f"the MCP client did not send the call: {result.error_count()} validation "
                f"error(s) for {result.title}"
            )
        return executed(_text(result))

    async def _call(
        self, name: str, arguments: Any
    ) -> types.CallToolResult | MCPError | ValidationError:
        # An exception raised inside `ClientSession`'s context leaves it wrapped in an
        # ExceptionGroup (the session's anyio task group), so the protocol error is caught
        # where it is raised and handed out as a value.
        server = self._server
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as group,
        ):
            group.start_soon(server.run, *server_streams, server.create_initialization_options())
            try:
                async with ClientSession(*client_streams) as session:
                    await session.initialize()
                    try:
                        return await session.call_tool(name, arguments)
                    except (MCPError, ValidationError) as exc:
                        return exc
            finally:
                group.cancel_scope.cancel()
