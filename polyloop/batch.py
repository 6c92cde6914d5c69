"""Batch dispatch: one model turn's tool calls, run concurrently where safe (contract section 10).

Concurrency is a throughput matter and order a semantic one, so they are solved apart: handlers
overlap only when both calls are concurrency-safe and within `max_concurrency`, while outcomes
are committed strictly in model order. Every call is decided exactly as
`RegistryExecutor.execute` decides it (B4): the scheduler reuses its admission and its handler
dispatch, and owns only the order, the pool and the stops.

A stop never abandons a started handler: it is cancelled (or, for an environment error, left to
finish) and awaited, and only then does every call get its outcome, so a returned or raised
batch means nothing it started is still acting.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop._json import thaw_arguments, type_label
from polyloop.policy import ToolPolicy
from polyloop.ports import Action, BatchJournal, ToolCall
from polyloop.tools import (
    _POST_INTERRUPTED,
    _TASKS,
    RegistryExecutor,
    ToolRegistry,
    _chain,
    _CompiledTool,
    _decide,
    _exception_name,
    _HandlerRaised,
    _map_exception,
    _map_result,
    _policed,
    _policy_if_active,
    _run,
    _running_loop,
    _Track,
)
from polyloop.types import ActionOutcome, ActionStatus, _trusted_outcome

__all__ = ["RegistryBatchExecutor"]

NOT_RUN_CANCELLED = "not run: the batch was cancelled"
INTERRUPTED = "interrupted while running; its effects are unknown"

_HAS_CANCELLING = sys.version_info >= (3, 11)  # Task.cancelling()
_current_task = asyncio.current_task

_EXECUTED = ActionStatus.EXECUTED
_ENV_ERROR = ActionStatus.ENV_ERROR
_INTERRUPTED = _trusted_outcome(ActionStatus.ENV_ERROR, INTERRUPTED, True)
_POST_INTERRUPTED_OUTCOME = _trusted_outcome(ActionStatus.EXECUTED, _POST_INTERRUPTED, True)


def _not_run(text: str) -> ActionOutcome:
    return _trusted_outcome(ActionStatus.NOT_EXECUTED, text, True)


class _NotEntered:
    """A call's task ended before its handler started (a stop came first)."""


_NOT_ENTERED = _NotEntered()


class _Fault:
    """The journal's `started` raised: the batch stops with that exception (B16)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Raised:
    """A handler ended by raising past `_run`: E9's TypeError or a `BaseException`."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _classify(entry: _CompiledTool, arguments: Mapping[str, Any]) -> bool:
    """Fail-closed: only an exact `True` is concurrency-safe (S6, B9)."""
    spec = entry.spec
    if spec.completes_run:
        return False
    safe = spec.concurrency_safe
    if type(safe) is bool:
        return safe
    try:
        return safe(arguments) is True
    except Exception:
        return False


