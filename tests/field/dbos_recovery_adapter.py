"""A recovery target over pydantic-ai's durable execution on DBOS (contract section 12).

``factory(registry, directory)`` builds what a pydantic-ai user on DBOS writes: an `Agent` with
the registry's tools as plain function tools (``Tool.from_schema``, as in
`field.pydantic_ai_batch_adapter`), wrapped in a ``DBOSAgent`` (``pydantic_ai.durable_exec.dbos``),
with DBOS configured on a SQLite system database in the target's directory
(``system_database_url="sqlite:///<directory>/dbos.sqlite"``). ``run(batch_id, actions)`` is
one process lifetime of that application:

1. ``DBOS.launch()``: DBOS recovers the workflows this executor left PENDING (a crash), in a
   background thread (``dbos/_recovery.py startup_recovery_thread``, which re-enqueues each one
   on DBOS's internal queue; the queue runner executes it from its recorded inputs).
2. ``with SetWorkflowID(batch_id): await agent.run(prompt)``: the workflow ``field.run`` with
   the batch id as its workflow id, DBOS's idempotency key. The first lifetime creates and runs
   it. A later one finds the row (``dbos/_sys_db.py SystemDatabase._insert_workflow_status``:
   an existing row is returned unchanged, ``should_execute`` False) and waits for the result
   of the workflow that recovery is running, or returns the recorded result of one that ended.
   So a resume is DBOS's own crash recovery, and the second step is the documented way to get a
   workflow's result again by id; the adapter never decides what re-runs.

The batch reaches the runtime as the run's user prompt (JSON, one entry per tool call, with its
position): DBOS records it as the workflow's input, and the scripted model
(`pydantic_ai.models.function.FunctionModel`) reads it and answers with one ``ToolCallPart`` per
call (ids ``call_<i>``), then with a text that ends the run. ``DBOSAgent`` wraps the model in
``DBOSModel``, so each model request is a DBOS step (``<name>__model.request``): a recovered
workflow replays the recorded response instead of asking the model again.

Mapping decisions:

- **Tools.** ``DBOSAgent`` wraps MCP toolsets in steps and leaves function tools alone
  (``dbosify_toolset`` in ``pydantic_ai/durable_exec/dbos/_agent.py``): a tool function runs
  as workflow code, so recovery re-executes it with the rest of the workflow. In the ``steps``
  configuration (`steps_factory`) each tool function instead awaits one ``@DBOS.step``
  (``tool.call``, see `_step`) that runs the handler, what DBOS's docs tell a user to do for a
  side effect: a step whose output was recorded is not run again on recovery.
- **Classification.** ``concurrency_safe=True`` maps to ``sequential=False``, anything else to
  pydantic-ai's ``sequential=True`` barrier (as in the batch adapter); ``DBOSAgent``'s default
  ``parallel_execution_mode='parallel_ordered_events'`` is kept.
- **Outcomes.** The workflow's result is the `AgentRunResult`; its request after the batch
  holds one part per call: a ``ToolReturnPart`` is EXECUTED with ``model_response_str()``, a
  retry (unknown tool, or a ``ToolReturnPart`` with ``outcome="retried"``) NOT_EXECUTED with the
  text the model is shown. A code action never reaches the runtime (pydantic-ai has none): it is
  NOT_EXECUTED with `NO_TOOL_CALL`.
- **Exceptions.** Only ``ModelRetry``/``ToolFailed`` become tool results; any other exception
  from a tool (the kit's ``ToolEnvironmentError``) ends the agent run and the workflow, which
  DBOS records as ERROR; the adapter lets it propagate, on the first run and on every resume.
- **What DBOS has no place for.** No record is written before a plain tool runs, and a step's
  is written only after it returns (``dbos/_core.py`` records a step's output once the function
  ends), so nothing tells a resume that a call was in flight; workflow inputs are not compared
  on a second start with the same id; there is no per-call replay policy. The adapter does not
  emulate any of these (no J9 check, no NEVER handling): the kit sees DBOS's behaviour.
- **Attempts.** DBOS bounds a crash-looping workflow by ``max_recovery_attempts`` (default 100,
  ``dbos/_registrations.py DEFAULT_MAX_RECOVERY_ATTEMPTS``), which ``DBOSAgent`` does not expose;
  the target declares no ``max_attempts``, so the kit uses its default bound (3).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai._warnings import PydanticAIDeprecationWarning
from pydantic_ai.durable_exec.dbos import DBOSAgent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from field._common import NO_TOOL_CALL, executed, handler_of, not_executed, plain_json
from field._pydantic_ai_common import schema_tool
from polyloop import Action, ActionOutcome, ToolRegistry, ToolSpec

__all__ = ["DbosRecoveryRuntime", "factory", "steps_factory"]

NAME = "field"
"""The agent's name: DBOS's workflow is ``field.run``, the model step ``field__model.request``."""

RETRIES = 1_000_000
"""Per-tool retry budget: large enough that no batch exhausts it."""

_PREFIX = "call_"


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted model: the batch in the user prompt first, then a text that ends the run."""
    if len(messages) > 1:
        return ModelResponse(parts=[TextPart("done")])
    prompt = next(
        part.content
        for part in messages[0].parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    )
    return ModelResponse(
        parts=[
            ToolCallPart(tool_name=call["name"], args=call["arguments"], tool_call_id=call["id"])
            for call in json.loads(prompt)
        ]
    )


