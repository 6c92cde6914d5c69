"""A recovery target (contract section 12) over openai-agents: `Runner.run` with a file-backed
``SQLiteSession``, resumed after a crash the way an integrator resumes a conversation.

``factory(registry, directory)`` builds an ``Agent`` whose tools are the registry's specs as
``FunctionTool``s (built as in `field.agents_batch_adapter`: ``params_json_schema=<the spec's
schema>``, ``strict_json_schema=False``, the SDK's own failure policy around ``on_invoke_tool``)
and whose model is the SDK's ``agents.testing.ScriptedModel`` (no network). ``run(batch_id,
actions)`` runs ``Runner.run(agent, input, session=SQLiteSession(batch_id,
f"{directory}/agents_session.db"), run_config=RunConfig(tracing_disabled=True,
tool_not_found_behavior="return_error_to_model"))``. The session is the only thing kept across
lifetimes, and it lives in ``directory``.

Mapping decisions:

- **The model.** One scripted response per model call, decided from the conversation the Runner
  hands it, as a model would: while the conversation holds no function call, it answers with
  one turn holding the batch's tool calls in model order (call *i* gets the call id
  ``call_<i>``); once the conversation holds function calls, it gives its final answer. So a
  resume whose history holds the answered turn asks for nothing again: the most favourable
  model the runtime can have.
- **First run and resume.** If the session holds no items, this is the batch's first run and
  the input is the user's request (``Run batch <id>.``). Otherwise it is what an integrator
  does after a crash: run the agent again on the same session with no new input
  (``input=[]``), so the model sees exactly what the session saved. The Runner saves a turn's
  items (the model's function calls and their outputs together) with one ``add_items`` after
  the turn's tools have all returned (``save_result_to_session`` in
  ``agents/run_internal/session_persistence.py``, awaited by ``agents/run.py``); before that,
  only the user's request is in the session. Nothing the SDK writes says a tool was started.
- **Outcomes.** Call *i*'s outcome is the last ``function_call_output`` for ``call_<i>``: from
  this run's new items if it produced one, else from the session's history. An output is
  EXECUTED with the text the Runner sent the model (a tool's exception has become the text of
  the SDK's failure policy, ``default_tool_error_function`` in ``agents/tool.py``, so nothing
  is ever ENV_ERROR). A call to a name the agent has no tool for gets the SDK's own
  ``Tool '<name>' not found.`` output without any handler running: NOT_EXECUTED with that text.
  A call for which neither the run nor the session holds an output (a tool call left without
  its output) is not invented: the run raises `UnansweredCall` naming it.
- **Answered by the glue.** A code action has no place in openai-agents: NOT_EXECUTED with
  `NO_TOOL_CALL`, never sent to the model (as `field._batch_common` does).
- **No journal of its own.** The glue checks nothing against the session: not whether the
  batch is the one the session recorded (J9), not whether its rows are intact (J10), not how
  often a call was entered (J13). What the runtime does there is what the kit sees.
- **No bound.** The runtime has no ``max_attempts``; the kit assumes 3.

``runstate_factory`` is the SDK's other resume path: a ``RunState`` snapshot
(``RunState.to_string`` / ``RunState.from_string`` in ``agents/run_state.py``, "the durable
pause/resume boundary for human-in-the-loop flows"). A run stops with a serializable state only
at an interruption, so every tool is built with ``needs_approval=True``; the first ``run`` runs
until the approval interruption (the model's one turn, no tool entered; a turn with no known
tool has nothing to approve and runs to its end), approves every call
(the kit's policy is not under test here), writes ``state.to_string()`` to
``{directory}/run_state_<32 hex digits of the batch id's sha256>.json`` (a temporary file,
fsync, rename, directory fsync) and
resumes with ``Runner.run(agent, state)``; when the run ends it writes ``result.to_state()``
there the same way. A later ``run`` loads that file with ``RunState.from_string`` and calls
``Runner.run(agent, state)``, whatever the snapshot holds (approved calls not yet answered, or a
finished run). No session: the snapshot is the journal, and the glue checks nothing against
it (J9, J10, J13 as above). Outcomes: call *i*'s last
``ToolCallOutputItem`` among the run's new items (the resumed run's new items include the
snapshot's), mapped as above.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from agents import Agent, RunConfig, Runner, RunState, SQLiteSession
from agents.items import ToolCallOutputItem, TResponseInputItem
from agents.result import RunResult
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tool import FunctionTool, with_function_tool_failure_error_handler
from agents.tool_context import ToolContext

from field._batch_common import call_id, index_of
from field._common import NO_TOOL_CALL, executed, handler_of, not_executed, plain_json, thaw
from polyloop import Action, ActionOutcome, ToolRegistry, ToolSpec

__all__ = [
    "AgentsRecoveryRuntime",
    "AgentsRunStateRuntime",
    "UnansweredCall",
    "factory",
    "runstate_factory",
]

AGENT_NAME = "polyloop-field"
SESSION_FILE = "agents_session.db"
FINAL_ANSWER = "Every call of the batch has its result."
CONFIG = RunConfig(tracing_disabled=True, tool_not_found_behavior="return_error_to_model")


class UnansweredCall(RuntimeError):
    """Neither the run nor the session holds an output for a call of the batch."""


def _ignore(tool: FunctionTool, error: Exception, input_json: str) -> None:
    """The SDK's hook for a handled tool error (it logs there); nothing to do here."""


