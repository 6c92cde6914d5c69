"""Durable runtimes for the recovery subject (section 12): one bug per J clause, realistic bugs
(crash-recovery.md section 2's reports, each by a mechanism of its own), and unusual but
correct ones. Each is a module-level factory ``factory(registry, directory)``, so the kit's
lifetimes (fresh processes) import it as ``zoo.recovery:<name>``.

Most wrap polyloop's `run_durable` with the bug in the store, the registry or the executor
they hand it; the JSON-lines store is this file's own (fsync, CRC-32 per line, torn tail).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import zlib
from collections.abc import Sequence
from typing import Any

from conformance.recovery.reference import ObservedStore, store_factory
from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ReplayPolicy,
    SqliteJournalStore,
    ToolCall,
    ToolRegistry,
    run_durable,
)
from polyloop.durable import JournalDamagedError, StoredRecord
from polyloop.ports import plain_arguments


class Runtime:
    """`run_durable` over `store`, with the knobs the broken entries turn."""

    def __init__(
        self,
        registry: ToolRegistry,
        store: Any,
        *,
        max_attempts: int = 3,
        reported_attempts: int | None = None,
        policy_registry: ToolRegistry | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.attempts = max_attempts
        self.max_attempts = reported_attempts or max_attempts
        self.policy_registry = policy_registry or registry

    def observe_journal(self, report: Any) -> None:
        """The kit hears of each record `store.append` returned (durable or, for the broken
        stores, merely accepted: what the runtime would claim)."""
        self.store = ObservedStore(self.store, report)

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        return await run_durable(
            self.registry.batch_executor(),
            actions,
            store=self.store,
            batch_id=batch_id,
            registry=self.policy_registry,
            max_attempts=self.attempts,
        )


def _sqlite(directory: str) -> SqliteJournalStore:
    return SqliteJournalStore(os.path.join(directory, "journal.db"))


class JsonLinesStore:
    """A journal store in one JSON-lines file: one line per record with its CRC-32, written
    with one ``os.write`` and fsynced (and the directory when the file is created). A torn
    last line with nothing valid after it is a record never written (cut off before the next
    append); any other line that fails its check is damage. `skip_damage` is the J10 bug:
    a damaged journal is silently treated as empty."""

    def __init__(self, directory: str, *, skip_damage: bool = False) -> None:
        self.path = os.path.join(directory, "journal.jsonl")
        self.skip_damage = skip_damage
        created = not os.path.exists(self.path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        if created:
            os.fsync(self._fd)
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _lines(self) -> list[dict[str, Any]]:
        with open(self.path, "rb") as file:
            raw = file.read()
        parts = raw.split(b"\n")
        records = []
        for number, part in enumerate(parts):
            if not part:
                continue
            last = number >= len(parts) - 2 and not any(parts[number + 1 :])
            try:
                entry = json.loads(part)
                text = entry["text"]
                if zlib.crc32(text.encode()) != entry["crc"]:
                    raise ValueError("crc")
                records.append(json.loads(text))
            except (ValueError, KeyError, TypeError):
                if last and not raw.endswith(b"\n"):
                    os.ftruncate(self._fd, len(raw) - len(part))  # torn tail: never written
                    os.fsync(self._fd)
                    break
                if self.skip_damage:  # the J10 bug: a damaged journal starts afresh
                    os.ftruncate(self._fd, 0)
                    return []
                raise JournalDamagedError(
                    f"journal store {self.path!r}: line {number + 1} fails its CRC-32 check"
                ) from None
        return records

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        seq = len([r for r in self._lines() if r["batch"] == batch_id])
        text = json.dumps(
            {"batch": batch_id, "seq": seq, "kind": kind, "index": index, "body": body},
            sort_keys=True,
        )
        line = json.dumps({"text": text, "crc": zlib.crc32(text.encode())}) + "\n"
        os.write(self._fd, line.encode())
        os.fsync(self._fd)

    def records(self, batch_id: str) -> list[StoredRecord]:
        try:
            found = [r for r in self._lines() if r["batch"] == batch_id]
        except JournalDamagedError as exc:
            raise JournalDamagedError(f"{exc} (batch {batch_id!r})") from None
        return [
            StoredRecord(seq=r["seq"], kind=r["kind"], index=r["index"], body=r["body"])
            for r in found
        ]


# -- broken: one per clause ------------------------------------------------------------------


class _LateHeaderStore(SqliteJournalStore):
    """J1: the header waits in memory and is written with the first commit."""

    _held: tuple[str, Any] | None = None

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "header":
            self._held = (batch_id, body)
            return
        if kind == "committed" and self._held is not None:
            held, self._held = self._held, None
            super().append(held[0], "header", -1, held[1])
        super().append(batch_id, kind, index, body)

    def records(self, batch_id: str) -> list[StoredRecord]:
        found = super().records(batch_id)
        if self._held is not None and not found:
            return [StoredRecord(seq=-1, kind="header", index=-1, body=self._held[1])]
        return found


def broken_j1_header_written_late(registry: ToolRegistry, directory: str) -> Runtime:
    return Runtime(registry, _LateHeaderStore(os.path.join(directory, "journal.db")))


class _UncommittedStartStore(SqliteJournalStore):
    """J2: started records stay in memory until the call's commit writes them."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._pending: list[tuple[str, int]] = []

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        if kind == "started":
            self._pending.append((batch_id, index))
            return
        if kind == "committed" and (batch_id, index) in self._pending:
            self._pending.remove((batch_id, index))
            super().append(batch_id, "started", index, {})
        super().append(batch_id, kind, index, body)


