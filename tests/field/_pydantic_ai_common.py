"""What the pydantic-ai adapters share: a registry spec as pydantic-ai's JSON-Schema tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import Tool

from field._common import thaw
from polyloop import ToolSpec


def schema_tool(spec: ToolSpec, function: Callable[..., Any]) -> Tool[None]:
    """`spec` as ``Tool.from_schema`` over `function` (which takes the run context), the way an
    integrator hands pydantic-ai a tool it only has a JSON Schema for; a tool that is not
    concurrency-safe (or completes the run) is ``sequential``, pydantic-ai's exclusive call."""
    tool: Tool[None] = Tool.from_schema(
        function,
        name=spec.name,
        description=spec.description,
        json_schema=thaw(spec.parameters),
        takes_ctx=True,
        sequential=not (spec.concurrency_safe is True and not spec.completes_run),
    )
    return tool
