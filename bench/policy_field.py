"""The policy of bench/policy.py in polyloop, openai-agents and pydantic-ai: per-call cost.

Run:  PYTHONPATH=.:tests python bench/policy_field.py [--rounds 7] [--calls 20000] [--runs 5]
(in an env with the runtimes pinned in tests/field/requirements.txt; a runtime that is not
installed is skipped with a note. Nothing here gates CI.)

The policy (bench/policy.py's FULL): three deciders that let the call through (deny `write`,
allow `search`, ask when `limit > 3`), an approver that approves, one pass-through wrapper and
one post-processor that redacts the word "secret". The tool returns "sunny" for the 3-argument
call ``{"query": "weather in Lisbon", "limit": 5, "exact": False}``, so the call is asked about
and approved each time, and the redaction runs but changes nothing.

What each path includes:

- polyloop: one ``RegistryExecutor.execute`` of the call with ``registry.executor(policy=FULL)``:
  argument validation, the three deciders, the approver, the wrapper, the handler, the
  post-processor and the outcome. No model, no history: polyloop has no runner.
- openai-agents (``Runner.run`` with its ``ScriptedModel``, tracing off): the function tool has
  ``tool_input_guardrails`` (deny `write` as ``reject_content``, allow `search`), ``needs_approval``
  as an async callable (``limit > 3``: the third decider), and a ``tool_output_guardrail`` that
  redacts (``reject_content`` with the redacted text, only if the word occurs). Asking
  interrupts the run: each call is approved with ``RunState.approve`` and the run resumed with
  ``Runner.run(agent, state)``, so every run is two ``Runner.run``s (no extra model turn: the
  resumed run executes the approved calls, then asks the model, which ends the run). There is
  no wrapper stage: the SDK has no per-call middleware around a tool (``RunHooks`` only listen),
  so none is added.
- pydantic-ai (``Agent.run`` on a ``FunctionModel``): three capabilities with
  ``before_tool_execute`` (deny `write` as ``ModelRetry``, allow `search`, raise
  ``ApprovalRequired`` when ``limit > 3`` unless ``ctx.tool_call_approved``), one with a
  pass-through ``wrap_tool_execute``, one with ``after_tool_execute`` that redacts, and
  ``HandleDeferredToolCalls`` whose handler approves every request inside the same run (no
  extra model turn; the approved call goes through the hooks again, as pydantic-ai resumes it).

Per-call cost of a runtime is marginal: each run's first model turn asks for N calls (all
approved), the second ends the run, and (T(N_big) - T(N_small)) / (N_big - N_small) leaves out
the runner's fixed cost per run (model turns, run setup), charging the runtime only for what
one more call in a turn costs: its part of the response, the approval, the hooks, the tool
execution and the tool result in the history. N is 2 and 10, turns of a realistic size: in
openai-agents each ``RunState.approve`` searches every pending approval and deep-copies each
item it compares (``_find_current_approval_item`` in ``agents/run_state.py``), so approving a
turn grows with the square of its calls, and a larger N would charge it more per call. A run of
one call is printed too: the whole cost of a turn when the model asks for one call at a time.
Times are CPU time of this process (every thread: a runtime that runs anything in a worker
thread is charged for it), in interleaved rounds with the median kept.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from policy import ARGUMENTS, FULL, PARAMETERS, handler

from polyloop import Action, ActionStatus, ToolCall, ToolRegistry, ToolSpec

CLOCK = time.process_time
SMALL, BIG = 2, 10
RunFn = Callable[[int], Awaitable[float]]


def _redact(text: str) -> str:
    return text.replace("secret", "[redacted]")


def _arguments(index: int) -> dict[str, Any]:
    return {**ARGUMENTS, "query": f"weather in Lisbon {index}"}


def agents_runner() -> RunFn:
    """One openai-agents run of `count` calls: interrupt, approve each, resume."""
    from agents import Agent, RunConfig, Runner, function_tool
    from agents.testing.model import ScriptedModel, assistant_message, function_call
    from agents.tool_guardrails import (
        ToolGuardrailFunctionOutput,
        tool_input_guardrail,
        tool_output_guardrail,
    )

    @tool_input_guardrail
    async def deny_writes(data: Any) -> ToolGuardrailFunctionOutput:
        if data.context.tool_name == "write":
            return ToolGuardrailFunctionOutput.reject_content("writes")
        return ToolGuardrailFunctionOutput.allow()

    @tool_input_guardrail
    async def allow_search(data: Any) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.allow()

    async def ask_large(context: Any, parameters: dict[str, Any], call_id: str) -> bool:
        return bool(parameters.get("limit", 0) > 3)

    @tool_output_guardrail
    async def redact(data: Any) -> ToolGuardrailFunctionOutput:
        output = data.output
        if isinstance(output, str) and "secret" in output:
            return ToolGuardrailFunctionOutput.reject_content(_redact(output))
        return ToolGuardrailFunctionOutput.allow()

    @function_tool(
        tool_input_guardrails=[deny_writes, allow_search],
        tool_output_guardrails=[redact],
        needs_approval=ask_large,
    )
    async def search(query: str, limit: int = 3, exact: bool = False) -> str:
        """Search."""
        return "sunny"

    config = RunConfig(tracing_disabled=True)

    async def run(count: int) -> float:
        calls = [function_call("search", _arguments(i), call_id=f"c{i}") for i in range(count)]
        agent = Agent(
            name="bench",
            model=ScriptedModel([calls, [assistant_message("done")]]),
            tools=[search],
        )
        start = CLOCK()
        result = await Runner.run(agent, "go", run_config=config)
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item)
        result = await Runner.run(agent, state, run_config=config)
        elapsed = CLOCK() - start
        assert result.final_output == "done"
        outputs = [getattr(item, "output", None) for item in result.new_items]
        assert outputs.count("sunny") == count, outputs
        return elapsed

    return run


def pydantic_ai_capabilities() -> list[Any]:
    """The policy as pydantic-ai capabilities, in the order the agent is given them."""
    from dataclasses import dataclass

    from pydantic_ai import ModelRetry, RunContext
    from pydantic_ai.capabilities import AbstractCapability, HandleDeferredToolCalls
    from pydantic_ai.exceptions import ApprovalRequired
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

    @dataclass
    class DenyWrites(AbstractCapability[None]):
        async def before_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any
        ) -> Any:
            if call.tool_name == "write":
                raise ModelRetry("writes")
            return args

    @dataclass
    class AllowSearch(AbstractCapability[None]):
        async def before_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any
        ) -> Any:
            return args

    @dataclass
    class AskLarge(AbstractCapability[None]):
        async def before_tool_execute(
            self, ctx: RunContext[None], *, call: Any, tool_def: Any, args: Any
        ) -> Any:
            if args.get("limit", 0) > 3 and not ctx.tool_call_approved:
                raise ApprovalRequired
            return args

    @dataclass
    class Tracing(AbstractCapability[None]):
        async def wrap_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, handler: Any
        ) -> Any:
            return await handler(args)

    @dataclass
    class Redact(AbstractCapability[None]):
        async def after_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, result: Any
        ) -> Any:
            return _redact(result) if isinstance(result, str) else result

    async def approve_all(ctx: Any, requests: DeferredToolRequests) -> DeferredToolResults:
        return requests.build_results(approve_all=True)

    return [
        DenyWrites(),
        AllowSearch(),
        AskLarge(),
        Tracing(),
        Redact(),
        HandleDeferredToolCalls(handler=approve_all),
    ]


def pydantic_ai_runner() -> RunFn:
    """One pydantic-ai run of `count` calls, approved inline by `HandleDeferredToolCalls`."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    capabilities = pydantic_ai_capabilities()

    async def run(count: int) -> float:
        parts = [ToolCallPart("search", _arguments(i), tool_call_id=f"c{i}") for i in range(count)]

        async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            if len(messages) == 1:
                return ModelResponse(parts=list(parts))
            return ModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(respond), capabilities=capabilities)

        @agent.tool_plain
        async def search(query: str, limit: int = 3, exact: bool = False) -> str:
            """Search."""
            return "sunny"

        start = CLOCK()
        result = await agent.run("go")
        elapsed = CLOCK() - start
        assert result.output == "done"
        returns = [
            part
            for message in result.all_messages()
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.content == "sunny"
        ]
        assert len(returns) == count, result.all_messages()
        return elapsed

    return run


