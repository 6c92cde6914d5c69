"""openai-agents, pydantic-ai and LangGraph running one model turn of N tool calls through their
own runners.

Each runner is driven end to end with its own scripted test model: turn one asks for N calls to a
trivial tool, turn two ends the run. The per-call cost of the runtime's parallel tool execution is
the marginal one, (T(N_big) - T(N_small)) / (N_big - N_small), so the runner's fixed per-run cost
cancels out. Imported only when the packages are installed (a separate venv: see bench/batch.py).
"""

from __future__ import annotations

import time
from typing import Any


async def openai_agents_run(count: int) -> float:
    """Seconds for one `Runner.run` whose first model turn holds `count` function calls."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing.model import ScriptedModel, assistant_message, function_call

    @function_tool
    async def search(query: str) -> str:
        """Search."""
        return "sunny"

    calls = [function_call("search", {"query": f"q{i}"}, call_id=f"c{i}") for i in range(count)]
    model = ScriptedModel([calls, [assistant_message("done")]])
    agent = Agent(name="bench", model=model, tools=[search])
    start = time.perf_counter()
    result = await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))
    elapsed = time.perf_counter() - start
    assert result.final_output == "done"
    return elapsed


async def pydantic_ai_run(count: int) -> float:
    """Seconds for one `Agent.run` whose first model response holds `count` tool calls."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("search", {"query": f"q{i}"}, tool_call_id=f"c{i}")
                    for i in range(count)
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond))

    @agent.tool_plain
    async def search(query: str) -> str:
        """Search."""
        return "sunny"

    start = time.perf_counter()
    result = await agent.run("go")
    elapsed = time.perf_counter() - start
    assert result.output == "done"
    return elapsed


async def langgraph_run(count: int) -> float:
    """Seconds for one graph step whose `ToolNode` gets an `AIMessage` with `count` tool calls
    (the tools node of a `StateGraph(MessagesState)`, as a prebuilt agent runs it)."""
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    @tool
    async def search(query: str) -> str:
        """Search."""
        return "sunny"

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([search]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()
    calls = [
        {"type": "tool_call", "name": "search", "args": {"query": f"q{i}"}, "id": f"c{i}"}
        for i in range(count)
    ]
    start = time.perf_counter()
    result = await app.ainvoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    elapsed = time.perf_counter() - start
    assert len(result["messages"]) == count + 1
    return elapsed
