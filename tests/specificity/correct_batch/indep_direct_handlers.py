"""A batch executor that dispatches handlers itself, scheduled by a generator and a polling loop.

Written from the contract alone (CONTRACT.md sections 1-6 and 10, docs/contract.md and
polyloop's public API); nothing of polyloop's batch module, of `RegistryExecutor.execute` or
of the kit was read.

Structure: section 6 is implemented here (`_dispatch`): `registry.validate`, the spec's
handler awaited with a plain deep copy of the arguments made by this module, and the mapping
of E3-E5, E9 and E12; `registry.executor()` is never used. Scheduling is split in two. The
*plan* is a plain generator (`_plan`) that owns every scheduling rule (B3, B6-B8, B10): it
yields commands (`_Classify`, `_Open`, `_Poll`) and is sent back the answers and events; it
knows nothing of asyncio. The *driver* (`_Driver.run`) owns every effect: it polls the live
futures with `asyncio.wait(..., FIRST_COMPLETED)`, turns what finished into events for the
plan, starts the call tasks the plan opens, and keeps at most one commit task in flight,
committing in model order (B2). A stop (B13-B16) is told to the plan before any event that
frees a slot, so nothing is opened after it; the calls never entered get their sentence once
the plan has ended, from the stop that governs.

Cancellation from outside is answered by re-raising the latest `CancelledError` that the
driver's own task received, once every call is committed.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolValidationError,
)

_CODE_ACTION = "Nothing was dispatched: a code action is not a tool call this executor can run."
_STOPPED_BY_ENV = "Not started: the batch halted on the environment error that call {k} reported."
_STOPPED_BY_CANCEL = "Not started: a cancellation stopped the batch before this call could begin."
_STOPPED_BY_RAISE = "Not started: the batch halted when call {k} raised {cls}."
_BROKEN_OFF = "Broken off while in progress; nobody can tell what it already did."
_UNPRINTABLE = "<exception str() failed>"


def _result(status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _plain_copy(value: Any) -> Any:
    """A fresh tree of plain dicts and lists equal to a call's read-only arguments (E13)."""
    if isinstance(value, Mapping):
        return {key: _plain_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_copy(item) for item in value]
    if value is None or type(value) in (str, int, float, bool):
        return value
    return copy.deepcopy(value)


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return _UNPRINTABLE  # E12: an exception whose str() raises still gives an outcome


async def _dispatch(registry: ToolRegistry, call: ToolCall) -> ActionOutcome:
    """Section 6 for an accepted call: E3, E4, E5, E9, E12 (E6: BaseExceptions pass)."""
    spec = registry.spec_for(call.name)
    assert spec is not None and spec.handler is not None
    try:
        returned = await spec.handler(_plain_copy(call.arguments))
    except ToolEnvironmentError as exc:
        return _result(ActionStatus.ENV_ERROR, _text_of(exc), False)
    except Exception as exc:
        return _result(ActionStatus.EXECUTED, f"{type(exc).__name__}: {_text_of(exc)}", False)
    if not isinstance(returned, str):
        raise TypeError(
            f"the handler of tool {call.name!r} returned {type(returned).__name__}, "
            "but a handler must return str"
        )
    return _result(ActionStatus.EXECUTED, returned, False)


# The plan: commands it yields, events it is sent --------------------------------------------


@dataclass(frozen=True)
class _Classify:
    index: int  # answer: True when the call is concurrency-safe


@dataclass(frozen=True)
class _Open:
    index: int  # answer: None


@dataclass(frozen=True)
class _Poll:
    pass  # answer: one event


@dataclass(frozen=True)
class _Entered:
    index: int  # the call left its opening (entered or not): the next may open


@dataclass(frozen=True)
class _Settled:
    index: int


@dataclass(frozen=True)
class _Halt:
    pass


_Command = _Classify | _Open | _Poll
_Event = _Entered | _Settled | _Halt


def _plan(accepted: Sequence[int], limit: int) -> Generator[_Command, Any, None]:
    """Every scheduling decision of one batch; returns when nothing runs and nothing will open."""
    waiting = list(reversed(accepted))  # the head is at the end
    safe: dict[int, bool] = {}
    running: set[int] = set()
    exclusive: int | None = None
    opening: int | None = None
    halted = False
    while True:
        while not halted and waiting and opening is None:
            head = waiting[-1]
            if head not in safe:
                safe[head] = bool((yield _Classify(head)))
            if running and (not safe[head] or exclusive is not None or len(running) >= limit):
                break
            waiting.pop()
            running.add(head)
            opening = head
            if not safe[head]:
                exclusive = head
            yield _Open(head)
        if not running and (halted or not waiting):
            return
        event = yield _Poll()
        if isinstance(event, _Halt):
            halted = True
        elif isinstance(event, _Entered):
            if opening == event.index:
                opening = None
        else:
            running.discard(event.index)
            if exclusive == event.index:
                exclusive = None
            if opening == event.index:
                opening = None