def _function_tool(spec: ToolSpec, *, needs_approval: bool = False) -> FunctionTool:
    handler = handler_of(spec)

    async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> Any:
        return await handler(json.loads(input_json))

    return FunctionTool(
        name=spec.name,
        description=spec.description,
        params_json_schema=thaw(spec.parameters),
        on_invoke_tool=with_function_tool_failure_error_handler(on_invoke_tool, _ignore),
        strict_json_schema=False,
        needs_approval=needs_approval,
    )


class _Model:
    """The scripted model's one rule: the batch's calls until the conversation holds calls."""

    def __init__(self, calls: dict[int, tuple[str, Any]]) -> None:
        self._calls = calls

    def __call__(self, call: ModelCall) -> list[Any]:
        items = call.input if isinstance(call.input, list) else []
        if any(_kind(item) == "function_call" for item in items) or not self._calls:
            return [assistant_message(FINAL_ANSWER)]
        return [
            function_call(name, arguments, call_id=call_id(index))
            for index, (name, arguments) in self._calls.items()
        ]


def _kind(item: Any) -> Any:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


def _outputs(items: Iterable[TResponseInputItem]) -> dict[int, Any]:
    """Each call's last function_call_output among conversation items, by position."""
    found: dict[int, Any] = {}
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            identifier = str(item.get("call_id"))
            if identifier.startswith("call_"):
                found[index_of(identifier)] = item.get("output")
    return found


class _Runtime:
    """What both targets share: the agent, the scripted model, the outcomes."""

    needs_approval = False

    def __init__(self, registry: ToolRegistry, directory: str) -> None:
        self._tools = {
            spec.name: _function_tool(spec, needs_approval=self.needs_approval)
            for spec in registry.specs
        }
        self._directory = directory

    def _agent(self, actions: Sequence[Action]) -> Agent[Any]:
        calls = {
            index: (action.tool_call.name, plain_json(action.tool_call.arguments))
            for index, action in enumerate(actions)
            if action.tool_call is not None
        }
        return Agent(
            name=AGENT_NAME,
            tools=list(self._tools.values()),
            model=ScriptedModel([ModelStep.respond(_Model(calls)) for _ in range(2)]),
        )

    def _outcomes(
        self, actions: Sequence[Action], outputs: dict[int, Any]
    ) -> tuple[ActionOutcome, ...]:
        return tuple(self._outcome(index, action, outputs) for index, action in enumerate(actions))

    def _outcome(self, index: int, action: Action, outputs: dict[int, Any]) -> ActionOutcome:
        tool_call = action.tool_call
        if tool_call is None:
            return not_executed(NO_TOOL_CALL)
        if index not in outputs:
            raise UnansweredCall(
                f"call {index} ({tool_call.name}, {call_id(index)}) has no function_call_output "
                "in this run or in what the runtime kept"
            )
        output = outputs[index]
        text = output if isinstance(output, str) else json.dumps(output)
        if tool_call.name not in self._tools:
            return not_executed(text)  # the SDK's "Tool '<name>' not found." output
        return executed(text)


def _run_outputs(result: RunResult) -> dict[int, Any]:
    return _outputs(
        item.to_input_item() for item in result.new_items if isinstance(item, ToolCallOutputItem)
    )


class AgentsRecoveryRuntime(_Runtime):
    """One ``Agent`` over the registry; its conversation per batch id in one SQLite file."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        actions = tuple(actions)
        session = SQLiteSession(batch_id, os.path.join(self._directory, SESSION_FILE))
        try:
            history = await session.get_items()
            request: str | list[TResponseInputItem] = [] if history else f"Run batch {batch_id}."
            result = await Runner.run(
                self._agent(actions), request, session=session, run_config=CONFIG
            )
        finally:
            session.close()
        outputs = _outputs(history)
        outputs.update(_run_outputs(result))
        return self._outcomes(actions, outputs)


def _write_durably(path: str, text: str) -> None:
    """What a careful integrator does with a snapshot: temporary file, fsync, rename."""
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    directory = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class AgentsRunStateRuntime(_Runtime):
    """One ``Agent`` whose tools need approval; the run's ``RunState`` snapshot per batch id."""

    needs_approval = True

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        actions = tuple(actions)
        agent = self._agent(actions)
        digest = hashlib.sha256(batch_id.encode()).hexdigest()[:32]
        path = os.path.join(self._directory, f"run_state_{digest}.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as file:
                state = await RunState.from_string(agent, file.read())
            result = await Runner.run(agent, state, run_config=CONFIG)
        else:
            result = await Runner.run(agent, f"Run batch {batch_id}.", run_config=CONFIG)
            if result.interruptions:  # no interruption: no tool to approve, the run is done
                state = result.to_state()
                for item in state.get_interruptions():
                    state.approve(item)
                _write_durably(path, state.to_string())
                result = await Runner.run(agent, state, run_config=CONFIG)
        _write_durably(path, result.to_state().to_string())
        return self._outcomes(actions, _run_outputs(result))


def factory(registry: ToolRegistry, directory: str) -> AgentsRecoveryRuntime:
    """The recovery target: ``Runner.run`` over ``SQLiteSession(batch_id,
    f"{directory}/agents_session.db")``."""
    return AgentsRecoveryRuntime(registry, directory)


def runstate_factory(registry: ToolRegistry, directory: str) -> AgentsRunStateRuntime:
    """The recovery target over the SDK's ``RunState`` snapshot at its approval interruption."""
    return AgentsRunStateRuntime(registry, directory)
