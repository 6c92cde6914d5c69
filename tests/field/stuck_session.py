"""Reproduces kit defect 4 (issue 9): a black-box executor bound to the event loop it started on.

`EXECUTOR` keeps one MCP `ClientSession` open for all calls, as a host does: it is opened by the
first ``execute`` on whatever loop that runs, and served by a task on that loop. `REGISTRY`'s
one tool blocks its event loop for 8 s when called with ``{"q": ""}`` (a stuck call; the empty
string is what the kit draws first). When the kit gives up on that call it moves to a new event
loop, where the session can never answer. The kit used to charge every later clause that
reached the executor with "execute did not finish", however unrelated its counterexample; it
now says it switched loops and reports the later clauses as not run (error)::

    PYTHONPATH=tests polyloop-conformance certify field.stuck_session:EXECUTOR \\
        --registry field.stuck_session:REGISTRY --deadline 1 --only V2
    # V2 fail: actual NOT_EXECUTED, observation 'Unknown tool: read_file'  (its true reason)
    PYTHONPATH=tests polyloop-conformance certify field.stuck_session:EXECUTOR \\
        --registry field.stuck_session:REGISTRY --deadline 1 --only V1,V2,E1
    # V1 fail: {"q": ""} did not finish; note: ... moved to a new one; later clauses are not
    #   charged to this executor
    # V2 error, E1 error: not run: the executor has been stuck since V1

Not a test: the field matrix certifies the per-call `field.mcp_adapter.McpExecutor`, which
opens its session inside each call and so survives a loop switch.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.memory import create_client_server_memory_streams

from field._common import FieldExecutor, executed, not_executed
from field.mcp_adapter import _build_server, _text
from polyloop import ActionOutcome, ToolRegistry, ToolSpec


async def _lookup(arguments: Any) -> str:
    if arguments.get("q") == "":
        time.sleep(8)  # blocks the event loop: the kit cannot cancel this call
    return "ok"


REGISTRY = ToolRegistry(
    [
        ToolSpec(
            name="lookup",
            description="Look a word up.",
            parameters={"type": "object", "properties": {"q": {"type": "string"}}},
            handler=_lookup,
        )
    ]
)


class PersistentSessionMcp(FieldExecutor):
    """The MCP adapter with one long-lived session instead of one per call."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._server = _build_server(registry)
        self._session: ClientSession | None = None
        self._ready: asyncio.Event | None = None
        self._serving: asyncio.Task[None] | None = None

    async def _serve(self, ready: asyncio.Event) -> None:
        server = self._server
        async with (
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as group,
        ):
            group.start_soon(server.run, *server_streams, server.create_initialization_options())
            async with ClientSession(*client_streams) as session:
                await session.initialize()
                self._session = session
                ready.set()
                await anyio.sleep_forever()

    async def call_tool(self, name: str, arguments: Any) -> ActionOutcome:
        if self._ready is None:
            self._ready = asyncio.Event()
            self._serving = asyncio.get_running_loop().create_task(self._serve(self._ready))
        await self._ready.wait()
        assert self._session is not None
        try:
            result = await self._session.call_tool(name, arguments)
        except Exception as exc:
            return not_executed(str(exc))
        return executed(_text(result))


EXECUTOR = PersistentSessionMcp(REGISTRY)
