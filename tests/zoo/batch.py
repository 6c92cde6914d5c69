"""Broken batch executors: each is `ZooBatch` with one planted bug, and names the B clauses
that bug breaks (`VIOLATES`). Entries with a `REPORT` are modelled on a user bug report of
``../shared/batch-dispatch.md`` section 4 (the realistic set); the others plant the smallest
bug that breaks exactly one clause (the per-clause set).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from polyloop import Action, ActionOutcome, ActionStatus
from zoo.batch_base import (
    INTERRUPTED,
    ZooBatch,
    _Batch,
    _Raised,
    not_run,
    synthetic,
)

__all__ = ["BROKEN_BATCH", "REALISTIC"]


# --- B1 -------------------------------------------------------------------------------------


class ReturnsAList(ZooBatch):
    """Returns a list of outcomes, not a tuple (B1)."""

    VIOLATES = ("B1",)

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        return list(await super().execute_batch(actions, journal))


class NeverEndsABatch(ZooBatch):
    """Runs every handler of a batch of two or more calls, then keeps its event loop busy and
    never returns, as `polyloop/batch.py` does with `_commit_ready`'s ``index + 1`` turned into
    ``index + 0``: a livelock, not a blocked loop. B1 (one outcome per call) and B13 (a batch
    stopped by an environment error still returns its outcomes)."""

    VIOLATES = ("B1", "B13")

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        outcomes = await super().execute_batch(actions, journal)
        if len(outcomes) < 2:
            return outcomes
        while True:
            await asyncio.sleep(0)


class _EndsOnIdenticalCount(_Batch):
    def done(self) -> bool:
        return not self.running and (self.next is self.count or self.stop is not None)


class CountComparedByIdentity(ZooBatch):
    """Ends the batch when the next call's index *is* the call count: past 256 calls the two
    ints are never the same object, so the batch never returns once every handler has ended
    (B1). polyloop's `_Batch.run` with ``>=`` turned into ``is`` survived the kit before its
    300-call traps."""

    VIOLATES = ("B1",)
    BATCH = _EndsOnIdenticalCount


class RaisesWithNothingToStopIt(ZooBatch):
    """With a journal, records each call as started and then skips it, as if a stop had come
    (an inverted stop test after `started`); building the "not run" text then finds no stop,
    and execute_batch raises though nothing stopped the batch (B1); cancelled meanwhile, it
    raises with nothing committed (B2). A mutant of `RegistryBatchExecutor` with the first bug
    passed the kit before B1 judged raises."""

    VIOLATES = ("B1", "B2")

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        actions = list(actions)
        if journal is None or not actions:
            return await super().execute_batch(actions, journal)
        for index, action in enumerate(actions):
            if not self.rejected(action):
                await journal.started(index, action)
        raise RuntimeError("coroutine raised StopIteration")


class _CompletionOrder(_Batch):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.finished: list[int] = [i for i, r in enumerate(self.rejected) if r]

    def record(self, index: int, result: object, sent: bool) -> None:
        super().record(index, result, sent)
        if self.outcomes[index] is not None and index not in self.finished:
            self.finished.append(index)

    async def run(self) -> tuple[ActionOutcome, ...]:
        outcomes = await super().run()
        order = self.finished + [i for i in range(self.count) if i not in self.finished]
        return tuple(outcomes[i] for i in order)


class ReturnsCompletionOrder(ZooBatch):
    """Returns the outcomes in the order the calls finished, not in model order (B1), so what
    it returns is not what it committed (B2)."""

    VIOLATES = ("B1", "B2")
    REPORT = "anthropics/claude-code#21906, can1357/oh-my-pi#11179, vercel/ai#16578"
    BATCH = _CompletionOrder


# --- B2 -------------------------------------------------------------------------------------


class _CommitsOnCompletion(_Batch):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.done_order: list[int] = []
        self.sent_commits: set[int] = set()

    def record(self, index: int, result: object, sent: bool) -> None:
        super().record(index, result, sent)
        if self.outcomes[index] is not None:
            self.done_order.append(index)

    async def commit_ready(self) -> None:
        if self.journal is None or self.pending_start:
            return
        known = [i for i in range(self.count) if self.rejected[i]] + self.done_order
        known += [i for i in range(self.count) if self.outcomes[i] is not None]
        for index in dict.fromkeys(known):
            if index not in self.sent_commits and self.outcomes[index] is not None:
                self.sent_commits.add(index)
                await self.journal.committed(index, self.outcomes[index])


class CommitsInCompletionOrder(ZooBatch):
    """Commits each call as soon as it finishes, in completion order (B2)."""

    VIOLATES = ("B2",)
    REPORT = "anthropics/claude-code#21906 (tool_result blocks in completion order)"
    BATCH = _CommitsOnCompletion


class _CommitsAtEnd(_Batch):
    async def commit_ready(self) -> None:
        if self.stop is not None or (self.next >= self.count and not self.running):
            await super().commit_ready()


class CommitsOnlyAtTheEnd(ZooBatch):
    """Commits nothing until the batch is over, then everything (B2: not as soon as known)."""

    VIOLATES = ("B2",)
    BATCH = _CommitsAtEnd


# --- B3 -------------------------------------------------------------------------------------


class _Shuffled(_Batch):
    async def body(self, index: int) -> object:
        if index % 2 == 0 and self.journal is None:
            await asyncio.sleep(0)  # the even calls start a turn late
            await asyncio.sleep(0)
        return await super().body(index)


class EntersOutOfOrder(ZooBatch):
    """Without a journal, even-numbered calls reach their handler two loop turns late, so a
    later safe call is entered first (B3)."""

    VIOLATES = ("B3",)
    BATCH = _Shuffled


# --- B4 -------------------------------------------------------------------------------------


class RetriesFailures(ZooBatch):
    """Retries a call whose handler raised, once: the handler runs twice (B4)."""

    VIOLATES = ("B4",)
    REPORT = "crewAIInc/crewAI#5802 (a failing tool invoked twice per attempt)"

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        outcome = await super().run_call(index, action)
        if outcome.status is ActionStatus.EXECUTED and outcome.observation.startswith("ValueError"):
            outcome = await super().run_call(index, action)
        return outcome


class ErrorsBecomeNotExecuted(ZooBatch):
    """Reports an ordinary handler exception as NOT_EXECUTED (B4: E4 says EXECUTED)."""

    VIOLATES = ("B4",)

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        outcome = await super().run_call(index, action)
        if outcome.status is ActionStatus.EXECUTED and outcome.observation.startswith("ValueError"):
            return ActionOutcome(
                status=ActionStatus.NOT_EXECUTED,
                observation=outcome.observation,
                observation_is_synthetic=False,
                env_reported_completion=False,
                observation_truncated_chars=0,
            )
        return outcome


# --- B5 -------------------------------------------------------------------------------------


class TimestampsInSyntheticText(ZooBatch):
    """Says when a call was skipped: "not run: ... (after 0.003s)" (B5)."""

    VIOLATES = ("B5",)
    REPORT = "vercel/ai#16578 (nondeterministic prompt bytes break prompt caching)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.began = time.monotonic()

    def not_run_text(self, stop: str, first: int, name: str) -> str:
        text = super().not_run_text(stop, first, name)
        return f"{text} (after {time.monotonic() - self.began:.3f}s)"


# --- B6 -------------------------------------------------------------------------------------


class IgnoresCompletesRun(ZooBatch):
    """Treats a completes_run tool as its concurrency_safe flag says (S6: it is exclusive) (B6)."""

    VIOLATES = ("B6",)

    def classify(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        if spec is not None and spec.completes_run and spec.concurrency_safe is True:
            return True
        return super().classify(action)


class EverythingConcurrent(ZooBatch):
    """Runs every call of the batch concurrently without asking any classifier (B6; B9 holds:
    a classifier never asked is asked at most once, and never for a rejected call)."""

    VIOLATES = ("B6",)
    REPORT = (
        "anthropics/claude-code#22264 context; gemini-cli PR #29244 (parallel edits of one file)"
    )

    def classify(self, action: Action) -> bool:
        return True


class ReadsRaceAheadOfWrite(ZooBatch):
    """Starts safe calls while an exclusive (mutating) call still runs (B6)."""

    VIOLATES = ("B6",)
    REPORT = "google-gemini/gemini-cli PR #10287 (a read raced ahead of a write)"

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        if running >= self.cap:
            return False
        return safe or running == 0


# --- B7 -------------------------------------------------------------------------------------


class CapOffByOne(ZooBatch):
    """Lets max_concurrency + 1 handlers run (``>`` where ``>=`` was meant) (B7)."""

    VIOLATES = ("B7",)
    REPORT = "a cap off by one"

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        if exclusive_running or running > self.cap:
            return False
        return safe or running == 0


class CapComparedByIdentity(ZooBatch):
    """Compares the running count with the cap by identity (``is`` where ``>=`` was meant):
    CPython caches the ints up to 256 only, so with max_concurrency=257 the cap never holds
    (B7)."""

    VIOLATES = ("B7",)

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        if exclusive_running or running is self.cap:
            return False
        return safe or running == 0


# --- B8 -------------------------------------------------------------------------------------


class FixedWindows(ZooBatch):
    """Runs calls in fixed windows of max_concurrency: a freed slot waits for the window (B8)."""

    VIOLATES = ("B8",)
    REPORT = "fixed windows (Promise.all over chunks)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.window = 0

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        if running == 0:
            self.window = 0
        if exclusive_running or self.window >= self.cap:
            return False
        if not (safe or running == 0):
            return False
        self.window += 1
        return True


# --- B9 -------------------------------------------------------------------------------------


class TruthyClassification(ZooBatch):
    """Takes any truthy classifier answer as concurrency-safe (B9: only an exact True)."""

    VIOLATES = ("B9",)
    REPORT = "truthy classification (``if tool.is_concurrency_safe(args):``)"

    def classify(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        safe = spec.concurrency_safe
        if isinstance(safe, bool):
            return safe
        try:
            return bool(safe(call.arguments))
        except Exception:
            return False


class _NoCache(_Batch):
    def fill(self) -> None:
        self.safe.clear()
        super().fill()


class ClassifiesAgain(ZooBatch):
    """Asks the classifier again each time it reconsiders a waiting call (B9: at most once)."""

    VIOLATES = ("B9",)
    BATCH = _NoCache


# --- B10 ------------------------------------------------------------------------------------


class _RejectedBarrier(_Batch):
    def fill(self) -> None:
        while self.next < self.count and self.rejected[self.next]:
            if self.running:
                return  # waits for the running calls before passing a rejected one
            self.next += 1
        super().fill()


class RejectedCallIsABarrier(ZooBatch):
    """Waits for every running call to settle before passing a rejected call (B10)."""

    VIOLATES = ("B10",)
    BATCH = _RejectedBarrier


# --- B11 ------------------------------------------------------------------------------------


class SharedArgumentDicts(ZooBatch):
    """Memoizes thawed sub-objects by value, so calls with equal nested arguments share one
    dict (B11)."""

    VIOLATES = ("B11",)
    REPORT = "shared argument dicts (a thaw cache keyed by value)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memo: dict[str, Any] = {}

    def _thaw(self, value: Any) -> Any:
        if hasattr(value, "items"):
            key = repr(sorted((k, repr(v)) for k, v in value.items()))
            if key not in self.memo:
                self.memo[key] = {k: self._thaw(v) for k, v in value.items()}
            return self.memo[key]
        if isinstance(value, tuple):
            return [self._thaw(v) for v in value]
        return value

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        call = action.tool_call
        assert call is not None
        if "nested" not in call.arguments:
            return await super().run_call(index, action)
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        arguments = {k: (self._thaw(v) if k == "nested" else v) for k, v in call.arguments.items()}
        text = await spec.handler(arguments)
        return ActionOutcome(
            status=ActionStatus.EXECUTED,
            observation=text,
            observation_is_synthetic=False,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )


class CopiesIdenticalCallsOnce(ZooBatch):
    """Copies each distinct call's arguments once per executor (a copy cache keyed by tool and
    arguments), so identical calls in one batch (same tool, same arguments) share one dict
    (B11). Calls that differ in any argument, an ``id`` say, each get their own copy."""

    VIOLATES = ("B11",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.copies: dict[tuple[str, str], dict[str, Any]] = {}

    async def run_call(self, index: int, action: Action) -> ActionOutcome:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None and spec.handler is not None
        key = (call.name, repr(_thawed(call.arguments)))
        arguments = self.copies.setdefault(key, _thawed(call.arguments))
        text = await spec.handler(arguments)
        return ActionOutcome(
            status=ActionStatus.EXECUTED,
            observation=text,
            observation_is_synthetic=False,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )


def _thawed(value: Any) -> Any:
    if hasattr(value, "items"):
        return {key: _thawed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(item) for item in value]
    return value


# --- B12 ------------------------------------------------------------------------------------


class FailureCancelsSiblings(ZooBatch):
    """One ordinary handler failure cancels every sibling still running (B12)."""

    VIOLATES = ("B12",)
    REPORT = "anthropics/claude-code#22264 and #64346 (one failed call cancels its siblings)"

    def on_failure(self, batch: _Batch, index: int) -> None:
        batch.cancel_running()


# --- B13 ------------------------------------------------------------------------------------


class EnvErrorCancelsRunning(ZooBatch):
    """An ENV_ERROR cancels the running siblings instead of letting them finish (B13)."""

    VIOLATES = ("B13",)

    def on_env_error(self, batch: _Batch) -> None:
        batch.cancel_running()


class EnvErrorKeepsGoing(ZooBatch):
    """Keeps entering calls after an ENV_ERROR (B13)."""

    VIOLATES = ("B13",)
    REPORT = "google-gemini/gemini-cli#4217 context (a dead environment keeps being called)"

    def on_env_error(self, batch: _Batch) -> None:
        batch.stop = None


class _NamesFirstToFinish(_Batch):
    first_to_finish: int | None = None

    def record(self, index: int, result: object, sent: bool) -> None:
        env = isinstance(result, ActionOutcome) and result.status is ActionStatus.ENV_ERROR
        if env and self.first_to_finish is None:
            self.first_to_finish = index
        super().record(index, result, sent)

    def resolve_rest(self) -> None:
        if self.stop == "env" and not self.raised and self.first_to_finish is not None:
            text = self.owner.not_run_text("env", self.first_to_finish, "")
            self.outcomes = [not_run(text) if o is None else o for o in self.outcomes]
        super().resolve_rest()


class NamesFirstEnvErrorToFinish(ZooBatch):
    """Names in the "not run" sentence the ENV_ERROR call that finished first, not the
    lowest-indexed one (B13: k is the lowest index, whatever the timing, B5)."""

    VIOLATES = ("B13",)
    BATCH = _NamesFirstToFinish


# --- B14 ------------------------------------------------------------------------------------


class CancelSwallowed(ZooBatch):
    """Turns a cancellation of the batch into outcomes and returns them (B14); a handler's own
    CancelledError, re-raised by the batch, is swallowed the same way (B15)."""

    VIOLATES = ("B14", "B15")
    REPORT = "microsoft/autogen#7956 (CancelledError caught and swallowed)"

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        batch = self.BATCH(self, list(actions), journal)
        try:
            return await batch.run()
        except asyncio.CancelledError:
            return tuple(o for o in batch.outcomes if o is not None)


class _Abandons(_Batch):
    async def wait(self) -> None:
        try:
            await super().wait()
        finally:
            if self.stop == "cancel":
                for task, index in list(self.running.items()):
                    self.outcomes[index] = synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
                    task.remove_done_callback(self.settled)
                self.running.clear()


class AbandonsRunningBodies(ZooBatch):
    """On cancellation, cancels the running calls but does not wait for them to end (B14); a
    call abandoned while its journal record was being written is never committed (B2)."""

    VIOLATES = ("B2", "B14")
    REPORT = "pydantic/pydantic-ai#4423 (orphaned tasks keep running)"
    BATCH = _Abandons


class _ReplacesLate(_Batch):
    def record(self, index: int, result: object, sent: bool) -> None:
        if sent and isinstance(result, ActionOutcome):
            result = synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
        super().record(index, result, sent)


class LateSuccessReplaced(ZooBatch):
    """A call that finished after it was sent cancellation is recorded "interrupted" anyway
    (B14: a finished call keeps its outcome)."""

    VIOLATES = ("B14",)
    REPORT = "mastra-ai/mastra PR #18034 (a result replaced by the abort)"
    BATCH = _ReplacesLate


# --- B15 ------------------------------------------------------------------------------------


class _Wraps(_Batch):
    async def run(self) -> tuple[ActionOutcome, ...]:
        try:
            return await super().run()
        except BaseException as error:
            if isinstance(error, (Exception, asyncio.CancelledError)):
                raise
            raise RuntimeError(f"a handler raised {error!r}") from error


class WrapsBaseException(ZooBatch):
    """Re-raises a handler's BaseException wrapped in a RuntimeError (B15: that very object)."""

    VIOLATES = ("B15",)
    BATCH = _Wraps


