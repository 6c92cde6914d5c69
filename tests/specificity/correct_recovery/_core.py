"""The recovery algorithm of contract section 12, shared by the four reference runtimes.

Written from the contract text alone (sections 1, 2, 6, 10 and 12) and polyloop's public API;
nothing here was taken from `polyloop.durable`. Each runtime supplies its own `Backend` (the
durable store) and its own `Wording` (the executor's own sentences, which the contract leaves
to the implementer), so only this file is common to them.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ReplayPolicy,
    ToolRegistry,
    ToolValidationError,
    plain_arguments,
)

__all__ = [
    "Backend",
    "CallEntry",
    "DurableRuntime",
    "Recorded",
    "Wording",
    "canonical",
    "checksum",
    "exact_text",
    "outcome_from_data",
    "outcome_to_data",
    "text_from_data",
]

CallEntry = tuple[str, "str | None"]
"""One header entry: the call's canonical description, and the replay policy its spec had."""

# A committed placeholder: rejected by every registry (no tool call), so the inner executor
# resolves it without a handler, a classifier, a slot or a `started` record (B10, B17).
_PLACEHOLDER = Action(code="# already committed in an earlier lifetime")


def _leaf(value: object) -> object:
    """JSON stand-in for a leaf that is not JSON data (the contract says nothing about them)."""
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted(canonical(item) for item in value)}
    return {"$object": type(value).__qualname__, "repr": repr(value)}


