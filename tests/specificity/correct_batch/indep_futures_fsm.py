"""A batch executor built as an explicit state machine driven by futures and done-callbacks.

Written from the contract alone (CONTRACT.md sections 1-6 and 10, docs/contract.md and
polyloop's public API); nothing of polyloop's batch module or of the kit was read.

Structure: every call has a state (`_Phase`) and one `asyncio.Future` that will hold its
outcome. `_Machine.advance()` is a synchronous transition function: it walks the head of the
batch in model order and opens a task for each call that B3, B6 and B7 allow. Each call task
reports back through a done-callback, which moves that call to its next phase and calls
`advance()` again, so a freed slot is refilled in the same callback (B8). Stops are a set of
kinds ranked as the contract ranks them (B16 > B15 > B14 > B13); the calls never entered are
resolved only once nothing is running, so their sentence follows the governing stop whatever
the timing (B5). A separate committer task awaits the outcome futures in model order and
commits each one (B2), so an outside cancellation never lands inside `journal.committed`.
Section 6 is delegated to `registry.executor().execute`.

Cancellation from outside is re-raised as the very `CancelledError` that the batch's own task
received first (not a handler's).
"""

from __future__ import annotations

import asyncio
import enum
import functools
from collections.abc import Mapping, Sequence
from typing import Any, cast

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolRegistry,
    ToolValidationError,
)

_NO_TOOL_CALL = (
    "Refused before dispatch: the action holds code rather than a tool call, and this "
    "executor dispatches tool calls only."
)
_SKIPPED_ENV = "Never started: call {k} ended with an environment error, which halts the batch."
_SKIPPED_CANCELLED = "Never started: the whole batch was cancelled before this call's turn."
_SKIPPED_RAISED = "Never started: call {k} raised {cls}, which halts the batch."
_INTERRUPTED = (
    "Halted mid-run by a stop of the batch; whether this call took effect cannot be known."
)


class _Phase(enum.Enum):
    WAITING = "waiting"  # accepted, not yet opened
    REJECTED = "rejected"  # E1/E2, resolved at once
    OPENING = "opening"  # slot held, journal.started awaited
    RUNNING = "running"  # handler entered
    DONE = "done"  # outcome resolved
    SKIPPED = "skipped"  # will never be entered; sentence chosen when the batch settles


class _Stop(enum.IntEnum):
    """Stop kinds; a lower value governs (the contract's list after B17)."""

    FAULT = 0
    RAISED = 1
    CANCELLED = 2
    ENV = 3