class _Orphans(_Batch):
    def record(self, index: int, result: object, sent: bool) -> None:
        if isinstance(result, _Raised) and not isinstance(result.error, Exception) and not sent:
            self.outcomes[index] = synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            self.raised[index] = result.error
            self.stop = "raised"
            self.running.clear()  # forgets the siblings: nobody cancels or awaits them
            return
        super().record(index, result, sent)


class OrphansSiblingsOnBaseException(ZooBatch):
    """A handler's BaseException ends the batch at once; running siblings are left behind
    (B15: cancelled and awaited)."""

    VIOLATES = ("B15",)
    REPORT = "pydantic/pydantic-ai#4423 (siblings orphaned by a non-CancelledError exception)"
    BATCH = _Orphans


# --- B16 ------------------------------------------------------------------------------------


class _Fabricates(_Batch):
    async def commit_ready(self) -> None:
        try:
            await super().commit_ready()
        except Exception:
            self.committed += 1  # the record is lost; carry on as if it were written
            await super().commit_ready()

    def set_fault(self, error: BaseException) -> None:
        if isinstance(error, TypeError):
            super().set_fault(error)
            return
        for _task, index in list(self.running.items()):  # a journal fault: invent outcomes
            self.outcomes[index] = synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
        self.cancel_running()


