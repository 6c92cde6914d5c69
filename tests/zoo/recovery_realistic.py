"""Realistic broken durable runtimes for the recovery kit (issue 34): each reported bug of
crash-recovery.md section 2 by its own mechanism, and polyloop's own J4 bug. Lifetimes (fresh
processes) import them as ``zoo.recovery_realistic:<name>``; the shared pieces (`Runtime`, the
JSON-lines store) live in `zoo.recovery`.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    SqliteJournalStore,
    ToolRegistry,
    run_durable,
)
from polyloop.durable import JournalDamagedError, StoredRecord
from zoo.recovery import JsonLinesStore, Runtime, _sqlite

# -- realistic: bugs polyloop itself had ------------------------------------------------------

_INTERRUPTED_TEXT = "interrupted while running; its effects are unknown"


class _NotRunStore(SqliteJournalStore):
    """What the resume wrote before 8973c0e: an in-doubt SAFE call the resumed batch stopped
    before entering again (another call's ENV_ERROR, a cancellation) committed as the batch's
    "not run", though it may have run in the lifetime that crashed."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.entered: set[int] = set()
        self.rewritten: dict[int, ActionOutcome] = {}

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "started":
            self.entered.add(index)
        elif (
            kind == "committed"
            and self.entered
            and index not in self.entered
            and body.get("observation") == _INTERRUPTED_TEXT
        ):
            body = {**body, "status": "NOT_EXECUTED", "observation": "not run: the batch stopped"}
            self.rewritten[index] = ActionOutcome(
                status=ActionStatus.NOT_EXECUTED,
                observation=body["observation"],
                observation_is_synthetic=True,
                env_reported_completion=False,
                observation_truncated_chars=0,
            )
        super().append(batch_id, kind, index, body)


class _NotRunRuntime(Runtime):
    """Returns what its store rewrote as it committed (`rewritten`), as a resume would."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        outcomes = await super().run(batch_id, actions)
        rewritten = self.store.rewritten
        return tuple(rewritten.get(i, outcome) for i, outcome in enumerate(outcomes))


def realistic_j4_in_doubt_safe_not_run_after_a_stop(
    registry: ToolRegistry, directory: str
) -> Runtime:
    """polyloop's own J4 bug, found by an independent runtime (fixed in 8973c0e)."""
    return _NotRunRuntime(registry, _NotRunStore(os.path.join(directory, "journal.db")))


# -- realistic: the reported bugs of crash-recovery.md section 2, by their own mechanisms ------


class _MemoryJournalStore(SqliteJournalStore):
    """Every record kept in memory and written to the database when the batch returns (a
    journal flushed on exit): a kill -9 loses the whole lifetime's journal."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._buffer: list[tuple[str, str, int, Any]] = []

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        self._buffer.append((batch_id, kind, index, body))

    def records(self, batch_id: str) -> list[StoredRecord]:
        durable = super().records(batch_id)
        mine = [r for r in self._buffer if r[0] == batch_id]
        extra = [StoredRecord(seq=-1, kind=k, index=i, body=b) for _, k, i, b in mine]
        return durable + extra

    def flush(self) -> None:
        buffered, self._buffer = self._buffer, []
        for record in buffered:
            super().append(*record)


class _FlushingRuntime(Runtime):
    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        try:
            return await super().run(batch_id, actions)
        finally:
            self.store.flush()


def realistic_journal_flushed_on_exit(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #9 and #21: dedup ids and the repaired history kept in memory, persisted
    only on a clean exit; after kill -9 the resume starts the batch afresh."""
    return _FlushingRuntime(registry, _MemoryJournalStore(os.path.join(directory, "journal.db")))


class _PruningStore(SqliteJournalStore):
    """A started record with no commit is read as a torn write and pruned: in doubt is read as
    not started."""

    def records(self, batch_id: str) -> list[StoredRecord]:
        found = super().records(batch_id)
        done = {r.index for r in found if r.kind == "committed"}
        return [r for r in found if r.kind != "started" or r.index in done]


def realistic_in_doubt_pruned_as_not_started(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #33: the resume prunes tool calls without results, erasing the evidence of
    an in-flight call; the resumed batch runs it as never started."""
    return Runtime(registry, _PruningStore(os.path.join(directory, "journal.db")))


class _SuccessLookingStore(SqliteJournalStore):
    """The synthetic outcome of an interrupted call is recorded as a success."""

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "committed" and body.get("observation") == _INTERRUPTED_TEXT:
            body = {**body, "status": "EXECUTED", "observation": "Command completed"}
        super().append(batch_id, kind, index, body)


class _SuccessLookingRuntime(Runtime):
    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        done = ActionOutcome(
            status=ActionStatus.EXECUTED,
            observation="Command completed",
            observation_is_synthetic=True,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )
        outcomes = await super().run(batch_id, actions)
        return tuple(done if o.observation == _INTERRUPTED_TEXT else o for o in outcomes)


def realistic_interrupted_reported_executed(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #31 and #32: the interrupted call's synthetic result lacks its error flag,
    so the batch reports it completed."""
    store = _SuccessLookingStore(os.path.join(directory, "journal.db"))
    return _SuccessLookingRuntime(registry, store)


class _UnpersistedStopStore(SqliteJournalStore):
    """The resume's interrupted outcome is returned but never written (a repair in memory)."""

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "committed" and body.get("observation") == _INTERRUPTED_TEXT:
            return
        super().append(batch_id, kind, index, body)


def realistic_interrupted_result_not_persisted(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #17, #21 and #22: the synthetic "interrupted" result is not flushed to disk,
    so the next resume finds a journal it cannot read."""
    return Runtime(registry, _UnpersistedStopStore(os.path.join(directory, "journal.db")))


class _OnceStartedStore(SqliteJournalStore):
    """`started` inserted at most once per call (an idempotent upsert keyed by the call): the
    attempts a crash loop makes are never counted past one."""

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "started" and any(
            r.kind == "started" and r.index == index for r in super().records(batch_id)
        ):
            return
        super().append(batch_id, kind, index, body)


def realistic_attempts_not_counted(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #6 and the "one automatic resume per interrupted turn, ever" ticket: a retry
    counter that never grows, so a call that kills its process is resumed forever."""
    return Runtime(registry, _OnceStartedStore(os.path.join(directory, "journal.db")))


class _RetriedCommitStore(JsonLinesStore):
    """A commit is written again when its acknowledgement is slow (at-least-once writes; the
    JSON-lines file has no unique key to refuse the second)."""

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        super().append(batch_id, kind, index, body)
        if kind == "committed":  # the retry: the first write had landed all the same
            super().append(batch_id, kind, index, body)


def realistic_index_committed_twice(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #12: a result saved twice (a duplicate worker, a retried write); the journal
    then holds two commits of one call and the next resume cannot read it."""
    return Runtime(registry, _RetriedCommitStore(directory))


class _WriteBehindJournal:
    """Hands `started` to a writer that flushes 100 ms later: the handler is entered first."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._pending: list[Any] = []

    async def started(self, index: int, action: Action) -> None:

        self._pending.append(asyncio.ensure_future(self._later(index, action)))

    async def _later(self, index: int, action: Action) -> None:

        await asyncio.sleep(0.1)
        await self._inner.started(index, action)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:

        await asyncio.gather(*self._pending)
        await self._inner.committed(index, outcome)


class _WriteBehindExecutor:
    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._inner = registry.batch_executor()

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        wrapped = None if journal is None else _WriteBehindJournal(journal)
        return await self._inner.execute_batch(actions, wrapped)

    def parameters(self) -> dict[str, str]:
        return {}


class _WriteBehindRuntime(Runtime):
    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        return await run_durable(
            _WriteBehindExecutor(self.registry),
            actions,
            store=self.store,
            batch_id=batch_id,
            registry=self.registry,
        )


def realistic_started_written_after_entry(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #2: the order of the `started` write and the node's execution is unenforced;
    a kill right after entry leaves no record and the resume runs the call again."""
    return _WriteBehindRuntime(registry, _sqlite(directory))


class _FreshOnDamageStore(SqliteJournalStore):
    """A journal that fails its checks is moved aside and a new, empty one started."""

    def records(self, batch_id: str) -> list[StoredRecord]:
        try:
            return super().records(batch_id)
        except JournalDamagedError:
            self.close()
            os.replace(self.path, self.path + ".corrupt")
            SqliteJournalStore.__init__(self, self.path)
            return []


def realistic_damaged_store_started_afresh(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #23 and #26: a damaged session is silently dropped ("No saved session
    found") and the work starts again."""
    return Runtime(registry, _FreshOnDamageStore(os.path.join(directory, "journal.db")))


class _MigratingStore(SqliteJournalStore):
    """Opening the journal migrates the recorded policies to the current registry's (a schema
    migration that rewrites the header), so the recorded NEVER is gone for good."""

    registry: ToolRegistry

    def records(self, batch_id: str) -> list[StoredRecord]:
        found = super().records(batch_id)
        if not found or found[0].kind != "header":
            return found
        body = found[0].body
        current = []
        for call, recorded in zip(body["calls"], body["policies"], strict=True):
            spec = self.registry.spec_for(call.get("tool", ""))
            current.append(recorded if spec is None else spec.replay_policy.name)
        if current == body["policies"]:
            return found
        # The migration: the batch's records written again under the new header.
        self._connection.execute("DELETE FROM records WHERE batch_id = ?", (batch_id,))
        super().append(batch_id, "header", -1, {**body, "policies": current})
        for record in found[1:]:
            super().append(batch_id, record.kind, record.index, record.body)
        return super().records(batch_id)


def realistic_policy_migration_loosens_never(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #14: after an upgrade the agent re-plans with the tool's new policy; the
    journal's recorded NEVER is migrated to the current SAFE and the payment runs again."""
    store = _MigratingStore(os.path.join(directory, "journal.db"))
    store.registry = registry
    return Runtime(registry, store)


class _WipingRuntime(Runtime):
    """A batch id whose journal records other calls is taken for a stale run and wiped."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        try:
            return await super().run(batch_id, actions)
        except ValueError:
            self.store._connection.execute("DELETE FROM records WHERE batch_id = ?", (batch_id,))
            return await super().run(batch_id, actions)


def realistic_changed_batch_wipes_journal(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #14: the resumed turn re-plans its calls, the runtime discards the journal
    that no longer matches, and runs the new calls as a fresh batch."""
    return _WipingRuntime(registry, _sqlite(directory))


class _WorkflowRetryRuntime(Runtime):
    """An interrupted outcome fails the step, and the workflow engine retries the whole batch
    under a new attempt id (at-least-once)."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        outcomes = await super().run(batch_id, actions)
        if any(o.observation == _INTERRUPTED_TEXT for o in outcomes):
            return await super().run(batch_id + "#retry", actions)
        return outcomes


def realistic_workflow_retry_reruns_never(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #6 and #12: Temporal retried the whole agent workflow and ran the original
    shell call again (at-least-once)."""
    return _WorkflowRetryRuntime(registry, _sqlite(directory))


class _RestoringRuntime(Runtime):
    """A resume restores the checkpoint, then rebuilds the committed calls' results by
    running them again instead of reading them (the restored results are discarded)."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        state = read_batch(self.store, batch_id)
        outcomes = await super().run(batch_id, actions)
        done = 0 if state is None else len(state.committed)
        if not done:
            return outcomes
        rebuilt = await self.registry.batch_executor().execute_batch(list(actions[:done]))
        return (*rebuilt, *outcomes[done:])


def realistic_restored_results_discarded(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #7: checkpoint resume discards the restored results, so a completed node
    with a side effect runs twice."""
    return _RestoringRuntime(registry, _sqlite(directory))


class _WriteBehindCommitStore(SqliteJournalStore):
    """A `committed` record is queued and written with the next record, or when the batch
    returns (a write-behind buffer that groups commits): `append` returns, and the runtime
    reports the commit, before it is on disk."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._queued: list[tuple[str, str, int, Any]] = []

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        self.flush()
        if kind == "committed":
            self._queued.append((batch_id, kind, index, body))
        else:
            super().append(batch_id, kind, index, body)

    def records(self, batch_id: str) -> list[StoredRecord]:
        mine = [StoredRecord(seq=-1, kind=k, index=i, body=b) for _, k, i, b in self._queued]
        return super().records(batch_id) + mine

    def flush(self) -> None:
        queued, self._queued = self._queued, []
        for record in queued:
            super().append(*record)


def realistic_commit_acknowledged_before_durable(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #9 and #21 on the commit side: results are acknowledged from a write-behind
    buffer, so a SIGKILL right after a call's commit loses it and the resume runs the call
    again. Only a kit that hears when the runtime reports a record durable sees it: the kill
    lands between the acknowledgement and the write (a journal crash point)."""
    store = _WriteBehindCommitStore(os.path.join(directory, "journal.db"))
    return _FlushingRuntime(registry, store)


# -- kit blind spots the mutants of polyloop/durable found (issue 34) ------------------------


class _RewritingStore(SqliteJournalStore):
    """A store that rewrites some `committed` bodies as it writes them (`rewrite`), and keeps
    what it wrote so the runtime returns the same outcomes it recorded."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.prefix: int | None = None
        """Calls committed when this lifetime first wrote: the recorded prefix of a resume."""
        self.rewritten: dict[int, ActionOutcome] = {}

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if self.prefix is None:
            self.prefix = sum(r.kind == "committed" for r in super().records(batch_id))
        if kind == "committed":
            changed = self.rewrite(body)
            if changed != body:
                body = changed
                self.rewritten[index] = ActionOutcome(
                    status=ActionStatus[body["status"]],
                    observation=body["observation"],
                    observation_is_synthetic=body["synthetic"],
                    env_reported_completion=body["completion"],
                    observation_truncated_chars=body["truncated"],
                )
        super().append(batch_id, kind, index, body)


class _ResumedPartNumberingStore(_RewritingStore):
    """A resume's "not run" sentences number the calls within the resumed part (the calls
    after the recorded prefix), as a runtime that hands its executor that part alone would."""

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        text, prefix = body.get("observation"), self.prefix or 0
        if body.get("status") != "NOT_EXECUTED" or not isinstance(text, str) or not prefix:
            return body
        return {**body, "observation": re.sub(r"call (\d+)", _minus(prefix), text)}


def _minus(prefix: int) -> Any:
    return lambda match: f"call {int(match.group(1)) - prefix}"


def realistic_resume_numbers_the_resumed_part(registry: ToolRegistry, directory: str) -> Runtime:
    """A resume that stops (J5) names the ENV_ERROR call by its index in the resumed part, not
    in the whole batch (section 12's words: "never in the resumed part"); the model is told
    another call failed. Found by the mutant that answered these calls "no tool call"."""
    store = _ResumedPartNumberingStore(os.path.join(directory, "journal.db"))
    return _NotRunRuntime(registry, store)


class _CompletedInterruptedStore(_RewritingStore):
    """The interrupted outcome is recorded with `env_reported_completion` set: the resume
    counts the call as one the environment finished."""

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("observation") != _INTERRUPTED_TEXT:
            return body
        return {**body, "completion": True}


class _PrefixRuntime(Runtime):
    """A resume given fewer calls than the journal records answers them from their records."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        try:
            return await super().run(batch_id, actions)
        except ValueError:
            state = read_batch(self.store, batch_id)
            if state is None or len(actions) > len(state.committed):
                raise
            return tuple(state.committed[: len(actions)])


def realistic_resume_accepts_a_shorter_batch(registry: ToolRegistry, directory: str) -> Runtime:
    """Section 2 #14: a loop that checks each call it resumes against the journal's call at
    that index, and answers it from its record, takes a re-planned turn that drops the last calls
    for the journal's first ones. Found by the mutant of `_check_same_batch` that let a shorter
    batch through."""
    return _PrefixRuntime(registry, _sqlite(directory))


def realistic_interrupted_marked_complete(registry: ToolRegistry, directory: str) -> Runtime:
    """An interrupted call is committed as one the environment reported complete (E7's flag
    set on a stop outcome): a loop that ends through `completes_run` takes the batch as
    finished. Found by the mutants that set a stop outcome's flags."""
    store = _CompletedInterruptedStore(os.path.join(directory, "journal.db"))
    return _NotRunRuntime(registry, store)


REALISTIC: dict[str, tuple[str, ...]] = {
    "realistic_journal_flushed_on_exit": ("J3", "J5"),  # section 2 #9, #21
    "realistic_in_doubt_pruned_as_not_started": ("J5",),  # section 2 #33
    "realistic_interrupted_reported_executed": ("J5",),  # section 2 #31, #32
    "realistic_interrupted_result_not_persisted": ("J1",),  # section 2 #17, #22
    "realistic_attempts_not_counted": ("J13",),  # section 2 #6; houston PR #1581
    "realistic_index_committed_twice": ("J1",),  # section 2 #12
    "realistic_started_written_after_entry": ("J5",),  # section 2 #2
    "realistic_damaged_store_started_afresh": ("J10",),  # section 2 #23, #26
    "realistic_policy_migration_loosens_never": ("J6",),  # section 2 #14
    "realistic_changed_batch_wipes_journal": ("J3", "J9"),  # section 2 #14
    "realistic_workflow_retry_reruns_never": ("J3", "J5"),  # section 2 #6, #12
    "realistic_restored_results_discarded": ("J3", "J11"),  # section 2 #7
    "realistic_resume_numbers_the_resumed_part": ("J5",),  # a mutant of _rejection
    "realistic_interrupted_marked_complete": ("J5",),  # the flag mutants of the stop outcomes
    "realistic_commit_acknowledged_before_durable": ("J3",),  # a journal crash point
    "realistic_resume_accepts_a_shorter_batch": ("J9",),  # a mutant of _check_same_batch
}
"""Realistic broken runtimes -> the clauses the kit catches each on (its `_REALISTIC_CATCH`
schedule in tests/kit/test_recovery.py); each factory's docstring names its bug report."""