class RegistryBatchExecutor:
    """Runs one model turn's actions against a registry's handlers, scheduled by B1–B18.

    Satisfies `BatchExecutor` structurally. Holds no state between batches, so concurrent
    `execute_batch` calls neither order nor limit each other (B18).
    """

    __slots__ = ("_admit", "_executor", "_max_concurrency", "_policy")

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        max_concurrency: int = 10,
        policy: ToolPolicy | None = None,
    ) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(
                "max_concurrency must be an int >= 1 (how many handlers of one batch may run "
                f"at once), got {type_label(max_concurrency)}"
            )
        if max_concurrency < 1:
            raise ValueError(
                f"max_concurrency must be >= 1, got {max_concurrency}; use 1 for a strictly "
                "sequential batch"
            )
        self._executor = RegistryExecutor(registry)  # checks every handler, as R8 does
        self._admit = self._executor._admit
        self._max_concurrency = int(max_concurrency)
        self._policy = _policy_if_active(policy)

    @property
    def registry(self) -> ToolRegistry:
        """The registry this executor dispatches to."""
        return self._executor.registry

    @property
    def max_concurrency(self) -> int:
        """The most handlers of one batch that run at once."""
        return self._max_concurrency

    def parameters(self) -> dict[str, str]:
        """Reproducibility parameters: the tool names in order and the concurrency cap."""
        return {
            "tools": ",".join(self._executor.registry.names()),
            "max_concurrency": str(self._max_concurrency),
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        """Run `actions` (one model turn) and return one outcome per action, in model order.

        Raises `CancelledError` after committing every call when cancelled (B14), a handler's
        own `BaseException` likewise (B15), and a journal fault or E9's `TypeError` without
        inventing outcomes (B16).
        """
        kind = type(actions)
        if kind is not tuple and kind is not list:
            if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
                raise TypeError(
                    f"execute_batch(actions) takes a sequence of Action, got {type_label(actions)}"
                )
            actions = tuple(actions)
        if journal is None:
            if len(actions) == 1 and _HAS_CANCELLING:
                # Nothing to schedule and nobody to tell: exactly `execute` (B4), without a
                # task. Only where a swallowed cancellation can be seen afterwards (3.11+), so
                # that a handler ignoring it still ends the batch in CancelledError (B14).
                action = actions[0]
                admitted = self._admit(action)
                if type(admitted) is not _CompiledTool:
                    return (admitted,)  # type: ignore[return-value]
                task: asyncio.Task[Any] | None = (
                    _current_task() if _TASKS is None else _TASKS.get(_running_loop())
                )
                if task is not None:
                    cancelling = task.cancelling  # type: ignore[attr-defined,unused-ignore]
                    before = cancelling()
                    call: ToolCall = action.tool_call  # type: ignore[assignment]  # admitted
                    policy = self._policy
                    if policy is None:
                        # `_run`, written out: one coroutine fewer for a lone call (B4).
                        try:
                            result = await admitted.handler(  # type: ignore[misc]
                                thaw_arguments(call.arguments)
                            )
                        except Exception as exc:
                            outcome = _map_exception(exc)
                        else:
                            if type(result) is str:
                                outcome = _trusted_outcome(_EXECUTED, result, False)
                            else:
                                outcome = _map_result(admitted, result)
                    else:
                        outcome = await _policed(
                            admitted,
                            call,
                            policy,
                            cancelling if before == 0 else lambda: cancelling() > before,
                        )
                    if cancelling() > before:
                        raise asyncio.CancelledError()
                    return (outcome,)
        elif not (
            callable(getattr(journal, "started", None))
            and callable(getattr(journal, "committed", None))
        ):
            raise TypeError(
                f"execute_batch(journal=) takes a BatchJournal (async started() and "
                f"committed() methods) or None, got {type_label(journal)}"
            )
        for index, action in enumerate(actions):
            if type(action) is not Action and not isinstance(action, Action):
                raise TypeError(
                    f"execute_batch: actions[{index}] is a {type_label(action)}, not an Action"
                )
        if not actions:
            return ()
        return await _Batch(
            self._executor, tuple(actions), journal, self._max_concurrency, self._policy
        ).run()

    def __repr__(self) -> str:
        return (
            f"RegistryBatchExecutor(names={list(self.registry.names())!r}, "
            f"max_concurrency={self._max_concurrency})"
        )


class _Batch:
    """The state of one `execute_batch` call: built, run once, dropped."""

    def __init__(
        self,
        executor: RegistryExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
        cap: int,
        policy: ToolPolicy | None = None,
    ) -> None:
        self.actions = actions
        self.policy = policy
        self.journal = journal
        self.cap = cap
        self.admitted = [executor._admit(action) for action in actions]
        count = len(actions)
        self.count = count
        self.outcomes: list[ActionOutcome | None] = [None] * count
        self.next = 0  # the first call neither started nor resolved
        self.committed = 0
        self.running: dict[asyncio.Task[None], int] = {}
        self.cancel_sent: set[asyncio.Task[None]] = set()
        self.exclusive: int | None = None  # the exclusive call now running (B6)
        self.head_safe: bool | None = None  # the classification of call `next`, asked once (B9)
        self.pending_start: int | None = None  # a task awaiting journal.started
        self.fault: BaseException | None = None
        self.raised: dict[int, BaseException] = {}
        self.cancelled = False
        self.env_error = False
        self.dirty = False
        self.wake: asyncio.Future[None] | None = None
        self.loop = asyncio.get_running_loop()
        # With a policy, calls below `frontier` have been decided (P11), one at a time, in
        # model order, by the `deciding` task, ahead of classification and `started`.
        self.frontier = count if policy is None else 0
        self.deciding: asyncio.Task[None] | None = None
        self.deciding_cancelled = False

    @property
    def stopping(self) -> bool:
        return self.fault is not None or bool(self.raised) or self.cancelled or self.env_error

    def _deciding_busy(self) -> bool:
        return self.deciding is not None and not self.deciding.done()

    async def run(self) -> tuple[ActionOutcome, ...]:
        if self.policy is not None:
            self.deciding = self.loop.create_task(self._decide_all(self.policy))
            self.deciding.add_done_callback(lambda _: self._wake())
        try:
            while True:
                if not self.stopping:
                    self._fill()
                if self.fault is not None:
                    break
                await self._commit_ready()
                if self.fault is not None:
                    break
                if (
                    not self.running
                    and not self._deciding_busy()
                    and (self.next >= self.count or self.stopping)
                ):
                    break
                await self._wait()
        except BaseException as error:  # a journal fault or a classifier's BaseException
            if self.fault is None:
                self.fault = error
        if self.fault is not None:
            self._cancel_running()
            while self.running or self._deciding_busy():
                await self._wait()
            raise self.fault
        self._resolve_not_entered()
        await self._commit_ready()  # a journal fault here propagates as it is (B16)
        if self.raised:
            raise self.raised[min(self.raised)]
        if self.cancelled:
            raise asyncio.CancelledError()
        return tuple(self.outcomes)  # type: ignore[arg-type]

    # --- deciding calls (P11) ----------------------------------------------------------------

    async def _decide_all(self, policy: ToolPolicy) -> None:
        """Run each accepted call's deciding stages, one call at a time, in model order.

        A denied call becomes a resolved one, like a rejected call (B10: no classification, no
        slot, no barrier, no `started`). Once a stop applies no deciding stage starts; one
        that a stop cancels leaves its call undecided, so it gets the stop's "not run".
        """
        admitted = self.admitted
        for index in range(self.count):
            entry = admitted[index]
            if type(entry) is _CompiledTool:
                if self.stopping:
                    return
                call = self.actions[index].tool_call
                assert call is not None
                try:
                    denial = await _decide(policy, call, self._deciding_was_cancelled)
                except BaseException as error:
                    if not (isinstance(error, asyncio.CancelledError) and self.deciding_cancelled):
                        # P4: a decider's own BaseException stops the batch as B15 says.
                        self.raised[index] = error
                        self._cancel_running()
                    self._wake()
                    return
                if denial is not None:
                    admitted[index] = denial
                    self.outcomes[index] = denial
            self.frontier = index + 1
            self._wake()

    def _deciding_was_cancelled(self) -> bool:
        return self.deciding_cancelled

    # --- starting calls --------------------------------------------------------------------

    def _fill(self) -> None:
        """Start every next call that model order, exclusivity and the cap allow (B3, B6–B8)."""
        admitted = self.admitted
        while self.next < self.frontier:
            index = self.next
            item = admitted[index]
            if type(item) is not _CompiledTool:
                self.outcomes[index] = item  # type: ignore[assignment]  # B10: no slot, no barrier
                self.next += 1
                continue
            if (
                self.pending_start is not None
                or self.exclusive is not None
                or len(self.running) >= self.cap
            ):
                return
            call = self.actions[index].tool_call
            assert call is not None
            safe = self.head_safe
            if safe is None:
                safe = self.head_safe = _classify(item, call.arguments)
            if not safe and self.running:
                return  # an exclusive call waits for every earlier one to settle (B6)
            self.next += 1
            self.head_safe = None
            self._start(index, item, call.arguments, safe)
            if not safe:
                return

    def _start(
        self, index: int, entry: _CompiledTool, arguments: Mapping[str, Any], safe: bool
    ) -> None:
        task: asyncio.Task[None] = self.loop.create_task(self._body(index, entry, arguments))
        self.running[task] = index
        task.add_done_callback(self._settled)
        if not safe:
            self.exclusive = index
        if self.journal is not None:
            self.pending_start = index

    async def _body(self, index: int, entry: _CompiledTool, arguments: Mapping[str, Any]) -> None:
        # Recorded before the task ends, so a stop is seen before any sibling's next step.
        self._record(index, await self._attempt(index, entry, arguments))

    async def _attempt(
        self, index: int, entry: _CompiledTool, arguments: Mapping[str, Any]
    ) -> object:
        if self.stopping:
            return _NOT_ENTERED
        journal = self.journal
        if journal is not None:
            try:
                await journal.started(index, self.actions[index])
            except asyncio.CancelledError as error:
                if self.cancel_sent and asyncio.current_task() in self.cancel_sent:
                    return _NOT_ENTERED  # B17: a started that raised is no record
                return _Fault(error)
            except BaseException as error:
                return _Fault(error)
            if self.stopping:
                return _NOT_ENTERED
            # Entered next, with no await in between (B17); the scheduler may go on.
            self.pending_start = None
            self._wake()
        policy = self.policy
        if policy is None:
            try:
                return await _run(entry, arguments)
            except BaseException as error:
                return _Raised(error)
        return await self._attempt_chain(index, entry, policy)

    async def _attempt_chain(self, index: int, entry: _CompiledTool, policy: ToolPolicy) -> object:
        """An allowed call's wrappers, handler and post-processors (P8–P10), ending the way
        its handler ended when the batch's cancellation reached the chain (P9)."""
        task = asyncio.current_task()
        sent = self.cancel_sent

        def cancelled() -> bool:
            return task in sent

        track = _Track()
        call = self.actions[index].tool_call
        assert call is not None
        try:
            return await _chain(entry, call, policy, cancelled, track)
        except BaseException as error:
            if not (isinstance(error, asyncio.CancelledError) and cancelled()):
                return _Raised(error)
        # Stopped from outside: the call ended the way its handler last ended.
        if not track.ended:
            return _Raised(asyncio.CancelledError())  # interrupted (or never entered)
        result = track.result
        if type(result) is _HandlerRaised:
            ended = result.error
            if not isinstance(ended, Exception):
                return _Raised(asyncio.CancelledError())
            outcome = _map_exception(ended)
        else:
            try:
                outcome = _map_result(entry, result)
            except TypeError as signature_bug:
                return _Raised(signature_bug)  # E9 (B16)
        if outcome.status is _EXECUTED and policy.post:
            return _POST_INTERRUPTED_OUTCOME  # never the unprocessed observation (P10)
        return outcome

    # --- settling calls ----------------------------------------------------------------------

    def _settled(self, task: asyncio.Task[None]) -> None:
        index = self.running.pop(task)
        if self.pending_start == index:
            self.pending_start = None
        if self.exclusive == index:
            self.exclusive = None
        self._wake()

    def _record(self, index: int, result: object) -> None:
        if type(result) is ActionOutcome:
            self.outcomes[index] = result
            if result.status is _ENV_ERROR:
                self.env_error = True  # B13: stop entering; running calls finish
        elif type(result) is _Raised:
            error = result.error
            if isinstance(error, Exception):
                self._set_fault(error)  # E9: a signature bug, never an outcome (B16)
            else:
                self.outcomes[index] = _INTERRUPTED
                sent = asyncio.current_task() in self.cancel_sent
                if not (isinstance(error, asyncio.CancelledError) and sent):
                    self.raised[index] = error  # B15: the handler's own BaseException
                    self._cancel_running()
        elif type(result) is _Fault:
            self._set_fault(result.error)

    def _set_fault(self, error: BaseException) -> None:
        if self.fault is None:
            self.fault = error
        self._cancel_running()

    def _cancel_running(self) -> None:
        current = asyncio.current_task()
        for task in self.running:
            if task is not current and task not in self.cancel_sent:
                self.cancel_sent.add(task)
                task.cancel()
        deciding = self.deciding
        if (
            deciding is not None
            and deciding is not current
            and not deciding.done()
            and not self.deciding_cancelled
        ):
            self.deciding_cancelled = True
            deciding.cancel()

    # --- waiting and committing --------------------------------------------------------------

    def _wake(self) -> None:
        self.dirty = True
        wake = self.wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    async def _wait(self) -> None:
        """Sleep until a task settles or enters; a cancellation of the batch becomes a stop."""
        if self.dirty:
            self.dirty = False
            return
        self.wake = self.loop.create_future()
        try:
            await self.wake
        except asyncio.CancelledError:
            self._on_cancel()  # B14: drained, committed, then re-raised by `run`
        finally:
            self.wake = None
            self.dirty = False

    def _on_cancel(self) -> None:
        self.cancelled = True
        self._cancel_running()

    async def _commit_ready(self) -> None:
        """Commit the longest prefix of known outcomes, in model order (B2)."""
        outcomes = self.outcomes
        journal = self.journal
        if journal is None:
            while self.committed < self.count and outcomes[self.committed] is not None:
                self.committed += 1
            return
        while (
            self.pending_start is None
            and self.fault is None
            and self.committed < self.count
            and outcomes[self.committed] is not None
        ):
            index = self.committed
            outcome = outcomes[index]
            assert outcome is not None
            await self._journal_call(journal.committed(index, outcome))
            self.committed = index + 1

    async def _journal_call(self, call: Any) -> None:
        """Await a journal call to its end even if the batch is cancelled meanwhile (B2, B14).

        The call runs in its own task so a cancellation of the batch reaches the batch, not a
        half-written record; the journal's own exception propagates (B16).
        """
        task = self.loop.create_task(call)
        while not task.done():
            try:
                await asyncio.wait((task,))
            except asyncio.CancelledError:
                self._on_cancel()
        task.result()

    def _resolve_not_entered(self) -> None:
        """Give each accepted call that never entered its "not run" outcome (B13–B15)."""
        text: str | None = None
        for index in range(self.count):
            if self.outcomes[index] is not None:
                continue
            item = self.admitted[index]
            if type(item) is not _CompiledTool:
                self.outcomes[index] = item  # type: ignore[assignment]
                continue
            if text is None:
                text = self._not_run_text()
            self.outcomes[index] = _not_run(text)

    def _not_run_text(self) -> str:
        if self.raised:
            first = min(self.raised)
            return f"not run: call {first} raised {_exception_name(self.raised[first])}"
        if self.cancelled:
            return NOT_RUN_CANCELLED
        first = next(
            index
            for index, outcome in enumerate(self.outcomes)
            if outcome is not None and outcome.status is _ENV_ERROR
        )
        return f"not run: call {first} reported an environment error"