class FabricatesAfterJournalFault(ZooBatch):
    """Swallows a journal fault and carries on, committing and returning outcomes (B16)."""

    VIOLATES = ("B16",)
    REPORT = "fabricated outcomes after a journal fault (a durable record silently lost)"
    BATCH = _Fabricates


class _NonStrAsText(_Batch):
    def record(self, index: int, result: object, sent: bool) -> None:
        if isinstance(result, _Raised) and isinstance(result.error, TypeError):
            result = ActionOutcome(
                status=ActionStatus.EXECUTED,
                observation=str(result.error),
                observation_is_synthetic=False,
                env_reported_completion=False,
                observation_truncated_chars=0,
            )
        super().record(index, result, sent)


class NonStrResultBecomesText(ZooBatch):
    """Turns E9's TypeError into an outcome instead of stopping the batch (B16)."""

    VIOLATES = ("B16",)
    BATCH = _NonStrAsText


# --- B17 ------------------------------------------------------------------------------------


class _YieldsAfterStarted(_Batch):
    async def after_started(self) -> bool:
        try:
            await asyncio.sleep(0)  # gives the loop a turn before the handler starts
        except asyncio.CancelledError:
            return False
        return True


class YieldsBetweenStartedAndEntry(ZooBatch):
    """Awaits between journal.started(i) and entering call i (B17: immediately before)."""

    VIOLATES = ("B17",)
    BATCH = _YieldsAfterStarted