def _prompt(actions: Sequence[Action]) -> str:
    """The batch as the run's user prompt: every tool call with its position as its id."""
    calls = [
        {
            "id": f"{_PREFIX}{index}",
            "name": action.tool_call.name,
            "arguments": plain_json(action.tool_call.arguments),
        }
        for index, action in enumerate(actions)
        if action.tool_call is not None
    ]
    return json.dumps(calls)


def _step(registry: ToolRegistry) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    """One DBOS step, ``tool.call``, that runs the named tool's handler (the ``steps``
    configuration). One step for every tool, as pydantic-ai names its own tool-call steps
    (``DBOSDurability``: "every tool in a toolset shares one step"): DBOS hashes every
    registered step's source into the application version (``dbos/_dbos.py``
    ``DBOSRegistry.compute_app_version``), so a step per tool would give a registry without
    one of the tools another version, whose ``DBOS.launch()`` does not recover the workflow."""
    handlers = {spec.name: handler_of(spec) for spec in registry.specs}

    @DBOS.step(name="tool.call")
    async def step(name: str, arguments: dict[str, Any]) -> Any:
        return await handlers[name](arguments)

    return step


def _tool(
    spec: ToolSpec, step: Callable[[str, dict[str, Any]], Awaitable[Any]] | None
) -> Tool[None]:
    handler = handler_of(spec)

    async def function(ctx: RunContext[None], **kwargs: Any) -> Any:
        if step is not None:
            return await step(spec.name, kwargs)
        return await handler(kwargs)

    return schema_tool(spec, function)


class DbosRecoveryRuntime:
    """One process lifetime of a pydantic-ai application on DBOS (module docstring)."""

    def __init__(self, registry: ToolRegistry, directory: str, *, steps: bool = False) -> None:
        database = os.path.join(directory, "dbos.sqlite")
        config: DBOSConfig = {
            "name": "polyloop-field",
            "system_database_url": f"sqlite:///{database}",
            "log_level": "WARNING",
        }
        DBOS(config=config)
        step = _step(registry) if steps else None
        agent: Agent[None, str] = Agent(
            FunctionModel(_respond),
            name=NAME,
            tools=[_tool(spec, step) for spec in registry.specs],
            retries=RETRIES,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticAIDeprecationWarning)
            self._agent = DBOSAgent(agent)

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        DBOS.launch()
        try:
            with SetWorkflowID(batch_id):
                result = await self._agent.run(_prompt(actions))
        finally:
            DBOS.destroy()
        return _outcomes(result.all_messages(), actions)


def _outcomes(messages: list[ModelMessage], actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
    """The tool results of the request that follows the batch, by position."""
    found: dict[int, ActionOutcome] = {}
    request = next(
        (m for n, m in enumerate(messages) if n > 0 and isinstance(m, ModelRequest)), None
    )
    for part in request.parts if request is not None else ():
        if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id:
            index = int(part.tool_call_id[len(_PREFIX) :])
            if isinstance(part, RetryPromptPart):
                found[index] = not_executed(part.model_response())
            elif part.outcome == "retried":
                found[index] = not_executed(part.model_response_str())
            else:
                found[index] = executed(part.model_response_str())
    outcomes = []
    for index, action in enumerate(actions):
        if action.tool_call is None:
            outcomes.append(not_executed(NO_TOOL_CALL))
        elif index in found:
            outcomes.append(found[index])
    return tuple(outcomes)


def factory(registry: ToolRegistry, directory: str) -> DbosRecoveryRuntime:
    """Plain function tools: they run as workflow code (pydantic-ai's default on DBOS)."""
    return DbosRecoveryRuntime(registry, directory)


def steps_factory(registry: ToolRegistry, directory: str) -> DbosRecoveryRuntime:
    """Every tool's handler a ``@DBOS.step``: recovery replays a step whose output is recorded."""
    return DbosRecoveryRuntime(registry, directory, steps=True)
