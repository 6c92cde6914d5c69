"""`run_durable`: run a batch once, resume it after any crash (contract section 12, J1–J13).

Recovery reuses section 10's scheduler through its journal port, whatever the executor: the
executor is handed a journal that writes every `started` and `committed` to the store before it
returns (J2, J12), and `run_durable` owns only the recovery rules, decided from the store before
anything is entered.

Indices. Sentences name calls by their index in the whole batch (B13's "call k"), so a resume
does not hand the executor the uncommitted suffix alone: it hands it the whole batch with each
committed call replaced by an action without a tool call. Section 10 resolves such an action
NOT_EXECUTED in its place without a handler, a slot, a barrier or a `started` record (E1, B10,
B17), so the executor numbers every call as the first lifetime did and needs no hook; the
journal drops the padding's commits (the store already holds the real ones) and refuses a
`started` for it, which stops an executor that would run it (B16) before anything is entered.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Protocol

from polyloop._json import thaw, type_label
from polyloop.batch import INTERRUPTED
from polyloop.durable._store import JournalDamagedError, StoredRecord
from polyloop.ports import Action, BatchExecutor
from polyloop.tools import _NO_TOOL_CALL, ToolRegistry, ToolValidationError
from polyloop.types import ActionOutcome, ActionStatus, ReplayPolicy

__all__ = ["BatchState", "JournalStore", "read_batch", "run_durable"]

MAX_ATTEMPTS_LIMIT = 1000
_PADDING_CODE = "# polyloop.durable: this call is committed in the journal; its outcome is replayed"


class JournalStore(Protocol):
    """What `run_durable` needs of a store: durable appends and verified reads of one batch."""

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None: ...

    def records(self, batch_id: str) -> list[StoredRecord]: ...


def _interrupted() -> ActionOutcome:
    return ActionOutcome(
        status=ActionStatus.ENV_ERROR,
        observation=INTERRUPTED,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _env_error_not_run(first: int) -> ActionOutcome:
    return ActionOutcome(
        status=ActionStatus.NOT_EXECUTED,
        observation=f"not run: call {first} reported an environment error",
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _outcome_body(outcome: ActionOutcome) -> dict[str, Any]:
    return {
        "status": outcome.status.name,
        "observation": outcome.observation,
        "synthetic": outcome.observation_is_synthetic,
        "completion": outcome.env_reported_completion,
        "truncated": outcome.observation_truncated_chars,
    }


def _outcome_from(body: Any) -> ActionOutcome:
    return ActionOutcome(
        status=ActionStatus[body["status"]],
        observation=body["observation"],
        observation_is_synthetic=body["synthetic"],
        env_reported_completion=body["completion"],
        observation_truncated_chars=body["truncated"],
    )


def _call_body(index: int, action: Action) -> dict[str, Any]:
    call = action.tool_call
    if call is None:
        return {"code": action.code}
    try:
        arguments = json.loads(
            json.dumps(thaw(call.arguments), ensure_ascii=False, allow_nan=False, sort_keys=True)
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"run_durable: actions[{index}] ({call.name!r}) has arguments that cannot be "
            f"recorded as JSON ({exc}); a durable batch records every call in its journal"
        ) from None
    return {"tool": str(call.name), "arguments": arguments}


def _canonical(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class BatchState:
    """A batch as its verified records describe it (J10: contradictions are damage)."""

    def __init__(self, store_name: str, batch_id: str, records: Sequence[StoredRecord]) -> None:
        where = f"journal store {store_name}, batch {batch_id!r}"
        head = records[0]
        if head.kind != "header":
            raise JournalDamagedError(f"{where}: the first record is not the header")
        try:
            calls = list(head.body["calls"])
            policies = [ReplayPolicy[name] for name in head.body["policies"]]
        except (KeyError, TypeError, ValueError):
            raise JournalDamagedError(f"{where}: the header is malformed") from None
        if len(policies) != len(calls):
            raise JournalDamagedError(f"{where}: the header is malformed")
        self.calls = calls
        self.policies = policies
        self.committed: list[ActionOutcome] = []
        self.started_counts = [0] * len(calls)
        count = len(calls)
        for record in records[1:]:
            index = record.index
            if record.kind == "header" or not 0 <= index < count:
                raise JournalDamagedError(
                    f"{where}: record {record.seq} ({record.kind} of call {index}) does not fit "
                    f"a batch of {count} calls"
                )
            if index < len(self.committed):
                raise JournalDamagedError(
                    f"{where}: record {record.seq} ({record.kind}) follows call {index}'s commit"
                )
            if record.kind == "started":
                self.started_counts[index] += 1
                continue
            if index != len(self.committed):
                raise JournalDamagedError(
                    f"{where}: call {index} is committed before call {len(self.committed)} "
                    "(commits are in model order, B2)"
                )
            try:
                self.committed.append(_outcome_from(record.body))
            except (KeyError, TypeError, ValueError):
                raise JournalDamagedError(
                    f"{where}: record {record.seq} holds no valid outcome"
                ) from None

    def state_of(self, index: int) -> str:
        """committed, in doubt, or not started (section 12's words)."""
        if index < len(self.committed):
            return "committed"
        return "in doubt" if self.started_counts[index] else "not started"


def read_batch(store: JournalStore, batch_id: str) -> BatchState | None:
    """The batch's verified state, or None if the store has no record of it."""
    records = store.records(batch_id)
    if not records:
        return None
    return BatchState(_store_name(store), batch_id, records)


def _store_name(store: object) -> str:
    path = getattr(store, "path", None)
    return repr(path) if isinstance(path, str) else repr(store)


class _StoreJournal:
    """The executor's journal: each record durable in the store before the call returns."""

    __slots__ = ("_batch_id", "_entered", "_first", "_in_doubt", "_seen", "_store", "replaced")

    def __init__(
        self, store: JournalStore, batch_id: str, first: int, in_doubt: frozenset[int]
    ) -> None:
        self._store = store
        self._batch_id = batch_id
        self._first = first
        self._in_doubt = in_doubt
        self._entered: set[int] = set()
        self._seen: set[int] = set()
        # In-doubt calls this lifetime did not enter again: committed interrupted (J4).
        self.replaced: set[int] = set()

    async def started(self, index: int, action: Action) -> None:
        if index < self._first:
            raise RuntimeError(
                f"run_durable: the executor is entering call {index}, which is committed in "
                "the journal (its stand-in has no tool call and must be resolved NOT_EXECUTED "
                "without entering, B10)"
            )
        self._store.append(self._batch_id, "started", index, {})
        self._entered.add(index)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        if index < self._first:
            return  # the stand-in of a committed call: its real record is in the store
        if not isinstance(outcome, ActionOutcome):
            raise TypeError(
                f"run_durable: the executor committed a {type_label(outcome)} for call {index}"
            )
        if index in self._in_doubt and index not in self._entered:
            # J4: the batch stopped (B13, B14) before entering it again; it may have run in an
            # earlier lifetime, so it is interrupted, never "not run".
            outcome = _interrupted()
            self.replaced.add(index)
        self._store.append(self._batch_id, "committed", index, _outcome_body(outcome))
        self._seen.add(index)


def _check_arguments(
    actions: object, store: object, batch_id: object, max_attempts: object
) -> tuple[Action, ...]:
    if type(batch_id) is not str:
        raise TypeError(f"run_durable(batch_id=) takes a non-empty str, got {type_label(batch_id)}")
    if not batch_id:
        raise ValueError("run_durable(batch_id=) must be a non-empty str, got ''")
    try:
        batch_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"run_durable(batch_id=) must be encodable as UTF-8 (the store keys batches by it); "
            f"it holds a lone surrogate at position {exc.start}"
        ) from None
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
        raise TypeError(
            "run_durable(max_attempts=) takes an int >= 1 (how many times a SAFE call may be "
            f"entered across crashes), got {type_label(max_attempts)}"
        )
    if not 1 <= max_attempts <= MAX_ATTEMPTS_LIMIT:
        raise ValueError(
            f"run_durable(max_attempts=) must be between 1 and {MAX_ATTEMPTS_LIMIT}, got "
            f"{max_attempts}; 1 means a SAFE call in doubt is never entered again"
        )
    if not (callable(getattr(store, "append", None)) and callable(getattr(store, "records", None))):
        raise TypeError(
            "run_durable(store=) takes a journal store such as SqliteJournalStore, got "
            f"{type_label(store)}"
        )
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
        raise TypeError(
            f"run_durable(actions) takes a sequence of Action, got {type_label(actions)}"
        )
    for index, action in enumerate(actions):
        if not isinstance(action, Action):
            raise TypeError(
                f"run_durable: actions[{index}] is a {type_label(action)}, not an Action"
            )
    return tuple(actions)