def broken_j2_started_not_durable(registry: ToolRegistry, directory: str) -> Runtime:
    return Runtime(registry, _UncommittedStartStore(os.path.join(directory, "journal.db")))


class _ReenteringRuntime(Runtime):
    """J3: a resume runs the committed calls' handlers again (and drops what they return)."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        state = read_batch(self.store, batch_id)
        outcomes = await super().run(batch_id, actions)
        if state is not None:
            done = [actions[i] for i in range(len(state.committed))]
            if done:
                await self.registry.batch_executor().execute_batch(done)
        return outcomes


def broken_j3_committed_call_reentered(registry: ToolRegistry, directory: str) -> Runtime:
    return _ReenteringRuntime(registry, _sqlite(directory))


def broken_j4_safe_never_retried(registry: ToolRegistry, directory: str) -> Runtime:
    """J4: says three attempts, allows one: an in-doubt SAFE call is never entered again."""
    return Runtime(registry, _sqlite(directory), max_attempts=1, reported_attempts=3)


def _all_safe(registry: ToolRegistry) -> ToolRegistry:
    return ToolRegistry(
        [dataclasses.replace(spec, replay_policy=ReplayPolicy.SAFE) for spec in registry]
    )


def broken_j5_never_rerun(registry: ToolRegistry, directory: str) -> Runtime:
    """J5: at-least-once: every call is recorded and resumed as SAFE."""
    return Runtime(registry, _sqlite(directory), policy_registry=_all_safe(registry))


class _CurrentPolicyStore(SqliteJournalStore):
    """J6: the header's recorded policies are replaced by the current registry's on read."""

    registry: ToolRegistry

    def records(self, batch_id: str) -> list[StoredRecord]:
        found = super().records(batch_id)
        if not found or found[0].kind != "header":
            return found
        body = dict(found[0].body)
        policies = []
        for call, recorded in zip(body["calls"], body["policies"], strict=True):
            spec = self.registry.spec_for(call.get("tool", ""))
            policies.append(recorded if spec is None else spec.replay_policy.name)
        body["policies"] = policies
        return [dataclasses.replace(found[0], body=body), *found[1:]]


def broken_j6_current_safe_loosens_recorded_never(
    registry: ToolRegistry, directory: str
) -> Runtime:
    store = _CurrentPolicyStore(os.path.join(directory, "journal.db"))
    store.registry = registry
    return Runtime(registry, store)


class _SkipNotStarted:
    """J7: on a resume, calls that were never started are answered NOT_EXECUTED unrun."""

    def __init__(self, registry: ToolRegistry, started: set[int]) -> None:
        self.registry = registry
        self._inner = registry.batch_executor()
        self._started = started

    async def execute_batch(self, actions: Sequence[Action], journal: Any = None) -> Any:
        changed = [
            a if i in self._started or a.tool_call is None else Action(code="# skipped")
            for i, a in enumerate(actions)
        ]
        return await self._inner.execute_batch(changed, journal)

    def parameters(self) -> dict[str, str]:
        return {}


class _SkippingRuntime(Runtime):
    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        state = read_batch(self.store, batch_id)
        if state is None:
            return await super().run(batch_id, actions)
        started = {i for i, count in enumerate(state.started_counts) if count}
        return await run_durable(
            _SkipNotStarted(self.registry, started),
            actions,
            store=self.store,
            batch_id=batch_id,
            registry=self.registry,
        )


def broken_j7_resume_skips_not_started_calls(registry: ToolRegistry, directory: str) -> Runtime:
    return _SkippingRuntime(registry, _sqlite(directory))


class _SuffixRuntime(Runtime):
    """J8: a resume returns the outcomes of the calls it resolved, not of the whole batch."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        state = read_batch(self.store, batch_id)
        done = 0 if state is None else len(state.committed)
        return (await super().run(batch_id, actions))[done:] or ()


