"""A batch executor built from semaphores: one turn semaphore per position, a pool of slots.

Written from the contract alone (CONTRACT.md sections 1-6 and 10, docs/contract.md and
polyloop's public API); nothing of polyloop's batch module or of the kit was read.

Structure: every accepted call gets its own task at once, and all of them block on their own
*turn* semaphore (one `asyncio.Semaphore(0)` per position). The start releases the first turn;
a call passes the turn to the next accepted call only once it has been entered or resolved
without entering, so calls are entered in model order (B3). Holding its turn, a call takes
slots from a counting semaphore of `max_concurrency` permits: a concurrency-safe call takes
one, an exclusive call takes every permit - the pool itself is the exclusive lock, so it waits
for every earlier call to settle and keeps every later one out (B6, B7); a settling call gives
its permits back and the turn holder wakes at once (B8). The coroutine awaiting
`execute_batch` is the committer: it waits for each position's outcome event in model order
and commits it through `asyncio.shield`, so an outside cancellation never cuts a commit short
(B2). Calls never entered get their sentence when the last task has ended, from the stop that
governs (B16 > B15 > B14 > B13), whatever the timing (B5). Section 6 is delegated to
`registry.executor().execute`.

Cancellation from outside is answered with a fresh `asyncio.CancelledError()` raised once
every call is committed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolRegistry,
    ToolValidationError,
)

_NO_CALL_TEXT = "Not dispatched: this action carries code and no tool call, so no tool ran."
_AFTER_ENV_TEXT = "Left unrun because call {k} returned an environment error and the batch stopped."
_AFTER_CANCEL_TEXT = "Left unrun because the batch was cancelled before this call began."
_AFTER_RAISE_TEXT = "Left unrun because call {k} raised {cls} and the batch stopped."
_CUT_SHORT_TEXT = "Cut short mid-run when the batch stopped; any effects it had are unknown."

# Stop ranks: the lowest present governs the sentences of the calls never entered.
_FAULT, _RAISE, _CANCEL, _ENV = 0, 1, 2, 3


def _make(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _Batch:
    """The semaphores and results of one `execute_batch` call (B18: nothing shared)."""

    def __init__(
        self,
        executor: SlotSemaphoreBatchExecutor,
        actions: Sequence[Action],
        journal: BatchJournal | None,
    ) -> None:
        self.executor = executor
        self.actions = tuple(actions)
        self.journal = journal
        size = len(self.actions)
        self.turns = [asyncio.Semaphore(0) for _ in range(size)]
        self.pool = asyncio.Semaphore(executor.max_concurrency)
        self.results: list[ActionOutcome | None] = [None] * size
        self.ready = [asyncio.Event() for _ in range(size)]
        self.entered = [False] * size
        self.cut = [False] * size  # this batch sent the call's task a cancellation
        self.stops: set[int] = set()
        self.fault: BaseException | None = None
        self.raisers: dict[int, BaseException] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.accepted: list[int] = []
        for position, action in enumerate(self.actions):
            refusal = self._refusal(action)
            if refusal is None:
                self.accepted.append(position)
            else:
                self._resolve(position, refusal)
        self.following = dict(zip(self.accepted, self.accepted[1:], strict=False))
        self.unfinished = len(self.accepted)

    def _refusal(self, action: Action) -> ActionOutcome | None:
        call = action.tool_call
        if call is None:
            return _make(ActionStatus.NOT_EXECUTED, _NO_CALL_TEXT, True)
        try:
            self.executor.registry.validate(call)
        except ToolValidationError as exc:
            return _make(ActionStatus.NOT_EXECUTED, str(exc), True)
        return None

    def _resolve(self, position: int, outcome: ActionOutcome) -> None:
        self.results[position] = outcome
        self.ready[position].set()

    def _is_exclusive(self, position: int) -> bool:
        call = self.actions[position].tool_call
        assert call is not None
        spec = self.executor.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return True
        answer = spec.concurrency_safe
        if callable(answer):
            try:
                answer = answer(call.arguments)
            except Exception:
                return True
        return answer is not True

    def _pass_turn(self, position: int) -> None:
        successor = self.following.get(position)
        if successor is not None:
            self.turns[successor].release()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        for position in self.accepted:
            task = loop.create_task(self._one_call(position))
            # Counted by a done-callback, not in the coroutine: a task cancelled before its
            # first step never runs its body, not even a `finally`.
            task.add_done_callback(self._task_ended)
            self.tasks[position] = task
        if self.accepted:
            self.turns[self.accepted[0]].release()
        else:
            self._finish()

    def stop(self, rank: int) -> None:
        self.stops.add(rank)
        if rank == _ENV:
            return  # B13: what runs finishes; the rest see the stop when their turn comes
        for position, task in self.tasks.items():
            if not task.done() and not self.cut[position]:
                self.cut[position] = True
                task.cancel()

    async def _one_call(self, position: int) -> None:
        held = 0
        try:
            await self.turns[position].acquire()
            if not self.stops:
                need = self.executor.max_concurrency if self._is_exclusive(position) else 1
                while held < need:
                    await self.pool.acquire()
                    held += 1
            if not self.stops and self.journal is not None:
                await self._record_start(position)
            if self.stops:
                self._pass_turn(position)
                return
            self.entered[position] = True
            self._pass_turn(position)
            await self._run_handler(position)
        except asyncio.CancelledError:
            if not self.cut[position]:
                raise  # not ours: cannot happen, every other ending is caught below
        finally:
            for _ in range(held):
                self.pool.release()

    def _task_ended(self, task: asyncio.Task[None]) -> None:
        self.unfinished -= 1
        if self.unfinished == 0:
            self._finish()

    async def _record_start(self, position: int) -> None:
        assert self.journal is not None
        try:
            await self.journal.started(position, self.actions[position])
        except asyncio.CancelledError:
            if self.cut[position]:
                raise  # the batch is stopping; the call stays not entered
            self._fault(asyncio.CancelledError())
        except BaseException as exc:
            self._fault(exc)

    def _fault(self, exc: BaseException) -> None:
        if self.fault is None:
            self.fault = exc
        self.stop(_FAULT)

    async def _run_handler(self, position: int) -> None:
        try:
            outcome = await self.executor.inner.execute(self.actions[position])
        except asyncio.CancelledError as exc:
            self._resolve(position, _make(ActionStatus.ENV_ERROR, _CUT_SHORT_TEXT, True))
            if not self.cut[position]:
                self.raisers[position] = exc  # the handler's own CancelledError (B15)
                self.stop(_RAISE)
            return
        except Exception as exc:  # only E9's TypeError escapes execute (B16)
            self._fault(exc)
            return
        except BaseException as exc:
            # Caught here, not left to the task: asyncio would let a KeyboardInterrupt
            # escape the event loop before the batch commits every call.
            self._resolve(position, _make(ActionStatus.ENV_ERROR, _CUT_SHORT_TEXT, True))
            self.raisers[position] = exc
            self.stop(_RAISE)
            return
        self._resolve(position, outcome)
        if outcome.status is ActionStatus.ENV_ERROR:
            self.stop(_ENV)

    def _finish(self) -> None:
        text = _AFTER_CANCEL_TEXT
        if self.stops:
            rank = min(self.stops)
            if rank == _RAISE:
                first = min(self.raisers)
                text = _AFTER_RAISE_TEXT.format(k=first, cls=type(self.raisers[first]).__name__)
            elif rank == _ENV:
                first = min(
                    position
                    for position, outcome in enumerate(self.results)
                    if outcome is not None and outcome.status is ActionStatus.ENV_ERROR
                )
                text = _AFTER_ENV_TEXT.format(k=first)
        for position, outcome in enumerate(self.results):
            if outcome is None:  # never entered (or, after a fault, never to be committed)
                self._resolve(position, _make(ActionStatus.NOT_EXECUTED, text, True))


class SlotSemaphoreBatchExecutor:
    """Runs one model turn's calls with turn semaphores and a pool of slots."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError("max_concurrency must be an int")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be 1 or more")
        self.registry = registry
        self.max_concurrency = max_concurrency
        self.inner = registry.executor()

    def parameters(self) -> Mapping[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
            "design": "slot-semaphores",
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        if len(actions) == 0:
            return ()
        batch = _Batch(self, actions, journal)
        batch.start()
        was_cancelled = False
        for position in range(len(batch.actions)):
            while not batch.ready[position].is_set():
                try:
                    await batch.ready[position].wait()
                except asyncio.CancelledError:
                    was_cancelled = True
                    batch.stop(_CANCEL)
            if batch.fault is not None:
                break
            outcome = batch.results[position]
            assert outcome is not None
            if journal is not None:
                commit = asyncio.ensure_future(_guarded_commit(journal, position, outcome))
                while True:
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.shield(commit)
                    if commit.done():
                        break
                    was_cancelled = True  # the commit goes on: a shield keeps it whole
                    batch.stop(_CANCEL)
                failure = commit.result()
                if failure is not None:
                    batch._fault(failure)
                    break
        pending = {task for task in batch.tasks.values() if not task.done()}
        while pending:
            try:
                _, pending = await asyncio.wait(pending)
            except asyncio.CancelledError:
                was_cancelled = True
                batch.stop(_CANCEL)
        if batch.fault is not None:
            raise batch.fault
        if batch.raisers:
            raise batch.raisers[min(batch.raisers)]
        if was_cancelled:
            raise asyncio.CancelledError()
        final = tuple(outcome for outcome in batch.results if outcome is not None)
        assert len(final) == len(batch.actions)
        return final


async def _guarded_commit(
    journal: BatchJournal, position: int, outcome: ActionOutcome
) -> BaseException | None:
    """Commit one outcome; a journal's exception comes back as a value (B16).

    A `KeyboardInterrupt` raised inside a task would escape through the event loop at once;
    as a value it is raised by `execute_batch` itself once the running calls are drained.
    """
    try:
        await journal.committed(position, outcome)
    except BaseException as exc:
        return exc
    return None


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> SlotSemaphoreBatchExecutor:
    """The certification target: `factory(registry, max_concurrency=N)`."""
    return SlotSemaphoreBatchExecutor(registry, max_concurrency=max_concurrency)
