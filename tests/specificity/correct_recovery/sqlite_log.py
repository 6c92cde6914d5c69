"""Runtime 1: sqlite3 (WAL, synchronous=FULL), one row per journal record, one transaction each.

Every row carries a CRC-32 of `kind|index|body`, checked on every read (J10: SQLite itself does
not notice a flipped byte inside a value).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
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

__all__ = ["SqliteLogDamaged", "factory"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    batch TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    idx INTEGER NOT NULL,
    body TEXT NOT NULL,
    crc INTEGER NOT NULL,
    PRIMARY KEY (batch, seq)
)
"""


class SqliteLogDamaged(RuntimeError):
    """The journal database cannot be trusted (J10)."""


def _key(batch_id: str) -> str:
    """The batch id as stored: hex of its UTF-8 (surrogatepass), so any `str` binds, 1:1."""
    return batch_id.encode("utf-8", "surrogatepass").hex()


def _sealed(kind: str, index: int, body: str) -> int:
    return checksum(f"{kind}|{index}|{body}")


class _SqliteLog(Backend):
    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def damaged(self, batch_id: str, detail: str) -> Exception:
        return SqliteLogDamaged(f"journal {self._path} is damaged for batch {batch_id!r}: {detail}")

    def _connect(self, batch_id: str) -> sqlite3.Connection:
        if self._conn is None:
            try:
                conn = sqlite3.connect(self._path, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute(_SCHEMA)
            except sqlite3.DatabaseError as exc:
                raise self.damaged(batch_id, f"unreadable ({exc})") from exc
            self._conn = conn
        return self._conn

    def load(self, batch_id: str) -> Recorded | None:
        conn = self._connect(batch_id)
        try:
            rows = conn.execute(
                "SELECT seq, kind, idx, body, crc FROM journal WHERE batch = ? ORDER BY seq",
                (_key(batch_id),),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self.damaged(batch_id, f"unreadable ({exc})") from exc
        if not rows:
            return None
        try:
            return self._decode(rows)
        except (ValueError, TypeError, KeyError) as exc:
            raise self.damaged(batch_id, str(exc)) from exc

    def _decode(self, rows: list[Any]) -> Recorded:
        recorded: Recorded | None = None
        for seq, kind, idx, body, crc in rows:
            if not isinstance(body, str) or _sealed(kind, idx, body) != crc:
                raise ValueError(f"record {seq} fails its CRC-32")
            data = json.loads(body)
            if kind == "header" and recorded is None and seq == 0:
                recorded = Recorded(header=tuple((str(d), p) for d, p in data))
            elif recorded is None:
                raise ValueError("records before the header")
            elif kind == "started" and data == {"attempt": recorded.started.get(idx, 0) + 1}:
                recorded.started[idx] = data["attempt"]
            elif kind == "committed" and idx not in recorded.committed:
                recorded.committed[idx] = outcome_from_data(data)
            else:
                raise ValueError(f"record {seq} ({kind}) is out of place")
        if recorded is None:
            raise ValueError("no header")
        return recorded

    def _append(self, batch_id: str, kind: str, index: int, body: str) -> None:
        conn = self._connect(batch_id)
        conn.execute("BEGIN IMMEDIATE")
        try:
            (seq,) = conn.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM journal WHERE batch = ?", (_key(batch_id),)
            ).fetchone()
            conn.execute(
                "INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?)",
                (_key(batch_id), seq, kind, index, body, _sealed(kind, index, body)),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def put_header(self, batch_id: str, entries: Sequence[CallEntry]) -> None:
        self._append(batch_id, "header", -1, json.dumps([list(e) for e in entries]))

    def put_started(self, batch_id: str, index: int, attempt: int) -> None:
        self._append(batch_id, "started", index, json.dumps({"attempt": attempt}))

    def put_committed(self, batch_id: str, index: int, outcome: ActionOutcome) -> None:
        self._append(batch_id, "committed", index, json.dumps(outcome_to_data(outcome)))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


WORDING = Wording(
    interrupted=lambda i: "interrupted while running; its effects are unknown",
    not_run_after_env_error=lambda i, k: (
        f"not run: call {k} reported an environment error before this call started"
    ),
    no_tool_call=lambda i: "this action holds no tool call, so nothing was run",
)


def factory(registry: ToolRegistry, directory: str | Path, **options: int) -> DurableRuntime:
    """The section 12 certification target over a sqlite record log in `directory`."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    return DurableRuntime(registry, _SqliteLog(root / "journal.sqlite3"), WORDING, **options)