def broken_j8_resume_returns_only_its_part(registry: ToolRegistry, directory: str) -> Runtime:
    return _SuffixRuntime(registry, _sqlite(directory))


class _AcceptingRuntime(Runtime):
    """J9: a changed batch is run as a new one under the same id."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        try:
            return await super().run(batch_id, actions)
        except ValueError:
            return await super().run(batch_id + "'", actions)


def broken_j9_changed_batch_accepted(registry: ToolRegistry, directory: str) -> Runtime:
    return _AcceptingRuntime(registry, _sqlite(directory))


def broken_j10_damage_skipped(registry: ToolRegistry, directory: str) -> Runtime:
    return Runtime(registry, JsonLinesStore(directory, skip_damage=True))


class _RebuildingRuntime(Runtime):
    """J11: a resume of a complete batch rebuilds the interrupted outcomes from memory (and
    gets their flags wrong) instead of returning the recorded ones."""

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        from polyloop.durable import read_batch

        state = read_batch(self.store, batch_id)
        outcomes = await super().run(batch_id, actions)
        if state is None or len(state.committed) < len(actions):
            return outcomes
        return tuple(
            dataclasses.replace(o, observation_is_synthetic=False)
            if o.status is ActionStatus.ENV_ERROR
            else o
            for o in outcomes
        )


class MirroredStore:
    """The J10 bug in a store with two copies: every record goes to ``a-journal.jsonl`` and to
    ``b-mirror.jsonl`` (plain JSON lines, no checks), and records are read back from the mirror
    alone, unchecked. A kit that damaged only the first copy it found would miss it."""

    def __init__(self, directory: str) -> None:
        self.paths = [os.path.join(directory, n) for n in ("a-journal.jsonl", "b-mirror.jsonl")]

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        seq = len(self.records(batch_id))
        line = json.dumps(
            {"batch": batch_id, "seq": seq, "kind": kind, "index": index, "body": body}
        )
        for path in self.paths:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, (line + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)

    def records(self, batch_id: str) -> list[StoredRecord]:
        if not os.path.exists(self.paths[1]):
            return []
        with open(self.paths[1], encoding="utf-8") as file:
            found = [json.loads(line) for line in file if line.strip()]
        return [
            StoredRecord(seq=r["seq"], kind=r["kind"], index=r["index"], body=r["body"])
            for r in found
            if r["batch"] == batch_id
        ]


def broken_j10_unchecked_mirror(registry: ToolRegistry, directory: str) -> Runtime:
    return Runtime(registry, MirroredStore(directory))


class _RecordedBatchRuntime(Runtime):
    """J9: the first batch given for an id is kept (as JSON beside the journal) and every later
    run of the id runs that one, whatever it is given."""

    def __init__(self, registry: ToolRegistry, directory: str) -> None:
        super().__init__(registry, _sqlite(directory))
        self.kept = os.path.join(directory, "batch.json")

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        if os.path.exists(self.kept):
            with open(self.kept, encoding="utf-8") as file:
                actions = [_action(entry) for entry in json.load(file)]
        else:
            with open(self.kept, "w", encoding="utf-8") as file:
                json.dump([_entry(action) for action in actions], file)
                file.flush()
                os.fsync(file.fileno())
        return await super().run(batch_id, actions)


def _entry(action: Action) -> dict[str, Any]:
    call = action.tool_call
    if call is None:
        return {"code": action.code}
    return {"name": call.name, "arguments": plain_arguments(call)}


def _action(entry: dict[str, Any]) -> Action:
    if "code" in entry:
        return Action(code=entry["code"])
    return Action(tool_call=ToolCall(name=entry["name"], arguments=entry["arguments"]))


def broken_j9_recorded_batch_run_instead(registry: ToolRegistry, directory: str) -> Runtime:
    return _RecordedBatchRuntime(registry, directory)


class EncodedStore(JsonLinesStore):
    """Correct, but unreadable to the kit's damage probe: each line's record text is stored
    base64-encoded (still CRC-checked), so call 0's observation never appears as plain text and
    the kit cannot damage it: J10 must be reported not checked, never passed."""

    def _lines(self) -> list[dict[str, Any]]:
        return [json.loads(base64.b64decode(r["b64"])) for r in super()._lines()]

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        seq = len([r for r in self._lines() if r["batch"] == batch_id])
        record = {"batch": batch_id, "seq": seq, "kind": kind, "index": index, "body": body}
        text = json.dumps({"b64": base64.b64encode(json.dumps(record).encode()).decode()})
        line = json.dumps({"text": text, "crc": zlib.crc32(text.encode())}) + "\n"
        os.write(self._fd, line.encode())
        os.fsync(self._fd)


def encoded_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """`run_durable` over a store whose records are base64 inside CRC-checked JSON lines."""
    return Runtime(registry, EncodedStore(directory))


def broken_j11_complete_batch_rebuilt(registry: ToolRegistry, directory: str) -> Runtime:
    return _RebuildingRuntime(registry, _sqlite(directory))


def broken_j13_unbounded_crash_loop(registry: ToolRegistry, directory: str) -> Runtime:
    """J13: says three attempts, allows a thousand."""
    return Runtime(registry, _sqlite(directory), max_attempts=1000, reported_attempts=3)


BROKEN: dict[str, str] = {
    "J1": "broken_j1_header_written_late",
    "J2": "broken_j2_started_not_durable",
    "J3": "broken_j3_committed_call_reentered",
    "J4": "broken_j4_safe_never_retried",
    "J5": "broken_j5_never_rerun",
    "J6": "broken_j6_current_safe_loosens_recorded_never",
    "J7": "broken_j7_resume_skips_not_started_calls",
    "J8": "broken_j8_resume_returns_only_its_part",
    "J9": "broken_j9_changed_batch_accepted",
    "J10": "broken_j10_damage_skipped",
    "J11": "broken_j11_complete_batch_rebuilt",
    "J13": "broken_j13_unbounded_crash_loop",
}
"""Clause -> the zoo factory that breaks it (J12, fsync, is not checkable with kill -9)."""


# -- unusual but correct ---------------------------------------------------------------------


def jsonl_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """`run_durable` over the JSON-lines store (fsync per line, CRC-32, torn-tail repair)."""
    return Runtime(registry, JsonLinesStore(directory))


def one_attempt_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """max_attempts=1, said so: an in-doubt SAFE call is resolved interrupted at once."""
    return Runtime(registry, _sqlite(directory), max_attempts=1)


def serial_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """A strictly sequential executor (max_concurrency=1) behind run_durable."""

    class Serial(Runtime):
        async def run(self, batch_id: str, actions: Sequence[Action]) -> Any:
            return await run_durable(
                self.registry.batch_executor(max_concurrency=1),
                actions,
                store=self.store,
                batch_id=batch_id,
            )

    return Serial(registry, _sqlite(directory))


UNUSUAL: tuple[str, ...] = (
    "jsonl_runtime",
    "one_attempt_runtime",
    "serial_runtime",
    "jsonl_store_target",
    "encoded_runtime",
)


# -- what the harness itself must survive ----------------------------------------------------


class _Hanging(Runtime):
    async def run(self, batch_id: str, actions: Sequence[Action]) -> Any:
        import asyncio

        await asyncio.sleep(3600)


def hanging_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """Never returns: the lifetime's time box ends it."""
    return _Hanging(registry, _sqlite(directory))


def detaching_runtime(registry: ToolRegistry, directory: str) -> Runtime:
    """Starts a helper in a session of its own (its pid goes to $RECOVERY_HELPER_PIDS), then
    behaves: the kit must kill the helper with the lifetime."""
    import subprocess
    import sys

    helper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
    )
    with open(os.environ["RECOVERY_HELPER_PIDS"], "a", encoding="utf-8") as file:
        file.write(f"{helper.pid}\n")
    return Runtime(registry, _sqlite(directory))


def _jsonl_store(directory: str) -> JsonLinesStore:
    return JsonLinesStore(directory)


jsonl_store_target = store_factory(_jsonl_store)
"""A third-party journal store behind run_durable, the documented way (`store_factory`)."""


def raising_factory(registry: ToolRegistry, directory: str) -> Runtime:
    """Cannot build a runtime at all: a set-up problem of the target, not a J verdict."""
    raise RuntimeError("no database driver configured")
