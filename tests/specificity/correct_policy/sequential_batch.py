"""A batch form of `sequential` (contract sections 10 and 11, P11), written from the contract alone.

One coordinator (the caller's task) owns every decision: it resolves rejected calls, runs one
call's deciding stages at a time in model order (reusing `sequential`'s deciding), classifies an
allowed call, and enters it when B6/B7 allow. Each entered call is a worker task that records
`started(i)` and then, in the same step, enters its chain (B17), so calls are entered strictly
in model order (the next entry waits until the previous `started` returned, B3). The
coordinator only ever waits with `asyncio.wait`, which never cancels what it waits on, so a
cancellation of the batch is seen and handled in one place (B14), however often it comes.
Not-run sentences are written once nothing is running, so the governing stop is known (B5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolValidationError,
    plain_arguments,
)

from .sequential import SequentialPolicyExecutor, _exc_text, _outcome, _refused, _Stop

__all__ = ["batch_factory"]

_FAULT, _BASE, _CANCEL, _ENV = range(4)  # B16, B15, B14, B13: the first present governs
_INTERRUPTED = "interrupted while running; its effects are unknown"


@dataclass(eq=False)
class _Entry:
    index: int
    call: ToolCall
    exclusive: bool
    started: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    handler_end: str | None = None
    last_result: Any = None
    last_error: BaseException | None = None
    cancel_sent: bool = False


class SequentialPolicyBatchExecutor:
    """`execute_batch` under a `ToolPolicy`: section 10 scheduling with section 11 stages."""

    def __init__(
        self, registry: ToolRegistry, max_concurrency: int, policy: ToolPolicy | None
    ) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError("max_concurrency must be an int")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.single = SequentialPolicyExecutor(registry, policy)
        self.registry = registry
        self.max_concurrency = max_concurrency
        self.policy = policy if policy is not None else ToolPolicy()

    def parameters(self) -> Mapping[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        actions = tuple(actions)
        if not actions:
            return ()
        return await _Batch(self, actions, journal).run()


class _Batch:
    def __init__(
        self,
        owner: SequentialPolicyBatchExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner, self.actions, self.journal = owner, actions, journal
        self.out: list[ActionOutcome | None] = [None] * len(actions)
        self.stops: dict[int, tuple[int, BaseException | None]] = {}
        self.flag = _Stop()  # no deciding stage starts and no handler is entered once raised
        self.running: dict[asyncio.Future[Any], _Entry] = {}
        self.deciding: tuple[asyncio.Future[Any], int] | None = None
        self.ready: _Entry | None = None
        self.starting: _Entry | None = None
        self.cursor = 0
        self.committed = 0
        self.deciding_cancelled = False

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> tuple[ActionOutcome, ...]:
        while True:
            self._advance()
            waits: set[asyncio.Future[Any]] = set(self.running)
            if self.deciding is not None:
                waits.add(self.deciding[0])
            if self.starting is not None:
                waits.add(self.starting.started)
            if not waits:
                break
            await self._wait(waits)
            self._collect()
            if self.starting is None:
                await self._commit_known()
        self._write_not_run()
        await self._commit_known()
        if _FAULT in self.stops:
            raise self.stops[_FAULT][1]  # type: ignore[misc]
        if _BASE in self.stops:
            raise self.stops[_BASE][1]  # type: ignore[misc]
        if _CANCEL in self.stops:
            raise asyncio.CancelledError
        done = tuple(o for o in self.out if o is not None)
        assert len(done) == len(self.out)
        return done

    async def _wait(self, waits: set[asyncio.Future[Any]]) -> None:
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._stop(_CANCEL, len(self.actions), None)

    def _stop(self, kind: int, index: int, exc: BaseException | None) -> None:
        known = self.stops.get(kind)
        if known is None or index < known[0]:
            self.stops[kind] = (index, exc)
        self.flag.raised = True
        if kind == _ENV:
            return  # B13: running handlers finish and keep their own outcomes
        for task, entry in self.running.items():
            if entry.started.done() and not task.done():
                entry.cancel_sent = True
                task.cancel()
        if self.deciding is not None:
            self.deciding_cancelled = True
            self.deciding[0].cancel()

    # -- deciding and entering -----------------------------------------------------------------

    def _advance(self) -> None:
        while True:
            before = (self.cursor, self.deciding, self.ready)
            self._advance_once()
            if (self.cursor, self.deciding, self.ready) == before:
                return

    def _advance_once(self) -> None:
        if self.flag.raised and self.ready is not None:
            self.cursor = self.ready.index + 1  # allowed but never entered: "not run" at the end
            self.ready = None
        while self.cursor < len(self.actions) and self.deciding is None and self.ready is None:
            index = self.cursor
            call = self.actions[index].tool_call
            if call is None:
                self.out[index] = _refused("not executed: the action holds no tool call")
                self.cursor += 1
                continue
            try:
                self.owner.registry.validate(call)
            except ToolValidationError as exc:
                self.out[index] = _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
                self.cursor += 1
                continue
            if self.flag.raised:
                self.cursor += 1  # accepted, never entered: its "not run" sentence comes at the end
                continue
            self.deciding = (asyncio.ensure_future(self._decide(call)), index)
        self._enter_ready()

    async def _decide(self, call: ToolCall) -> tuple[str, Any]:
        try:
            refusal = await self.owner.single._decide(call, self.flag)
        except BaseException as exc:
            return "raised", exc
        return ("refused", refusal) if refusal is not None else ("allowed", None)

    def _classify(self, call: ToolCall) -> bool:
        spec = self.owner.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return True
        safe = spec.concurrency_safe
        if callable(safe):
            try:
                return safe(call.arguments) is not True
            except Exception:
                return True
        return safe is not True

    def _enter_ready(self) -> None:
        entry = self.ready
        if entry is None or self.starting is not None or self.flag.raised:
            return
        active = list(self.running.values())
        if len(active) >= self.owner.max_concurrency:
            return
        if active and (entry.exclusive or any(e.exclusive for e in active)):
            return
        self.ready = None
        self.cursor = entry.index + 1
        self.starting = entry
        self.running[asyncio.ensure_future(self._work(entry))] = entry

    # -- one entered call ------------------------------------------------------------------------

    async def _work(self, entry: _Entry) -> tuple[str, Any]:
        if self.journal is not None:
            try:
                await self.journal.started(entry.index, self.actions[entry.index])
            except BaseException as exc:
                entry.started.set_result(False)
                return "journal", exc
        if self.flag.raised:
            entry.started.set_result(False)
            return "not_entered", None
        entry.started.set_result(True)
        try:
            result = await self._chain(entry)
        except asyncio.CancelledError as exc:
            if entry.cancel_sent or self.flag.raised:
                return "cancelled", None
            return "base", exc
        except BaseException as exc:
            if isinstance(exc, Exception) and entry.cancel_sent:
                return "cancelled", None  # P9: a cancelled call ends the way its handler did
            if isinstance(exc, ToolEnvironmentError):
                return "outcome", _outcome(ActionStatus.ENV_ERROR, _exc_text(exc), False)
            if isinstance(exc, Exception):
                text = f"{type(exc).__name__}: {_exc_text(exc)}"
                return await self._post(entry, _outcome(ActionStatus.EXECUTED, text, False))
            return "base", exc
        if entry.cancel_sent:
            return "cancelled", None  # a wrapper swallowed the cancellation: not a finish
        if not isinstance(result, str):
            return "typeerror", TypeError(
                f"the handler chain of tool {entry.call.name!r} returned "
                f"{type(result).__name__}, not str"
            )
        return await self._post(entry, _outcome(ActionStatus.EXECUTED, result, False))

    async def _chain(self, entry: _Entry) -> Any:
        call = entry.call
        handler = self.owner.single._handlers[call.name]
        wrappers = self.owner.policy.wrappers

        async def step(level: int) -> Any:
            self._check_entry(entry)
            if level < len(wrappers):
                return await wrappers[level](call, lambda: step(level + 1))
            try:
                entry.last_result = await handler(plain_arguments(call))
            except asyncio.CancelledError as exc:
                entry.handler_end, entry.last_error = "cancelled", exc
                raise
            except BaseException as exc:
                entry.handler_end, entry.last_error = "raised", exc
                raise
            entry.handler_end = "returned"
            return entry.last_result

        return await step(0)

    def _check_entry(self, entry: _Entry) -> None:
        if entry.cancel_sent or self.flag.raised:
            raise asyncio.CancelledError

    async def _post(self, entry: _Entry, executed: ActionOutcome) -> tuple[str, Any]:
        text = executed.observation
        for position, post in enumerate(self.owner.policy.post):
            if entry.cancel_sent:
                return "outcome", _withheld(position, "CancelledError")
            try:
                text = await post(entry.call, text)
            except asyncio.CancelledError as exc:
                if entry.cancel_sent:
                    return "outcome", _withheld(position, "CancelledError")
                return "base", exc
            except Exception as exc:
                return "outcome", _withheld(position, type(exc).__name__)
            except BaseException as exc:
                return "base", exc
            if not isinstance(text, str):
                return "outcome", _outcome(
                    ActionStatus.EXECUTED,
                    f"withheld: post-processor {position} returned a non-str",
                    True,
                )
        return "outcome", _outcome(ActionStatus.EXECUTED, text, False)

    # -- results -------------------------------------------------------------------------------

    def _collect(self) -> None:
        if self.starting is not None and self.starting.started.done():
            self.starting = None
        if self.deciding is not None and self.deciding[0].done():
            task, index = self.deciding
            self.deciding = None
            self._decided(task, index)
        for task in [t for t in self.running if t.done()]:
            entry = self.running.pop(task)
            if self.starting is entry:
                self.starting = None
            self._settled(entry, task)

    def _decided(self, task: asyncio.Future[Any], index: int) -> None:
        call = self.actions[index].tool_call
        assert call is not None
        kind, value = task.result() if not task.cancelled() else ("stopped", None)
        if self.deciding_cancelled:
            return  # P9/P11: cancelled while deciding, the call is not entered and "not run"
        if kind == "raised" and not isinstance(value, Exception):
            if isinstance(value, asyncio.CancelledError) and self.flag.raised:
                return  # our own stop reached the deciding stage: the call is not run
            self._stop(_BASE, index, value)
        elif kind == "refused":
            self.out[index] = value
            self.cursor = index + 1
        elif kind == "allowed" and not self.flag.raised:
            self.ready = _Entry(index=index, call=call, exclusive=self._classify(call))

    def _settled(self, entry: _Entry, task: asyncio.Future[Any]) -> None:
        kind, value = task.result()
        if kind == "outcome":
            self.out[entry.index] = value
            if value.status is ActionStatus.ENV_ERROR:
                self._stop(_ENV, entry.index, None)
        elif kind == "cancelled":
            self.out[entry.index] = self._after_cancel(entry)
        elif kind == "base":
            self.out[entry.index] = _outcome(ActionStatus.ENV_ERROR, _INTERRUPTED, True)
            self._stop(_BASE, entry.index, value)
        elif kind in ("journal", "typeerror"):
            self._stop(_FAULT, entry.index, value)

    def _after_cancel(self, entry: _Entry) -> ActionOutcome:
        """P9 in a batch: the call ended the way its handler ended (B14)."""
        if entry.handler_end == "returned" and isinstance(entry.last_result, str):
            if self.owner.policy.post:
                return _withheld(0, "CancelledError")
            return _outcome(ActionStatus.EXECUTED, entry.last_result, False)
        error = entry.last_error
        if entry.handler_end == "raised" and isinstance(error, Exception):
            if isinstance(error, ToolEnvironmentError):
                return _outcome(ActionStatus.ENV_ERROR, _exc_text(error), False)
            if self.owner.policy.post:
                return _withheld(0, "CancelledError")
            return _outcome(
                ActionStatus.EXECUTED, f"{type(error).__name__}: {_exc_text(error)}", False
            )
        return _outcome(ActionStatus.ENV_ERROR, _INTERRUPTED, True)

    def _write_not_run(self) -> None:
        if _FAULT in self.stops:
            return
        if _BASE in self.stops:
            k, exc = self.stops[_BASE]
            text = f"not run: call {k} raised {type(exc).__name__}"
        elif _CANCEL in self.stops:
            text = "not run: the batch was cancelled"
        elif _ENV in self.stops:
            k = min(
                i
                for i, o in enumerate(self.out)
                if o is not None and o.status is ActionStatus.ENV_ERROR
            )
            text = f"not run because call {k} reported an environment error"
        else:
            return
        for index, outcome in enumerate(self.out):
            if outcome is None:
                self.out[index] = _outcome(ActionStatus.NOT_EXECUTED, text, True)

    async def _commit_known(self) -> None:
        while (
            self.journal is not None
            and _FAULT not in self.stops
            and self.committed < len(self.out)
            and self.out[self.committed] is not None
        ):
            index = self.committed
            outcome = self.out[index]
            assert outcome is not None
            task = asyncio.ensure_future(self.journal.committed(index, outcome))
            while not task.done():
                await self._wait({task})
            if task.cancelled() or task.exception() is not None:
                fault = asyncio.CancelledError() if task.cancelled() else task.exception()
                self._stop(_FAULT, index, fault)
                return
            self.committed += 1


def _withheld(position: int, cls: str) -> ActionOutcome:
    return _outcome(
        ActionStatus.EXECUTED, f"withheld: post-processor {position} raised {cls}", True
    )


def batch_factory(
    registry: ToolRegistry, max_concurrency: int = 10, policy: ToolPolicy | None = None
) -> SequentialPolicyBatchExecutor:
    """The batch executor for `registry` under `policy` (the kit's batch certification target)."""
    return SequentialPolicyBatchExecutor(registry, max_concurrency, policy)