# The driver -----------------------------------------------------------------------------------

_FAULT, _RAISED, _CANCELLED, _ENV = range(4)  # the contract's order of stops: lowest governs


@dataclass
class _Ending:
    """How one call task ended."""

    kind: str  # "outcome", "not-entered", "broken-off", "raised", "fault"
    outcome: ActionOutcome | None = None
    error: BaseException | None = None


class _Driver:
    def __init__(
        self,
        registry: ToolRegistry,
        limit: int,
        actions: Sequence[Action],
        journal: BatchJournal | None,
    ) -> None:
        self.registry = registry
        self.limit = limit
        self.actions = tuple(actions)
        self.journal = journal
        self.outcomes: list[ActionOutcome | None] = [None] * len(self.actions)
        self.accepted: list[int] = []
        for index, action in enumerate(self.actions):
            call = action.tool_call
            if call is None:
                self.outcomes[index] = _result(ActionStatus.NOT_EXECUTED, _CODE_ACTION, True)
                continue
            try:
                registry.validate(call)
            except ToolValidationError as exc:
                self.outcomes[index] = _result(ActionStatus.NOT_EXECUTED, str(exc), True)
                continue
            self.accepted.append(index)
        self.stops: set[int] = set()
        self.halt_told = False
        self.fault: BaseException | None = None
        self.raised: dict[int, BaseException] = {}
        self.received: asyncio.CancelledError | None = None
        self.cut: set[int] = set()
        self.calls: dict[asyncio.Future[_Ending], int] = {}
        self.entries: dict[asyncio.Future[None], int] = {}
        self.commit: asyncio.Task[BaseException | None] | None = None
        self.committed_up_to = 0
        self.plan = _plan(self.accepted, limit)
        self.plan_over = False

    # talking to the plan

    def _tell(self, event: _Event | None) -> None:
        """Send the plan one event and carry out its commands until it polls or ends."""
        try:
            command = next(self.plan) if event is None else self.plan.send(event)
            while not isinstance(command, _Poll):
                if isinstance(command, _Classify):
                    command = self.plan.send(self._classify(command.index))
                else:
                    self._open(command.index)
                    command = self.plan.send(None)
        except StopIteration:
            self.plan_over = True

    def _classify(self, index: int) -> bool:
        call = self.actions[index].tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        rule = spec.concurrency_safe
        if not callable(rule):
            return rule is True
        try:
            return rule(call.arguments) is True
        except Exception:
            return False  # fail-closed

    def _open(self, index: int) -> None:
        loop = asyncio.get_running_loop()
        entry: asyncio.Future[None] = loop.create_future()
        self.entries[entry] = index
        self.calls[loop.create_task(self._call(index, entry))] = index

    def _stop(self, kind: int) -> None:
        self.stops.add(kind)
        if kind != _ENV:
            for task, index in self.calls.items():
                if index not in self.cut:
                    self.cut.add(index)
                    task.cancel()
        if not self.halt_told and not self.plan_over:
            self.halt_told = True
            self._tell(_Halt())

    # one call

    async def _call(self, index: int, entry: asyncio.Future[None]) -> _Ending:
        action = self.actions[index]
        call = action.tool_call
        assert call is not None
        try:
            if self.journal is not None:
                try:
                    await self.journal.started(index, action)
                except asyncio.CancelledError as exc:
                    if index in self.cut:
                        return _Ending("not-entered")
                    return _Ending("fault", error=exc)
                except BaseException as exc:
                    return _Ending("fault", error=exc)
            if self.stops:
                return _Ending("not-entered")
            entry.set_result(None)
            try:
                outcome = await _dispatch(self.registry, call)
            except asyncio.CancelledError as exc:
                if index in self.cut:
                    return _Ending("broken-off")
                return _Ending("raised", error=exc)
            except Exception as exc:  # E9's TypeError
                return _Ending("fault", error=exc)
            except BaseException as exc:  # kept inside the task: see _Ending's kinds
                return _Ending("raised", error=exc)
            if outcome.status is ActionStatus.ENV_ERROR:
                self.stops.add(_ENV)  # seen here, so a call opening now will not enter
            return _Ending("outcome", outcome=outcome)
        finally:
            if not entry.done():
                entry.set_result(None)

    # the loop

    async def run(self) -> tuple[ActionOutcome, ...]:
        self._tell(None)
        while True:
            if self.plan_over:
                self._settle_the_rest()
            self._commit_next()
            if self.plan_over and self.commit is None:
                break
            live: set[asyncio.Future[Any]] = {*self.calls, *self.entries}
            if self.commit is not None:
                live.add(self.commit)
            try:
                done, _ = await asyncio.wait(live, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError as exc:
                self.received = exc  # B14: keep polling until every call is committed
                self._stop(_CANCELLED)
                continue
            self._absorb(done)
        if self.fault is not None:
            raise self.fault
        if self.raised:
            raise self.raised[min(self.raised)]
        if self.received is not None:
            raise self.received
        return tuple(outcome for outcome in self.outcomes if outcome is not None)

    def _absorb(self, done: set[asyncio.Future[Any]]) -> None:
        entered: list[int] = []
        settled: list[int] = []
        for future in done:
            if future is self.commit:
                failure = self.commit.result()
                self.commit = None
                if failure is not None:
                    self._record_fault(failure)
                else:
                    self.committed_up_to += 1
            elif future in self.entries:
                entered.append(self.entries.pop(future))
            else:
                index = self.calls.pop(future)
                settled.append(index)
                self._record(index, future)
        for future, index in list(self.entries.items()):
            if index in settled:  # a task cancelled before its first step never signals
                del self.entries[future]
        if self.stops and not self.plan_over:
            self._stop(min(self.stops))  # the plan hears of a stop before any freed slot
        for index in sorted(entered):
            if not self.plan_over:
                self._tell(_Entered(index))
        for index in sorted(settled):
            if not self.plan_over:
                self._tell(_Settled(index))

    def _record(self, index: int, task: asyncio.Future[_Ending]) -> None:
        if task.cancelled():  # cancelled before its first step: never entered
            return
        ending = task.result()
        if ending.kind == "outcome":
            self.outcomes[index] = ending.outcome
        elif ending.kind in ("broken-off", "raised"):
            self.outcomes[index] = _result(ActionStatus.ENV_ERROR, _BROKEN_OFF, True)
            if ending.kind == "raised":
                assert ending.error is not None
                self.raised[index] = ending.error
                self.stops.add(_RAISED)
        elif ending.kind == "fault":
            assert ending.error is not None
            self._record_fault(ending.error)

    def _record_fault(self, error: BaseException) -> None:
        if self.fault is None:
            self.fault = error
        self.stops.add(_FAULT)
        self._stop(_FAULT)

    def _settle_the_rest(self) -> None:
        sentence = _STOPPED_BY_CANCEL
        if self.stops:
            governing = min(self.stops)
            if governing == _RAISED:
                k = min(self.raised)
                sentence = _STOPPED_BY_RAISE.format(k=k, cls=type(self.raised[k]).__name__)
            elif governing == _ENV:
                k = min(
                    index
                    for index, outcome in enumerate(self.outcomes)
                    if outcome is not None and outcome.status is ActionStatus.ENV_ERROR
                )
                sentence = _STOPPED_BY_ENV.format(k=k)
        for index, outcome in enumerate(self.outcomes):
            if outcome is None:
                self.outcomes[index] = _result(ActionStatus.NOT_EXECUTED, sentence, True)

    def _commit_next(self) -> None:
        if self.journal is None or self.commit is not None or self.fault is not None:
            return
        index = self.committed_up_to
        if index >= len(self.actions):
            return
        outcome = self.outcomes[index]
        if outcome is None:
            return
        self.commit = asyncio.get_running_loop().create_task(_commit(self.journal, index, outcome))


async def _commit(
    journal: BatchJournal, index: int, outcome: ActionOutcome
) -> BaseException | None:
    try:
        await journal.committed(index, outcome)
    except BaseException as exc:  # a fault is a value here; the driver raises it (B16)
        return exc
    return None


class DirectHandlersBatchExecutor:
    """Dispatches each call to its spec's handler itself (section 6), scheduled by `_plan`."""

    def __init__(self, registry: ToolRegistry, *, max_concurrency: int) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(
                f"max_concurrency must be an int >= 1, got {type(max_concurrency).__name__}"
            )
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be an int >= 1, got {max_concurrency}")
        missing = [name for name in registry.names() if _handler_missing(registry, name)]
        if missing:
            raise ValueError(f"tools without a handler: {', '.join(map(repr, missing))}")
        self.registry = registry
        self.max_concurrency = max_concurrency

    def parameters(self) -> Mapping[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
            "dispatch": "direct-handlers",
        }

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        if not actions:
            return ()
        return await _Driver(self.registry, self.max_concurrency, actions, journal).run()


def _handler_missing(registry: ToolRegistry, name: str) -> bool:
    spec = registry.spec_for(name)
    return spec is None or spec.handler is None


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> DirectHandlersBatchExecutor:
    """The certification target: `factory(registry, max_concurrency=N)`."""
    return DirectHandlersBatchExecutor(registry, max_concurrency=max_concurrency)