class _StartsRejected(_Batch):
    async def run(self) -> tuple[ActionOutcome, ...]:
        if self.journal is not None:
            for index, rejected in enumerate(self.rejected):
                if rejected:
                    try:
                        await self.journal.started(index, self.actions[index])
                    except asyncio.CancelledError:
                        self.stop = "cancel"
        return await super().run()


class StartedForRejectedCalls(ZooBatch):
    """Records started(i) for rejected calls too (B17: never for a rejected call)."""

    VIOLATES = ("B17",)
    BATCH = _StartsRejected


# --- B18 ------------------------------------------------------------------------------------


class GlobalCrossBatchLock(ZooBatch):
    """Holds one lock per executor for a whole batch: concurrent batches queue (B18)."""

    VIOLATES = ("B18",)
    REPORT = "a global cross-batch lock (one mutex around the tool node)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lock = asyncio.Lock()

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        async with self.lock:
            return await super().execute_batch(actions, journal)


class _SharedCount(_Batch):
    def fill(self) -> None:
        owner: Any = self.owner
        before = len(self.running)
        owner.others = owner.active - before
        super().fill()
        owner.active += len(self.running) - before

    def settled(self, task: asyncio.Task[object]) -> None:
        owner: Any = self.owner
        owner.active -= 1
        super().settled(task)


