"""What every field batch adapter shares: the `BatchExecutor` frame, the journal hooks, outcomes.

The batch adapters put polyloop's `BatchExecutor` port (contract section 10) in front of a real
runtime's own multi-call path: each hands one model turn's calls to that path in one go, as the
runtime's runner does, and maps the turn's results back. This frame holds the decisions that
are the same for all three, so the divergences the kit reports come from the runtimes:

- **Positions.** Call *i* of the batch gets the tool-call id ``call_<i>``; every runtime pairs
  its results with calls by that id, and the adapter reads the position back from it.
- **What the glue answers itself.** A code action is NOT_EXECUTED with `NO_TOOL_CALL` in its
  position and never reaches the runtime (no runtime has code actions). An adapter may answer
  a call its runtime's runner would never put into a turn (`BatchFieldExecutor.pre_resolve`:
  arguments that are not JSON, or not an object where the runtime's message type holds only
  objects); everything else, unknown names included, goes to the runtime.
- **Entered, and the journal's** ``started``. The runtime calls a function per tool; that
  function (`BatchFieldExecutor.enter`) awaits ``journal.started(i, action)`` and then, with no
  await in between, the spec's handler. So "entered" is the moment the runtime calls the tool's
  own code, and a fault in ``started`` is, to the runtime, the tool's own exception.
- **The journal's** ``committed``. With a journal, the runtime's call runs in its own task
  while the frame
  commits, in model order, each prefix of known outcomes: an outcome is known when the
  runtime's own per-call signal says the call has its final result (`BatchFieldExecutor.known`;
  each adapter names the signal it uses), and every outcome is known when the runtime's
  multi-call path returns its list. The outcome committed is the one returned. When the path
  raises (a propagated tool exception, a cancellation), the runtime hands back no result for
  the calls not yet known, so nothing more is committed and the exception propagates
  unchanged. A cancellation of the batch is passed on to the runtime's task, and the batch
  waits for that task to end as the runtime ends it. Without a journal the frame awaits the
  runtime's call directly, so every exception reaches the caller as the object it was.
- **max_concurrency.** Passed to the runtime's own knob where it has one; each adapter's
  docstring says how.
- **The runtime's record of the calls.** Each runtime keeps the turn's tool calls in the
  conversation it sends back to the model (a response item, a ``ToolCallPart``, an
  ``AIMessage``). After a turn, `BatchFieldExecutor.recorded_arguments` reads each call's
  arguments from that record, the very objects the runtime keeps, so a handler that mutates
  what the runtime passed it is seen there (B11), not hidden by the copy the frame made of the
  action's arguments.

The journal hooks find their batch through a context variable set around the runtime's call:
every task a runtime creates copies it, so concurrent batches on one executor stay apart.
"""

from __future__ import annotations

import asyncio
import contextvars
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from field._common import NO_TOOL_CALL, not_executed, plain_json
from polyloop import Action, ActionOutcome, ToolHandler, ToolRegistry
from polyloop.ports import BatchJournal

__all__ = ["BatchFieldExecutor", "Call", "call_id", "index_of"]

_PREFIX = "call_"


def call_id(index: int) -> str:
    """The tool-call id of call `index` (``call_0``, ``call_1``, ...)."""
    return f"{_PREFIX}{index}"


def index_of(identifier: str | None) -> int:
    """The batch position a tool-call id names (the inverse of `call_id`)."""
    assert identifier is not None and identifier.startswith(_PREFIX), identifier
    return int(identifier[len(_PREFIX) :])


@dataclass(frozen=True)
class Call:
    """One call the runtime is asked to run: its position, tool name and plain JSON arguments."""

    index: int
    name: str
    arguments: Any

    @property
    def id(self) -> str:
        return call_id(self.index)


@dataclass
class _Turn:
    actions: Sequence[Action]
    journal: BatchJournal | None
    outcomes: list[ActionOutcome | None]
    committed: int = 0
    changed: asyncio.Future[None] | None = field(default=None)


_TURN: contextvars.ContextVar[_Turn | None] = contextvars.ContextVar(
    "field_batch_turn", default=None
)


def _result(runtime: asyncio.Future[dict[int, ActionOutcome]]) -> dict[int, ActionOutcome]:
    """The runtime task's result, or what it raised; for a task that ended in CancelledError,
    the very object its coroutine raised (``Task.result()`` makes a new one and keeps the
    original as its ``__context__``), as if the batch had awaited the runtime itself."""
    try:
        return runtime.result()
    except asyncio.CancelledError as error:
        original = error.__context__
        if isinstance(original, asyncio.CancelledError):
            raise original from None
        raise


