"""A downstream project's contract tests, as a tool author writes them.

The plugin tests copy this file into an empty directory and run pytest there, so nothing but
the installed polyloop[conformance] is available to it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance import ExecutorContract
from conformance.toolcheck import ToolContract, tool_property
from polyloop import RegistryExecutor, ReplayPolicy, ToolRegistry, ToolSpec

QUERY = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


async def search(arguments: dict[str, Any]) -> str:
    return f"results for {arguments['q']!r}"


async def broken(arguments: dict[str, Any]) -> str:
    return None  # type: ignore[return-value]  # the bug H4 must find


class TestGoodTools(ToolContract):
    replay = True
    examples = 5

    def make_registry(self) -> ToolRegistry:
        return ToolRegistry(
            [
                ToolSpec(
                    name="search",
                    description="Search.",
                    parameters=QUERY,
                    replay_policy=ReplayPolicy.SAFE,
                    handler=search,
                )
            ]
        )


class TestBrokenTools(ToolContract):
    examples = 5
    tools: ClassVar[list[object]] = [
        ToolSpec(name="broken", description="Broken.", parameters=QUERY, handler=broken),
        {"name": "bfcl_like", "description": "d", "parameters": {"type": "dict"}},
    ]


# A standalone Hypothesis test (also a HypoFuzz target): H4 for one tool.
test_search_H4 = tool_property(
    ToolSpec(name="search", description="Search.", parameters=QUERY, handler=search)
)


class TestPolyloopExecutor(ExecutorContract):
    make_executor = staticmethod(RegistryExecutor)
    seed = 0  # the plugin tests check the xdist mechanics, so the scenarios stay fixed