def _outcome(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _Machine:
    """One batch's state; nothing here is shared between batches (B18)."""

    def __init__(
        self,
        owner: FuturesFsmBatchExecutor,
        actions: Sequence[Action],
        journal: BatchJournal | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        self.owner = owner
        self.actions = tuple(actions)
        self.journal = journal
        count = len(self.actions)
        self.results: list[asyncio.Future[ActionOutcome]] = [
            loop.create_future() for _ in range(count)
        ]
        self.phase = [_Phase.WAITING] * count
        self.safe: list[bool | None] = [None] * count
        self.cancel_sent = [False] * count
        self.active: dict[int, asyncio.Task[tuple[str, Any]]] = {}
        self.exclusive_running = False
        self.head = 0
        self.stops: set[_Stop] = set()
        self.fault: BaseException | None = None
        self.raised: dict[int, BaseException] = {}
        self.settled: asyncio.Future[None] = loop.create_future()
        for index, action in enumerate(self.actions):
            rejection = self._rejection(action)
            if rejection is not None:
                self.phase[index] = _Phase.REJECTED
                self.results[index].set_result(rejection)

    def _rejection(self, action: Action) -> ActionOutcome | None:
        call = action.tool_call
        if call is None:
            return _outcome(ActionStatus.NOT_EXECUTED, _NO_TOOL_CALL, True)
        try:
            self.owner.registry.validate(call)
        except ToolValidationError as exc:
            return _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        return None

    def _classify(self, index: int) -> bool:
        known = self.safe[index]
        if known is not None:
            return known
        call = self.actions[index].tool_call
        assert call is not None
        spec = self.owner.registry.spec_for(call.name)
        assert spec is not None
        verdict = False
        if not spec.completes_run:
            rule = spec.concurrency_safe
            if rule is True:
                verdict = True
            elif callable(rule):
                try:
                    verdict = rule(call.arguments) is True
                except Exception:
                    verdict = False  # fail-closed: a classifier that raises makes it exclusive
        self.safe[index] = verdict
        return verdict

    # transitions -------------------------------------------------------------------------

    def advance(self) -> None:
        """Open every call the rules allow now, then settle the batch if nothing can move."""
        cap = self.owner.max_concurrency
        while not self.stops and self.head < len(self.actions) and not self._opening():
            index = self.head
            if self.phase[index] is _Phase.REJECTED:
                self.head += 1
                continue
            safe = self._classify(index)
            if self.active and (not safe or self.exclusive_running or len(self.active) >= cap):
                break
            self.head += 1
            self.phase[index] = _Phase.OPENING
            if not safe:
                self.exclusive_running = True
            task = asyncio.get_running_loop().create_task(self._attempt(index))
            self.active[index] = task
            task.add_done_callback(functools.partial(self._on_done, index))
        if not self.active and (self.stops or self.head >= len(self.actions)):
            self._settle()

    def _opening(self) -> bool:
        """Whether a call is between opening and entering: the next waits for it (B3)."""
        return any(self.phase[index] is _Phase.OPENING for index in self.active)

    def halt(self, kind: _Stop) -> None:
        self.stops.add(kind)
        if kind is not _Stop.ENV:  # B13 lets running handlers finish; every other stop cancels
            for index, task in self.active.items():
                if not self.cancel_sent[index]:
                    self.cancel_sent[index] = True
                    task.cancel()
        self.advance()

    def _on_done(self, index: int, task: asyncio.Task[tuple[str, Any]]) -> None:
        del self.active[index]
        if self.safe[index] is False:
            self.exclusive_running = False
        if task.cancelled():  # cancelled before its body began: never entered
            kind, payload = "skipped", None
        else:
            kind, payload = task.result()
        if kind == "done":
            self.phase[index] = _Phase.DONE
            self.results[index].set_result(cast(ActionOutcome, payload))
        elif kind == "interrupted":
            self.phase[index] = _Phase.DONE
            self.results[index].set_result(_outcome(ActionStatus.ENV_ERROR, _INTERRUPTED, True))
        elif kind == "skipped":
            self.phase[index] = _Phase.SKIPPED
        elif kind == "raised":
            self.phase[index] = _Phase.DONE
            self.results[index].set_result(_outcome(ActionStatus.ENV_ERROR, _INTERRUPTED, True))
            self.raised[index] = cast(BaseException, payload)
            self.halt(_Stop.RAISED)
            return
        else:  # "fault": E9's TypeError or a journal that raised (B16)
            self.phase[index] = _Phase.SKIPPED if kind == "journal" else _Phase.DONE
            self.record_fault(cast(BaseException, payload))
            return
        self.advance()

    def record_fault(self, exc: BaseException) -> None:
        if self.fault is None:
            self.fault = exc
        self.halt(_Stop.FAULT)

    def _settle(self) -> None:
        if self.settled.done():
            return
        sentence: str | None = None
        if self.stops:
            governing = min(self.stops)
            if governing is _Stop.RAISED:
                k = min(self.raised)
                sentence = _SKIPPED_RAISED.format(k=k, cls=type(self.raised[k]).__name__)
            elif governing is _Stop.CANCELLED:
                sentence = _SKIPPED_CANCELLED
            elif governing is _Stop.ENV:
                k = min(
                    i
                    for i, result in enumerate(self.results)
                    if result.done() and result.result().status is ActionStatus.ENV_ERROR
                )
                sentence = _SKIPPED_ENV.format(k=k)
        for index in range(len(self.phase)):
            if self.results[index].done():
                continue
            # Only a call never entered is left here, or, after a fault, any call: those
            # outcomes are never committed nor returned (B16), but the committer must wake.
            self.phase[index] = _Phase.SKIPPED
            text = sentence if sentence is not None else _SKIPPED_CANCELLED
            self.results[index].set_result(_outcome(ActionStatus.NOT_EXECUTED, text, True))
        self.settled.set_result(None)

    # the call task -----------------------------------------------------------------------

    async def _attempt(self, index: int) -> tuple[str, Any]:
        """Run one call; every ending comes back as a tagged value, never as an exception.

        Catching `BaseException` here is what keeps a handler's `KeyboardInterrupt` from
        escaping through the event loop before the batch has committed every call.
        """
        action = self.actions[index]
        if self.journal is not None:
            try:
                await self.journal.started(index, action)
            except asyncio.CancelledError as exc:
                if self.cancel_sent[index]:
                    return "skipped", None
                return "journal", exc
            except BaseException as exc:
                return "journal", exc
        if self.stops:
            return "skipped", None
        self.phase[index] = _Phase.RUNNING
        # The next call may open now, but only once this step has entered our handler: no
        # classification or journal event may come between started(i) and entering i (B17).
        asyncio.get_running_loop().call_soon(self.advance)
        try:
            outcome = await self.owner.inner.execute(action)
        except asyncio.CancelledError as exc:
            if self.cancel_sent[index]:
                return "interrupted", None
            return "raised", exc
        except Exception as exc:
            return "fault", exc
        except BaseException as exc:
            return "raised", exc
        if outcome.status is ActionStatus.ENV_ERROR:
            self.stops.add(_Stop.ENV)  # observed here, before any other call can be opened
        return "done", outcome

    async def _commit_in_order(self) -> None:
        journal = self.journal
        assert journal is not None
        for index, result in enumerate(self.results):
            await asyncio.wait({result})
            if self.fault is not None:
                return
            try:
                await journal.committed(index, result.result())
            except BaseException as exc:
                self.record_fault(exc)
                return


class FuturesFsmBatchExecutor:
    """Runs one model turn's calls through a per-batch `_Machine`."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, got {type(max_concurrency).__name__}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.registry = registry
        self.max_concurrency = max_concurrency
        self.inner = registry.executor()

    def parameters(self) -> Mapping[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
            "scheduler": "futures-fsm",
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        if not actions:
            return ()
        machine = _Machine(self, actions, journal)
        committer: asyncio.Task[None] | None = None
        if journal is not None:
            committer = asyncio.get_running_loop().create_task(machine._commit_in_order())
        machine.advance()
        waited: set[asyncio.Future[Any]] = {machine.settled}
        if committer is not None:
            waited.add(committer)
        first_cancel: asyncio.CancelledError | None = None
        while True:
            try:
                await asyncio.wait(waited)
                break
            except asyncio.CancelledError as exc:
                # B14: keep waiting however often we are cancelled; the drain must finish.
                if first_cancel is None:
                    first_cancel = exc
                machine.halt(_Stop.CANCELLED)
        if machine.fault is not None:
            raise machine.fault
        if machine.raised:
            raise machine.raised[min(machine.raised)]
        if first_cancel is not None:
            raise first_cancel
        return tuple(result.result() for result in machine.results)


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> FuturesFsmBatchExecutor:
    """The certification target: `factory(registry, max_concurrency=N)`."""
    return FuturesFsmBatchExecutor(registry, max_concurrency=max_concurrency)
