"""Runtime 3: sqlite3 (WAL, synchronous=FULL), one row per call updated in place.

The header inserts a `batches` row and one `calls` row per call (state `pending`) in one
transaction; `started` bumps the row's attempt counter and sets state `started`; `committed`
stores the outcome and sets state `committed`. Every row carries a CRC-32 of all its columns,
recomputed by every update and checked on every read. Each write opens its own connection (with
the pragmas set on it, J12) and is one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from polyloop import ActionOutcome, ToolRegistry

from ._core import (
    Backend,
    CallEntry,
    DurableRuntime,
    Recorded,
    Wording,
    checksum,
    outcome_from_data,
    outcome_to_data,
)

__all__ = ["CallTableDamaged", "factory"]

_TABLES = (
    "CREATE TABLE IF NOT EXISTS batches (batch TEXT PRIMARY KEY, calls INTEGER NOT NULL,"
    " crc INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS calls (batch TEXT NOT NULL, idx INTEGER NOT NULL,"
    " description TEXT NOT NULL, policy TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL,"
    " outcome TEXT, crc INTEGER NOT NULL, PRIMARY KEY (batch, idx))",
)


class CallTableDamaged(Exception):
    """A call table whose rows fail their check, or a database that cannot be read (J10)."""


def _key(batch_id: str) -> str:
    """The batch id as stored: hex of its UTF-8 (surrogatepass), so any `str` binds, 1:1."""
    return batch_id.encode("utf-8", "surrogatepass").hex()


def _row_crc(batch: str, idx: int, desc: str, policy: Any, state: str, n: int, out: Any) -> int:
    return checksum(json.dumps([batch, idx, desc, policy, state, n, out]))


class _CallRows(Backend):
    def __init__(self, path: Path) -> None:
        self._path = path

    def damaged(self, batch_id: str, detail: str) -> Exception:
        return CallTableDamaged(f"{detail} (store {self._path}, batch {batch_id!r})")

    @contextmanager
    def _transaction(self, batch_id: str, *, write: bool) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self._path, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise self.damaged(batch_id, f"cannot open the database: {exc}") from exc
        try:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                if write:
                    for table in _TABLES:
                        conn.execute(table)
            except sqlite3.DatabaseError as exc:
                raise self.damaged(batch_id, f"cannot read the database: {exc}") from exc
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def load(self, batch_id: str) -> Recorded | None:
        if not self._path.exists():
            return None
        with self._transaction(batch_id, write=False) as conn:
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
                if "batches" not in tables:
                    return None
                head = conn.execute(
                    "SELECT calls, crc FROM batches WHERE batch = ?", (_key(batch_id),)
                ).fetchone()
                rows = conn.execute(
                    "SELECT idx, description, policy, state, attempts, outcome, crc FROM calls"
                    " WHERE batch = ? ORDER BY idx",
                    (_key(batch_id),),
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise self.damaged(batch_id, f"cannot read the database: {exc}") from exc
        if head is None:
            if rows:
                raise self.damaged(batch_id, "call rows without their batch row")
            return None
        try:
            return _decode(batch_id, head, rows)
        except (ValueError, TypeError, KeyError) as exc:
            raise self.damaged(batch_id, str(exc)) from exc

    def put_header(self, batch_id: str, entries: Sequence[CallEntry]) -> None:
        with self._transaction(batch_id, write=True) as conn:
            count = len(entries)
            crc = checksum(json.dumps([batch_id, count]))
            conn.execute("INSERT INTO batches VALUES (?, ?, ?)", (_key(batch_id), count, crc))
            for idx, (desc, policy) in enumerate(entries):
                crc = _row_crc(batch_id, idx, desc, policy, "pending", 0, None)
                conn.execute(
                    "INSERT INTO calls VALUES (?, ?, ?, ?, 'pending', 0, NULL, ?)",
                    (_key(batch_id), idx, desc, policy, crc),
                )

    def _update(
        self, batch_id: str, index: int, state: str, attempts: int | None, out: Any
    ) -> None:
        with self._transaction(batch_id, write=True) as conn:
            desc, policy, old_attempts = conn.execute(
                "SELECT description, policy, attempts FROM calls WHERE batch = ? AND idx = ?",
                (_key(batch_id), index),
            ).fetchone()
            n = old_attempts if attempts is None else attempts
            crc = _row_crc(batch_id, index, desc, policy, state, n, out)
            conn.execute(
                "UPDATE calls SET state = ?, attempts = ?, outcome = ?, crc = ?"
                " WHERE batch = ? AND idx = ?",
                (state, n, out, crc, _key(batch_id), index),
            )

    def put_started(self, batch_id: str, index: int, attempt: int) -> None:
        self._update(batch_id, index, "started", attempt, None)

    def put_committed(self, batch_id: str, index: int, outcome: ActionOutcome) -> None:
        self._update(batch_id, index, "committed", None, json.dumps(outcome_to_data(outcome)))

    def close(self) -> None:
        pass  # every operation closes its own connection


def _decode(batch_id: str, head: Any, rows: list[Any]) -> Recorded:
    count, crc = head
    if checksum(json.dumps([batch_id, count])) != crc:
        raise ValueError("the batch row fails its CRC-32")
    if [row[0] for row in rows] != list(range(count)):
        raise ValueError("call rows are missing or extra")
    recorded = Recorded(header=tuple((row[1], row[2]) for row in rows))
    for idx, desc, policy, state, attempts, out, row_crc in rows:
        if _row_crc(batch_id, idx, desc, policy, state, attempts, out) != row_crc:
            raise ValueError(f"the row of call {idx} fails its CRC-32")
        if state not in ("pending", "started", "committed") or attempts < 0:
            raise ValueError(f"the row of call {idx} has an impossible state")
        if (state == "committed") != (out is not None) or (state == "started" and attempts < 1):
            raise ValueError(f"the row of call {idx} has an impossible state")
        if attempts:
            recorded.started[idx] = attempts
        if state == "committed":
            recorded.committed[idx] = outcome_from_data(json.loads(out))
    return recorded


WORDING = Wording(
    interrupted=lambda i: (
        "Interrupted: the call was running when its process ended, so its effects are unknown."
    ),
    not_run_after_env_error=lambda i, k: (
        f"Not run: call {k} failed with an environment error, so the batch stopped before call {i}."
    ),
    no_tool_call=None,  # E1/E2 outcomes in the registry executor's own words
)


def factory(registry: ToolRegistry, directory: str | Path, **options: int) -> DurableRuntime:
    """The section 12 certification target over a sqlite call table in `directory`."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    return DurableRuntime(registry, _CallRows(root / "calls.db"), WORDING, **options)