class BatchFieldExecutor(ABC):
    """The frame of every batch adapter: ``Factory(registry, max_concurrency=N)``,
    `parameters()` in the shape polyloop's `RegistryBatchExecutor` reports, positions as call
    ids, the journal's ``started`` right before each handler and its ``committed`` calls in
    model order once the runtime hands the turn's results back."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int >= 1, got {max_concurrency!r}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self._registry = registry
        self.max_concurrency = max_concurrency
        self.recorded: dict[int, Any] = {}
        """The last turn's calls as the runtime records them: position -> arguments (set by
        `run_turn` from the runtime's own record, the objects themselves)."""

    def recorded_arguments(self) -> list[Any]:
        """The arguments of the last turn's calls as the runtime's record of the turn reads
        now, in model order (B11: what a handler mutated must not show here)."""
        return [self.recorded[index] for index in sorted(self.recorded)]

    def parameters(self) -> dict[str, str]:
        return {
            "tools": ",".join(self._registry.names()),
            "max_concurrency": str(self.max_concurrency),
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        actions = tuple(actions)
        if not actions:
            return ()
        turn = _Turn(actions, journal, [None] * len(actions))
        calls: list[Call] = []
        for index, action in enumerate(actions):
            tool_call = action.tool_call
            if tool_call is None:
                turn.outcomes[index] = not_executed(NO_TOOL_CALL)
                continue
            call = Call(index, tool_call.name, plain_json(tool_call.arguments))
            early = self.pre_resolve(call)
            if early is not None:
                turn.outcomes[index] = early
            else:
                calls.append(call)
        if calls:
            token = _TURN.set(turn)
            try:
                if journal is None:
                    # Nothing to commit meanwhile: await the runtime directly, so what it
                    # raises (a cancellation included) reaches the caller as the very object.
                    results = await self.run_turn(calls)
                else:
                    # Created while the turn is set: the runtime's task and every task it
                    # starts copy the variable, so the tools and `known` find this batch.
                    runtime = asyncio.ensure_future(self.run_turn(calls))
            finally:
                _TURN.reset(token)
            if journal is not None:
                await self._pump(turn, runtime)
                results = _result(runtime)
            for index, outcome in results.items():
                if turn.outcomes[index] is None:
                    turn.outcomes[index] = outcome
                else:
                    assert turn.outcomes[index] == outcome, "a per-call result changed at the end"
        await self._commit_known(turn)
        done = tuple(outcome for outcome in turn.outcomes if outcome is not None)
        assert len(done) == len(actions), "the runtime answered fewer calls than it was given"
        return done

    async def _pump(self, turn: _Turn, runtime: asyncio.Future[dict[int, ActionOutcome]]) -> None:
        """Wait for the runtime, committing each prefix of known outcomes meanwhile (B2).

        A cancellation of the batch is passed on to the runtime (as if the batch awaited it
        directly), and the batch goes on waiting for the runtime to end its own way. A journal
        fault cancels the runtime, waits for it to end, and propagates.
        """
        try:
            while not runtime.done():
                await self._commit_known(turn)
                if runtime.done():
                    break
                changed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                turn.changed = changed
                waiting: set[asyncio.Future[Any]] = {runtime, changed}
                try:
                    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:
                    runtime.cancel()
                finally:
                    turn.changed = None
        except BaseException:
            runtime.cancel()
            while not runtime.done():
                try:
                    await asyncio.wait({runtime})
                except asyncio.CancelledError:
                    runtime.cancel()
            if not runtime.cancelled():
                runtime.exception()  # retrieved: the journal's fault is what propagates
            raise

    @staticmethod
    async def _commit_known(turn: _Turn) -> None:
        journal = turn.journal
        while turn.committed < len(turn.outcomes):
            outcome = turn.outcomes[turn.committed]
            if outcome is None:
                return
            if journal is not None:
                await journal.committed(turn.committed, outcome)
            turn.committed += 1

    @staticmethod
    def known(index: int, outcome: ActionOutcome) -> None:
        """The runtime's per-call signal that call `index` has its final result (if it has
        one): the outcome is recorded and committed as soon as every earlier one is."""
        turn = _TURN.get()
        assert turn is not None, "known() outside a batch"
        if turn.outcomes[index] is None:
            turn.outcomes[index] = outcome
        changed = turn.changed
        if changed is not None and not changed.done():
            changed.set_result(None)

    async def enter(self, index: int, handler: ToolHandler, arguments: Any) -> Any:
        """Called by the runtime's tool function: the journal's ``started``, then the handler."""
        turn = _TURN.get()
        if turn is not None and turn.journal is not None:
            await turn.journal.started(index, turn.actions[index])
        return await handler(arguments)

    def pre_resolve(self, call: Call) -> ActionOutcome | None:
        """An outcome for a call the runtime's runner never puts into a turn, or None."""
        return None

    @abstractmethod
    async def run_turn(self, calls: Sequence[Call]) -> dict[int, ActionOutcome]:
        """Hand `calls` to the runtime's multi-call path at once; their outcomes by position."""