class CapSharedAcrossBatches(ZooBatch):
    """Counts running handlers per executor, not per batch (B18: max_concurrency per batch)."""

    VIOLATES = ("B18",)
    BATCH = _SharedCount

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active = 0
        self.others = 0

    def room(self, running: int, safe: bool, exclusive_running: bool) -> bool:
        return super().room(self.others + running, safe, exclusive_running)


# --- several clauses ---------------------------------------------------------------------------


class _DropsUnentered(_Batch):
    def resolve_rest(self) -> None:
        pass  # calls never entered get no result

    async def run(self) -> tuple[ActionOutcome, ...]:
        try:
            await super().run()
        except asyncio.CancelledError:
            raise
        return tuple(o for o in self.outcomes if o is not None)


class MissingSyntheticResults(ZooBatch):
    """After a stop, calls never entered get no outcome at all: fewer results than calls, and
    those calls are never committed (B1, B2)."""

    VIOLATES = ("B1", "B2")
    REPORT = "anthropics/claude-code#2697, gemini-cli#4217 (tool_use ids without results)"
    BATCH = _DropsUnentered


BROKEN_BATCH: tuple[type[ZooBatch], ...] = (
    ReturnsAList,
    NeverEndsABatch,
    CountComparedByIdentity,
    RaisesWithNothingToStopIt,
    ReturnsCompletionOrder,
    CommitsInCompletionOrder,
    CommitsOnlyAtTheEnd,
    EntersOutOfOrder,
    RetriesFailures,
    ErrorsBecomeNotExecuted,
    TimestampsInSyntheticText,
    IgnoresCompletesRun,
    EverythingConcurrent,
    ReadsRaceAheadOfWrite,
    CapOffByOne,
    CapComparedByIdentity,
    FixedWindows,
    TruthyClassification,
    ClassifiesAgain,
    RejectedCallIsABarrier,
    SharedArgumentDicts,
    CopiesIdenticalCallsOnce,
    FailureCancelsSiblings,
    EnvErrorCancelsRunning,
    EnvErrorKeepsGoing,
    NamesFirstEnvErrorToFinish,
    CancelSwallowed,
    AbandonsRunningBodies,
    LateSuccessReplaced,
    WrapsBaseException,
    OrphansSiblingsOnBaseException,
    FabricatesAfterJournalFault,
    NonStrResultBecomesText,
    YieldsBetweenStartedAndEntry,
    StartedForRejectedCalls,
    GlobalCrossBatchLock,
    CapSharedAcrossBatches,
    MissingSyntheticResults,
)

REALISTIC: tuple[type[ZooBatch], ...] = tuple(cls for cls in BROKEN_BATCH if cls.REPORT)
"""The entries modelled on user bug reports."""