def canonical(value: object) -> str:
    """A deterministic text for `value`: sorted keys, no spaces, non-JSON leaves tagged."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_leaf)


def checksum(text: str) -> int:
    """CRC-32 of the UTF-8 encoding of `text` (J10's per-record check); lone surrogates pass."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass")) & 0xFFFFFFFF


def exact_text(text: str) -> str | dict[str, str]:
    """`text` as JSON data that decodes to the very same `str`.

    JSON cannot carry a lone surrogate faithfully: `json.loads` joins an escaped surrogate
    pair into one astral character. Such a text is stored as its UTF-8 (surrogatepass) hex.
    """
    if any("\ud800" <= char <= "\udfff" for char in text):
        return {"utf8-surrogatepass": text.encode("utf-8", "surrogatepass").hex()}
    return text


def text_from_data(data: Any) -> str:
    """The `str` `exact_text` encoded; `ValueError`/`TypeError` if malformed."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict) and set(data) == {"utf8-surrogatepass"}:
        return bytes.fromhex(data["utf8-surrogatepass"]).decode("utf-8", "surrogatepass")
    raise TypeError("not an encoded text")


def outcome_to_data(outcome: ActionOutcome) -> dict[str, Any]:
    """Every field of an outcome as plain JSON data."""
    return {
        "status": outcome.status.value,
        "observation": exact_text(outcome.observation),
        "synthetic": outcome.observation_is_synthetic,
        "completion": outcome.env_reported_completion,
        "truncated": outcome.observation_truncated_chars,
    }


def outcome_from_data(data: Any) -> ActionOutcome:
    """The outcome `outcome_to_data` wrote; `ValueError`/`TypeError`/`KeyError` if malformed."""
    if not isinstance(data, dict) or set(data) != {
        "status",
        "observation",
        "synthetic",
        "completion",
        "truncated",
    }:
        raise ValueError("not an encoded outcome")
    return ActionOutcome(
        status=ActionStatus(data["status"]),
        observation=text_from_data(data["observation"]),
        observation_is_synthetic=data["synthetic"],
        env_reported_completion=data["completion"],
        observation_truncated_chars=data["truncated"],
    )


def describe(action: Action, registry: ToolRegistry) -> CallEntry:
    """The header entry of `action`: what it is, and the replay policy its spec has now."""
    call = action.tool_call
    if call is None:
        return canonical({"code": action.code}), None
    spec = registry.spec_for(call.name)
    policy = None if spec is None else spec.replay_policy.value
    return canonical({"tool": call.name, "arguments": plain_arguments(call)}), policy


@dataclass
class Recorded:
    """What a store holds for one batch: header, started counts, committed outcomes."""

    header: tuple[CallEntry, ...]
    started: dict[int, int] = field(default_factory=dict)
    committed: dict[int, ActionOutcome] = field(default_factory=dict)


class Backend(Protocol):
    """A durable journal store; every `put_*` returns only once its record is on disk (J12)."""

    def load(self, batch_id: str) -> Recorded | None:
        """The batch's records, None if it has no header; raises on damage (J10)."""
        ...

    def put_header(self, batch_id: str, entries: Sequence[CallEntry]) -> None: ...

    def put_started(self, batch_id: str, index: int, attempt: int) -> None: ...

    def put_committed(self, batch_id: str, index: int, outcome: ActionOutcome) -> None: ...

    def damaged(self, batch_id: str, detail: str) -> Exception:
        """The error J10 raises: it names the store and the batch."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Wording:
    """The executor's own sentences (section 12 leaves the words to the implementer)."""

    interrupted: Callable[[int], str]
    not_run_after_env_error: Callable[[int, int], str]
    no_tool_call: Callable[[int], str] | None
    """E1's sentence for call i; None takes E1/E2 outcomes from the registry's executor."""


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _Journal:
    """The `BatchJournal` handed to the inner executor: every record durable before return."""

    def __init__(
        self, backend: Backend, batch_id: str, first: int, started: dict[int, int], wording: Wording
    ) -> None:
        self._backend = backend
        self._batch_id = batch_id
        self._first = first
        self._started = started
        self._wording = wording
        # In doubt from an earlier lifetime and not yet started again in this one (J4).
        self._in_doubt = {i for i, n in started.items() if i >= first and n > 0}
        self.done: dict[int, ActionOutcome] = {}

    async def started(self, index: int, action: Action) -> None:
        if index < self._first:
            raise RuntimeError(f"call {index} is already committed and must not start again")
        attempt = self._started.get(index, 0) + 1
        self._backend.put_started(self._batch_id, index, attempt)  # J2: durable, then enter
        self._started[index] = attempt
        self._in_doubt.discard(index)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        if index < self._first:
            return  # a placeholder standing for a call committed in an earlier lifetime (J3)
        if index in self._in_doubt and outcome.status is ActionStatus.NOT_EXECUTED:
            # J4: the batch stopped before this in-doubt call was entered again; it may have
            # run in an earlier lifetime, so it is interrupted, never "not run".
            outcome = _synthetic(ActionStatus.ENV_ERROR, self._wording.interrupted(index))
        self._backend.put_committed(self._batch_id, index, outcome)
        self.done[index] = outcome


class DurableRuntime:
    """`run(batch_id, actions)`: run a batch the first time, resume it on every later call."""

    def __init__(
        self,
        registry: ToolRegistry,
        backend: Backend,
        wording: Wording,
        *,
        max_attempts: int = 3,
        max_concurrency: int = 10,
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int):
            raise TypeError("max_attempts must be an int")
        if max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        self._registry = registry
        self._backend = backend
        self._wording = wording
        self._max_attempts = max_attempts
        self._max_concurrency = max_concurrency

    async def run(self, batch_id: str, actions: Sequence[Action]) -> tuple[ActionOutcome, ...]:
        if not isinstance(batch_id, str):
            raise TypeError("batch_id must be a str")
        if not batch_id:
            raise ValueError("batch_id must not be empty")
        actions = tuple(actions)
        entries = tuple(describe(action, self._registry) for action in actions)
        try:
            return await self._run(batch_id, actions, entries)
        finally:
            self._backend.close()

    async def _run(
        self, batch_id: str, actions: tuple[Action, ...], entries: tuple[CallEntry, ...]
    ) -> tuple[ActionOutcome, ...]:
        recorded = self._backend.load(batch_id)
        if recorded is None:
            self._backend.put_header(batch_id, entries)  # J1: before any started record
            recorded = Recorded(header=entries)
        else:
            _check_same_batch(batch_id, recorded.header, entries)  # J9: before any write
            self._check_consistent(batch_id, recorded)
        first = len(recorded.committed)
        results: list[ActionOutcome | None] = [recorded.committed.get(i) for i in range(first)]
        if first == len(actions):
            return tuple(out for out in results if out is not None)  # J11: nothing to enter
        stop = self._stop_index(recorded, actions, first)
        if stop > first:
            results.extend(await self._run_inner(batch_id, actions, recorded, first, stop))
        results.extend(await self._resolve_tail(batch_id, actions, recorded, results, stop))
        return tuple(out for out in results if out is not None)

    def _check_consistent(self, batch_id: str, recorded: Recorded) -> None:
        count = len(recorded.header)
        committed = sorted(recorded.committed)
        if committed != list(range(len(committed))) or len(committed) > count:
            raise self._backend.damaged(batch_id, "committed records are not a prefix")
        if any(not 0 <= i < count or n < 1 for i, n in recorded.started.items()):
            raise self._backend.damaged(batch_id, "a started record names no call")

    def _policy_is_never(self, recorded: Recorded, index: int, action: Action) -> bool:
        """J6: recorded NEVER, current NEVER, or a tool no longer registered."""
        if recorded.header[index][1] != ReplayPolicy.SAFE.value or action.tool_call is None:
            return True
        spec = self._registry.spec_for(action.tool_call.name)
        return spec is None or spec.replay_policy is not ReplayPolicy.SAFE

    def _stop_index(self, recorded: Recorded, actions: tuple[Action, ...], first: int) -> int:
        """Where resuming stops entering calls: `first` (J5), a J13 bound, or `count`."""
        if any(out.status is ActionStatus.ENV_ERROR for out in recorded.committed.values()):
            return first
        count = len(actions)
        in_doubt = [i for i in range(first, count) if recorded.started.get(i, 0) > 0]
        if any(self._policy_is_never(recorded, i, actions[i]) for i in in_doubt):
            return first
        spent = [i for i in in_doubt if recorded.started[i] >= self._max_attempts]
        return min(spent, default=count)

    async def _run_inner(
        self,
        batch_id: str,
        actions: tuple[Action, ...],
        recorded: Recorded,
        first: int,
        stop: int,
    ) -> list[ActionOutcome]:
        """Calls `first..stop-1` through the registry's batch executor, indices kept whole."""
        padded = [_PLACEHOLDER] * first + list(actions[first:stop])
        journal = _Journal(self._backend, batch_id, first, recorded.started, self._wording)
        executor = self._registry.batch_executor(max_concurrency=self._max_concurrency)
        outs = await executor.execute_batch(padded, journal)
        answered: list[ActionOutcome] = []
        for index in range(first, stop):
            if index not in journal.done:  # J8 even over an executor that skipped a commit
                self._backend.put_committed(batch_id, index, outs[index])
                journal.done[index] = outs[index]
            answered.append(journal.done[index])
        return answered

    async def _resolve_tail(
        self,
        batch_id: str,
        actions: tuple[Action, ...],
        recorded: Recorded,
        earlier: list[ActionOutcome | None],
        stop: int,
    ) -> list[ActionOutcome]:
        """J5/J13: commit `stop..n-1` without entering anything, each durable in model order."""
        in_doubt = {i for i in range(stop, len(actions)) if recorded.started.get(i, 0) > 0}
        env_errors = [
            i for i, out in enumerate(earlier) if out and out.status is ActionStatus.ENV_ERROR
        ]
        lowest = min([*env_errors, *in_doubt], default=None)
        resolved: list[ActionOutcome] = []
        for index in range(stop, len(actions)):
            if index in in_doubt:
                text = self._wording.interrupted(index)
                outcome = _synthetic(ActionStatus.ENV_ERROR, text)
            else:
                rejected = await self._rejection(index, actions[index])
                outcome = rejected or self._not_run(index, lowest)
            self._backend.put_committed(batch_id, index, outcome)
            resolved.append(outcome)
        return resolved

    def _not_run(self, index: int, lowest: int | None) -> ActionOutcome:
        if lowest is None:  # unreachable: a tail exists only after an ENV_ERROR or a doubt
            raise AssertionError("a call left unresolved without a stop")
        text = self._wording.not_run_after_env_error(index, lowest)
        return _synthetic(ActionStatus.NOT_EXECUTED, text)

    async def _rejection(self, index: int, action: Action) -> ActionOutcome | None:
        """E1/E2 for a rejected call, None for an accepted one; no handler is entered."""
        call = action.tool_call
        message = None
        if call is not None:
            try:
                self._registry.validate(call)
            except ToolValidationError as exc:
                message = str(exc)
            else:
                return None
        if self._wording.no_tool_call is None:
            # B10: the executor resolves a rejected call without entering anything.
            (outcome,) = await self._registry.batch_executor().execute_batch([action])
            if outcome.status is ActionStatus.NOT_EXECUTED:
                return outcome
        if message is None:
            message = self._wording.no_tool_call(index) if self._wording.no_tool_call else ""
        return _synthetic(ActionStatus.NOT_EXECUTED, message or "this action was rejected")


def _check_same_batch(
    batch_id: str, recorded: Sequence[CallEntry], current: Sequence[CallEntry]
) -> None:
    """J9: `ValueError` naming the first index where the calls differ from the header."""
    for index, (old, new) in enumerate(zip(recorded, current, strict=False)):
        if old[0] != new[0]:
            raise ValueError(
                f"batch {batch_id!r}: call {index} differs from the call its journal recorded"
            )
    if len(recorded) != len(current):
        index = min(len(recorded), len(current))
        raise ValueError(
            f"batch {batch_id!r} recorded {len(recorded)} calls, got {len(current)}: "
            f"call {index} differs"
        )
