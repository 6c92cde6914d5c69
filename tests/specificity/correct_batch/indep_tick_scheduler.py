"""A batch executor whose scheduler wakes on a short timer tick, never on a completion.

Written from docs/contract.md (section 10, B1-B18, and the single-call table E1-E15 it
refers to) and polyloop's public API alone; it neither reads nor uses polyloop's batch
scheduler or its single-call executor: section 6 is done here. `ToolRegistry.validate`
decides rejection (only `ToolValidationError` rejects, E2), the handler gets
`plain_arguments(call)` (its own plain copy, E13/B11), and its ending is mapped by E3-E5,
E9 and E12; an action without a tool call gets this module's own sentence (E1).

How it waits: the task awaiting `execute_batch` sleeps `TICK` seconds between scans
(`await asyncio.sleep(TICK)`). A scan is synchronous: it reaps the tasks whose `.done()` is
true, cancels entered calls once the batch must stop, hands the journal lane to the next due
`committed()` or to the next call to open, and starts every call the rules allow. No
done-callback, event, condition or future tells it that something ended: the next tick does.

Stops are raised by the call tasks themselves, in the step where they happen (an ENV_ERROR,
a non-str result, a handler's own `BaseException`, a failing `started()`), so no call is
entered after one even before the next scan. An outside cancellation lands on the tick's
sleep; it is remembered (however often it comes), entered calls are cancelled, and ticking
goes on until every task has ended and every call is committed; then a fresh
`CancelledError` is raised. Journal calls never overlap and are never cancelled by the batch.

A cut call keeps the E3-E5 outcome its own ending gives (B14: a handler may catch the
cancellation and return; a non-str result is still B16's fault); only a call ended by the
cancellation, its `CancelledError` propagating, gets the synthetic "halted" sentence.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
    plain_arguments,
)

TICK = 0.001
"""Seconds between two scans of one batch."""

CODE_ACTION = "tick-scheduler: no tool call here (the action is code), so no handler ran"
SKIP_ENV = "tick-scheduler: left unstarted since call {k} found the environment broken"
SKIP_CANCELLED = "tick-scheduler: left unstarted since the batch was cancelled from outside"
SKIP_RAISED = "tick-scheduler: left unstarted since call {k} raised {cls}"
HALTED = "tick-scheduler: halted mid-call by the stop; its effects may or may not have happened"
STR_FAILED = "<exception str() failed>"


class _Phase(enum.Enum):
    QUEUED = "queued"  # accepted, waiting for its turn
    OPENING = "opening"  # task created; started() may be awaited; handler not entered
    RUNNING = "running"  # handler entered, not ended
    ENDED = "ended"  # outcome known (a rejected call begins here)
    UNSTARTED = "unstarted"  # accepted, and will never be entered
    VOID = "void"  # entered, then a fault (E9): no outcome is made up for it


class _Cause(enum.Enum):
    ENV, CANCELLED, RAISED, FAULT = "env", "cancelled", "raised", "fault"


def _made(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _text_of(exc: BaseException) -> str | None:
    """`str(exc)` as an exact `str`, or None when it cannot be had (E12)."""
    try:
        text = str(exc)
    except Exception:
        return None
    return str.__str__(text) if isinstance(text, str) else None


def _map_exception(exc: Exception) -> ActionOutcome:
    """E3, E4 and E12: ENV_ERROR with str(exc), or EXECUTED "<Class>: <str(exc)>"."""
    text = _text_of(exc)
    described = f"{type(exc).__name__}: {STR_FAILED if text is None else text}"
    if isinstance(exc, ToolEnvironmentError):
        return _made(ActionStatus.ENV_ERROR, described if text is None else text, False)
    return _made(ActionStatus.EXECUTED, described, False)


@dataclass(eq=False)
class _Call:
    index: int
    action: Action
    spec: ToolSpec | None  # None for a rejected call
    outcome: ActionOutcome | None
    phase: _Phase
    safe: bool | None = None
    task: asyncio.Task[None] | None = None
    cut: bool = False


class _Turn:
    """One `execute_batch` call; advanced by `scan()` once per tick."""

    def __init__(
        self,
        owner: TickSchedulerExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner = owner
        self.journal = journal
        self.loop = asyncio.get_running_loop()
        self.calls: list[_Call] = []
        for index, action in enumerate(actions):
            spec, rejection = owner.admit(action)
            phase = _Phase.QUEUED if rejection is None else _Phase.ENDED
            self.calls.append(_Call(index, action, spec, rejection, phase))
        self.next_up = 0  # the lowest call not yet started or passed over
        self.live: list[_Call] = []  # calls whose task has not been reaped
        self.lane_call: _Call | None = None  # the call whose started() holds the journal lane
        self.lane_commit: asyncio.Task[BaseException | None] | None = None
        self.commits = 0
        self.cause: _Cause | None = None  # the first stop
        self.env_first: int | None = None
        self.own: tuple[int, BaseException] | None = None
        self.fault: BaseException | None = None
        self.outside: bool = False
        self.unstarted: ActionOutcome | None = None

    # -- stop bookkeeping ----------------------------------------------------------------

    def halt(self, cause: _Cause) -> None:
        if self.cause is None:
            self.cause = cause

    def faulted(self, exc: BaseException) -> None:
        if self.fault is None:
            self.fault = exc
        self.halt(_Cause.FAULT)

    def unstarted_outcome(self) -> ActionOutcome:
        """Built once, when first needed: by then every entered call has ended."""
        if self.unstarted is None:
            if self.own is not None:
                text = SKIP_RAISED.format(k=self.own[0], cls=type(self.own[1]).__name__)
            elif self.cause is _Cause.ENV and self.env_first is not None:
                text = SKIP_ENV.format(k=self.env_first)
            else:
                text = SKIP_CANCELLED
            self.unstarted = _made(ActionStatus.NOT_EXECUTED, text, True)
        return self.unstarted

    def answer(self, call: _Call) -> ActionOutcome | None:
        if call.phase is _Phase.ENDED:
            return call.outcome
        if call.phase is _Phase.UNSTARTED or (call.phase is _Phase.QUEUED and self.cause):
            return self.unstarted_outcome()
        return None

    # -- a call's own task ---------------------------------------------------------------

    async def open_and_run(self, call: _Call) -> None:
        """started(), then the handler, mapped by section 6. Never raises."""
        if self.cause is not None:
            call.phase = _Phase.UNSTARTED
            return
        journal = self.journal
        if journal is not None:
            try:
                await journal.started(call.index, call.action)
            except BaseException as exc:  # journal fault: not entered (B16, J2)
                call.phase = _Phase.UNSTARTED
                self.faulted(exc)
                return
            if self.cause is not None:  # stopped while started() was awaited (B17)
                call.phase = _Phase.UNSTARTED
                return
        spec, tool_call = call.spec, call.action.tool_call
        assert spec is not None and spec.handler is not None and tool_call is not None
        arguments = plain_arguments(tool_call)
        call.phase = _Phase.RUNNING
        try:
            result = await spec.handler(arguments)
        except Exception as exc:
            outcome = _map_exception(exc)
        except BaseException as exc:
            # Ended by our own cancellation, or by its own BaseException (B15): interrupted.
            self.ended(call, _made(ActionStatus.ENV_ERROR, HALTED, True))
            if not (call.cut and isinstance(exc, asyncio.CancelledError)):
                if self.own is None:
                    self.own = (call.index, exc)
                self.halt(_Cause.RAISED)
            return
        else:
            if not isinstance(result, str):  # E9 in a batch, cut or not: a fault (B16)
                call.phase = _Phase.VOID
                self.faulted(
                    TypeError(
                        f"tool {spec.name!r}: its handler returned "
                        f"{type(result).__name__}, but a handler must return a str"
                    )
                )
                return
            outcome = _made(ActionStatus.EXECUTED, str.__str__(result), False)
        # Returned, or raised an ordinary exception: its own outcome stands even if cut (B14).
        if outcome.status is ActionStatus.ENV_ERROR:
            if self.env_first is None or call.index < self.env_first:
                self.env_first = call.index
            self.halt(_Cause.ENV)
        self.ended(call, outcome)

    @staticmethod
    def ended(call: _Call, outcome: ActionOutcome) -> None:
        call.outcome, call.phase = outcome, _Phase.ENDED

    # -- one tick ------------------------------------------------------------------------

    def scan(self) -> None:
        commit = self.lane_commit
        if commit is not None and commit.done():
            self.lane_commit = None
            problem = commit.result()
            if problem is None:
                self.commits += 1
            else:
                self.faulted(problem)
        self.live = [call for call in self.live if not (call.task and call.task.done())]
        if self.lane_call is not None and self.lane_call.phase is not _Phase.OPENING:
            self.lane_call = None
        if self.outside or self.own is not None or self.fault is not None:
            for call in self.live:
                if call.phase is _Phase.RUNNING and not call.cut:
                    call.cut = True
                    assert call.task is not None
                    call.task.cancel()
        if self.lane_free():
            self.commit_due()
        self.start_due()

    def lane_free(self) -> bool:
        return self.lane_call is None and self.lane_commit is None

    def commit_due(self) -> None:
        journal = self.journal
        if journal is None or self.fault is not None or self.commits == len(self.calls):
            return
        outcome = self.answer(self.calls[self.commits])
        if outcome is not None:
            self.lane_commit = self.loop.create_task(
                self.owner.record(journal, self.commits, outcome)
            )

    def start_due(self) -> None:
        limit = self.owner.max_concurrency
        while self.cause is None and self.next_up < len(self.calls):
            if self.journal is not None and not self.lane_free():
                return
            call = self.calls[self.next_up]
            if call.phase is _Phase.ENDED:  # rejected: resolved in place (B10)
                self.next_up += 1
                continue
            if any(other.safe is False for other in self.live):
                return  # an exclusive call is alive: nothing joins it (B6)
            if call.safe is None:
                call.safe = self.owner.classify(call.action)
            if len(self.live) >= (limit if call.safe else 1):
                return  # no free slot, or an exclusive call waiting for the others to end
            call.phase = _Phase.OPENING
            call.task = self.loop.create_task(self.open_and_run(call))
            self.live.append(call)
            self.next_up += 1
            if self.journal is not None:
                self.lane_call = call
                return

    def over(self) -> bool:
        if self.live or self.lane_commit is not None:
            return False
        if self.fault is not None:
            return True
        if self.journal is not None:
            return self.commits == len(self.calls)
        return self.cause is not None or self.next_up == len(self.calls)

    # -- driving -------------------------------------------------------------------------

    async def drive(self) -> tuple[ActionOutcome, ...]:
        self.scan()
        while not self.over():
            try:
                await asyncio.sleep(TICK)
            except asyncio.CancelledError:
                self.outside = True
                self.halt(_Cause.CANCELLED)
            self.scan()
        own = self.own[1] if self.own is not None else None
        if own is not None and (self.fault is None or not isinstance(own, asyncio.CancelledError)):
            raise own
        if self.fault is not None:
            raise self.fault
        if self.outside:
            raise asyncio.CancelledError()
        answers = [self.answer(call) for call in self.calls]
        assert all(answer is not None for answer in answers)
        return tuple(answer for answer in answers if answer is not None)


class TickSchedulerExecutor:
    """Runs one model turn's tool calls under contract section 10, scanning once per tick."""

    def __init__(self, registry: ToolRegistry, max_concurrency: int) -> None:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(
                f"max_concurrency must be an int >= 1, got {type(max_concurrency).__name__}"
            )
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be an int >= 1, got {max_concurrency}")
        lacking = [spec.name for spec in registry.specs if spec.handler is None]
        if lacking:
            raise ValueError(f"tools without a handler: {', '.join(map(repr, lacking))}")
        self.registry = registry
        self.max_concurrency = max_concurrency

    def parameters(self) -> dict[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
        }

    def admit(self, action: Action) -> tuple[ToolSpec | None, ActionOutcome | None]:
        """(spec, None) for an accepted call; (None, its E1/E2 outcome) for a rejected one."""
        call = action.tool_call
        if call is None:
            return None, _made(ActionStatus.NOT_EXECUTED, CODE_ACTION, True)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return None, _made(ActionStatus.NOT_EXECUTED, str(exc), True)
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        return spec, None

    def classify(self, action: Action) -> bool:
        """Fail-closed (B9): only an exact True from the spec's rule makes a call safe."""
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:  # exclusive (B6; docs/contract.md said so only from 2026-12-06)
            return False
        rule = spec.concurrency_safe
        if isinstance(rule, bool):
            return rule is True
        try:
            verdict = rule(call.arguments)
        except Exception:
            return False
        return verdict is True

    @staticmethod
    async def record(
        journal: BatchJournal, index: int, outcome: ActionOutcome
    ) -> BaseException | None:
        try:
            await journal.committed(index, outcome)
        except BaseException as exc:  # returned, not raised: a task must not raise it
            return exc
        return None

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        batch = tuple(actions)
        for position, action in enumerate(batch):
            if not isinstance(action, Action):
                raise TypeError(
                    f"actions[{position}] must be an Action, got {type(action).__name__}"
                )
        if not batch:
            return ()
        return await _Turn(self, batch, journal).drive()


def make_executor(registry: ToolRegistry, *, max_concurrency: int = 10) -> TickSchedulerExecutor:
    """The factory the conformance kit calls."""
    return TickSchedulerExecutor(registry, max_concurrency)