def _policy_now(registry: ToolRegistry, call: dict[str, Any]) -> ReplayPolicy:
    name = call.get("tool")
    spec = registry.spec_for(name) if isinstance(name, str) else None
    return ReplayPolicy.NEVER if spec is None else spec.replay_policy


def _rejection(registry: ToolRegistry, action: Action) -> ActionOutcome | None:
    call = action.tool_call
    if call is None:
        return _NO_TOOL_CALL
    try:
        registry.validate(call)
    except ToolValidationError as exc:
        return ActionOutcome(
            status=ActionStatus.NOT_EXECUTED,
            observation=str(exc),
            observation_is_synthetic=True,
            env_reported_completion=False,
            observation_truncated_chars=0,
        )
    return None


async def run_durable(
    executor: BatchExecutor,
    actions: Sequence[Action],
    *,
    store: JournalStore,
    batch_id: str,
    registry: ToolRegistry | None = None,
    max_attempts: int = 3,
) -> tuple[ActionOutcome, ...]:
    """Run `actions` under `batch_id` in `store`, or resume them after a crash (J1–J13).

    The first call records the batch and runs it through `executor.execute_batch` with a
    journal that writes to `store`. A later call with the same id, in any process, returns the
    committed outcomes and decides every other call by its replay policy (the stricter of the
    recorded one and `registry`'s, J6): all-SAFE in-doubt calls are entered again (at most
    `max_attempts` times in all, J13); any in-doubt NEVER call, or an ENV_ERROR already
    committed, makes the resume enter nothing and commit the rest in model order (J5).

    Raises `ValueError` naming the first differing index when `batch_id` records other calls
    (J9) and `JournalDamagedError` for a damaged record (J10), both before anything is entered
    or written; exceptions of `execute_batch` (a journal fault, cancellation) propagate.
    """
    actions = _check_arguments(actions, store, batch_id, max_attempts)
    if registry is None:
        registry = getattr(executor, "registry", None)
        if registry is None:
            raise TypeError(
                f"run_durable: the executor ({type_label(executor)}) has no .registry; pass "
                "registry= so resume knows each tool's replay_policy"
            )
    if not isinstance(registry, ToolRegistry):
        raise TypeError(f"run_durable(registry=) takes a ToolRegistry, got {type_label(registry)}")
    if not callable(getattr(executor, "execute_batch", None)):
        raise TypeError(f"run_durable(executor) takes a BatchExecutor, got {type_label(executor)}")
    calls = [_call_body(index, action) for index, action in enumerate(actions)]
    state = read_batch(store, batch_id)
    if state is None:
        policies = [_policy_now(registry, call).name for call in calls]
        store.append(batch_id, "header", -1, {"calls": calls, "policies": policies})  # J1
        return await _run(executor, actions, store, batch_id, first=0, prefix=(), in_doubt=())
    _check_same_batch(state, calls, batch_id)
    first = len(state.committed)
    prefix = tuple(state.committed)
    if first == len(actions):
        return prefix  # J11: all committed, nothing entered, nothing written
    in_doubt = [i for i in range(first, len(actions)) if state.started_counts[i]]
    stop = any(outcome.status is ActionStatus.ENV_ERROR for outcome in prefix)
    for index in in_doubt:
        if state.policies[index] is ReplayPolicy.NEVER:
            stop = True  # J6: a recorded NEVER is never loosened
        elif _policy_now(registry, calls[index]) is ReplayPolicy.NEVER:
            stop = True
        elif state.started_counts[index] >= max_attempts:
            stop = True  # J13: entered max_attempts times already; resolve it interrupted
    if stop:
        return _stop(store, batch_id, actions, registry, prefix, set(in_doubt))
    return await _run(
        executor, actions, store, batch_id, first=first, prefix=prefix, in_doubt=in_doubt
    )