RUNTIMES: dict[str, tuple[str, Callable[[], RunFn]]] = {
    "openai-agents": ("agents", agents_runner),
    "pydantic-ai": ("pydantic_ai", pydantic_ai_runner),
}


def polyloop_executor() -> Callable[[], Awaitable[Any]]:
    spec = ToolSpec(name="search", description="Search.", parameters=PARAMETERS, handler=handler)
    executor = ToolRegistry([spec]).executor(policy=FULL)
    action = Action(tool_call=ToolCall(name="search", arguments=ARGUMENTS))
    return lambda: executor.execute(action)


async def time_polyloop(execute: Callable[[], Awaitable[Any]], calls: int) -> float:
    start = CLOCK()
    for _ in range(calls):
        await execute()
    return (CLOCK() - start) / calls


async def time_runtime(run: RunFn, runs: int) -> tuple[float, float]:
    """(marginal cost of one more call in a turn, cost of a whole run of one call)."""
    small = [await run(SMALL) for _ in range(runs)]
    big = [await run(BIG) for _ in range(runs)]
    one = [await run(1) for _ in range(runs)]
    marginal = (statistics.median(big) - statistics.median(small)) / (BIG - SMALL)
    return marginal, statistics.median(one)


async def measure(rounds: int, calls: int, runs: int) -> dict[str, list[float]]:
    execute = polyloop_executor()
    outcome = await execute()
    assert outcome.status is ActionStatus.EXECUTED and outcome.observation == "sunny"
    runners: dict[str, RunFn] = {}
    for name, (module, factory) in RUNTIMES.items():
        if importlib.util.find_spec(module) is None:
            print(f"{name}: not installed, skipped")
            continue
        runners[name] = factory()
        await runners[name](2)  # warm up, and check it runs the calls
    samples: dict[str, list[float]] = {"polyloop": []}
    for name in runners:
        samples[name] = []
        samples[f"{name} one-call run"] = []
    for _ in range(rounds):
        samples["polyloop"].append(await time_polyloop(execute, calls))
        for name, run in runners.items():
            marginal, one = await time_runtime(run, runs)
            samples[name].append(marginal)
            samples[f"{name} one-call run"].append(one)
    return samples


def report(samples: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print("time per call (median of rounds):")
    for name, value in medians.items():
        print(f"  {name:34} {value * 1e6:10.1f} us")
    ours = medians["polyloop"]
    others = [name for name in medians if name != "polyloop" and "one-call" not in name]
    for name in others:
        print(f"  {name} / polyloop = {medians[name] / ours:7.1f}x")
    if others:
        fastest = min(others, key=medians.__getitem__)
        ratio = medians[fastest] / ours
        print(f"  polyloop is {ratio:.1f}x faster per call than {fastest} (goal >= 10x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median kept)")
    parser.add_argument("--calls", type=int, default=20_000, help="polyloop calls per round")
    parser.add_argument("--runs", type=int, default=5, help="runtime runs per size per round")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.calls < 1 or args.runs < 1:
        parser.error("--rounds, --calls and --runs must be >= 1")
    print(f"Python {sys.version.split()[0]}; {args.rounds} rounds; N = {SMALL} and {BIG} calls")
    report(asyncio.run(measure(args.rounds, args.calls, args.runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