def _check_same_batch(state: BatchState, calls: list[dict[str, Any]], batch_id: str) -> None:
    recorded = state.calls
    for index in range(max(len(recorded), len(calls))):
        if index >= len(recorded) or index >= len(calls):
            raise ValueError(
                f"run_durable: batch {batch_id!r} differs from its journal at index {index}: "
                f"it records {len(recorded)} calls, {len(calls)} were given (J9: a batch id "
                "resumes only the batch it recorded; nothing was run or written)"
            )
        if _canonical(recorded[index]) != _canonical(calls[index]):
            raise ValueError(
                f"run_durable: batch {batch_id!r} differs from its journal at index {index}: "
                f"recorded {_describe(recorded[index])}, given {_describe(calls[index])} (J9: "
                "a batch id resumes only the batch it recorded; nothing was run or written)"
            )


def _describe(call: Any) -> str:
    text = _canonical(call)
    return text if len(text) <= 120 else text[:117] + "..."


def _stop(
    store: JournalStore,
    batch_id: str,
    actions: tuple[Action, ...],
    registry: ToolRegistry,
    prefix: tuple[ActionOutcome, ...],
    in_doubt: set[int],
) -> tuple[ActionOutcome, ...]:
    """J5: enter nothing; commit every uncommitted call in model order, each durable first."""
    first_env = next(
        (i for i, outcome in enumerate(prefix) if outcome.status is ActionStatus.ENV_ERROR),
        min(in_doubt) if in_doubt else math.inf,
    )
    outcomes = list(prefix)
    for index in range(len(prefix), len(actions)):
        outcome: ActionOutcome | None
        if index in in_doubt:
            outcome = _interrupted()
        else:
            outcome = _rejection(registry, actions[index])
            if outcome is None:
                assert first_env is not math.inf
                outcome = _env_error_not_run(int(first_env))
        store.append(batch_id, "committed", index, _outcome_body(outcome))
        outcomes.append(outcome)
    return tuple(outcomes)


async def _run(
    executor: BatchExecutor,
    actions: tuple[Action, ...],
    store: JournalStore,
    batch_id: str,
    *,
    first: int,
    prefix: tuple[ActionOutcome, ...],
    in_doubt: Sequence[int],
) -> tuple[ActionOutcome, ...]:
    padded = tuple(Action(code=_PADDING_CODE) for _ in range(first)) + actions[first:]
    journal = _StoreJournal(store, batch_id, first, frozenset(in_doubt))
    result = await executor.execute_batch(padded, journal)
    if len(result) != len(actions):
        raise RuntimeError(
            f"run_durable: the executor returned {len(result)} outcomes for {len(actions)} "
            "calls (B1)"
        )
    missing = [i for i in range(first, len(actions)) if i not in journal._seen]
    if missing:
        raise RuntimeError(
            f"run_durable: the executor returned without committing calls {missing} (B2)"
        )
    return prefix + tuple(
        _interrupted() if index in journal.replaced else result[index]
        for index in range(first, len(actions))
    )
