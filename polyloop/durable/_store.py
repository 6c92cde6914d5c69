"""`SqliteJournalStore`: the durable record of many batches in one SQLite file (J1, J2, J10, J12).

Every record is one row written in its own `BEGIN IMMEDIATE` transaction, so it is wholly there
or absent after a crash, and durable when `append` returns: WAL with `synchronous=FULL` syncs
the log on every commit. SQLite checks its pages but not a flipped byte inside a value, so each
row also carries a CRC-32 of its own content, verified on every read (J10).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from polyloop._json import type_label

__all__ = [
    "SCHEMA_VERSION",
    "JournalDamagedError",
    "JournalStoreError",
    "SqliteJournalStore",
    "StoredRecord",
]

SCHEMA_VERSION = 1
# PRAGMA application_id of a polyloop journal store: "PLJ1" read as a big-endian int32.
_APPLICATION_ID = 0x504C4A31
_BUSY_TIMEOUT_S = 60.0
_KINDS = ("header", "started", "committed")

_SCHEMA = (
    """CREATE TABLE records (
        batch_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        idx INTEGER NOT NULL,
        body TEXT NOT NULL,
        crc INTEGER NOT NULL,
        PRIMARY KEY (batch_id, seq)
    ) WITHOUT ROWID""",
    # One header and one commit per call, whatever two processes do (J7: no index twice).
    "CREATE UNIQUE INDEX one_header ON records (batch_id) WHERE kind = 'header'",
    "CREATE UNIQUE INDEX one_commit ON records (batch_id, idx) WHERE kind = 'committed'",
)


class JournalStoreError(Exception):
    """A journal store cannot be opened or used: not a store, a newer schema, unreadable."""


class JournalDamagedError(JournalStoreError):
    """A batch's records fail their check or contradict each other (J10): never skipped."""


@dataclass(frozen=True, kw_only=True)
class StoredRecord:
    """One verified record of a batch: `kind` is header, started or committed."""

    seq: int
    kind: str
    index: int
    body: Any


def _crc(batch_id: str, seq: int, kind: str, index: int, body: str) -> int:
    text = f"{batch_id}\x00{seq}\x00{kind}\x00{index}\x00{body}"
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


class SqliteJournalStore:
    """A journal store in one SQLite file, safe for several processes at once.

    `path` is created if absent (its directory must exist). The connection is opened here, so a
    file that is not a store, or one written by a newer schema, fails at construction.
    `read_only=True` opens an existing store without writing anything (the `show` command).
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                f"SqliteJournalStore(path) takes a str or os.PathLike, got {type_label(path)}"
            )
        self._path = os.fspath(path)
        if not self._path:
            raise ValueError("SqliteJournalStore(path): the path is empty")
        self._read_only = bool(read_only)
        directory = os.path.dirname(os.path.abspath(self._path)) or "."
        if not os.path.isdir(directory):
            raise FileNotFoundError(
                f"journal store {self._path!r}: its directory {directory!r} does not exist "
                "(create it first; the store creates only its own file)"
            )
        if os.path.isdir(self._path):
            raise IsADirectoryError(
                f"journal store {self._path!r} is a directory; give the path of a file"
            )
        existed = os.path.exists(self._path)
        if read_only and not existed:
            raise FileNotFoundError(f"journal store {self._path!r} does not exist")
        self._connection = self._connect()
        try:
            self._check_or_create(existed)
        except BaseException:
            self._connection.close()
            raise
        if not existed and not read_only:
            _fsync_directory(directory)  # J12: the new file's directory entry is durable too

    @property
    def path(self) -> str:
        """The store's file path, as given."""
        return self._path

    def _connect(self) -> sqlite3.Connection:
        try:
            if self._read_only:
                uri = "file:" + _uri_path(self._path) + "?mode=ro"
                if not os.path.exists(self._path + "-wal"):
                    # Nobody has it open for writing: read the file as it is, creating no
                    # -wal/-shm beside it (mode=ro alone would, for a WAL database).
                    uri += "&immutable=1"
                connection = sqlite3.connect(
                    uri, uri=True, timeout=_BUSY_TIMEOUT_S, isolation_level=None
                )
            else:
                connection = sqlite3.connect(
                    self._path, timeout=_BUSY_TIMEOUT_S, isolation_level=None
                )
        except sqlite3.Error as exc:
            raise JournalStoreError(
                f"journal store {self._path!r} cannot be opened: {exc}"
            ) from None
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            if not self._read_only:
                mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    raise JournalStoreError(
                        f"journal store {self._path!r}: SQLite refused WAL mode (got {mode!r})"
                    )
            # J12: every commit syncs the log; on macOS only F_FULLFSYNC reaches the platter.
            connection.execute("PRAGMA synchronous = FULL")
            if sys.platform == "darwin":
                connection.execute("PRAGMA fullfsync = ON")
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise JournalStoreError(
                f"{self._path!r} is not a polyloop journal store (SQLite says: {exc})"
            ) from None
        except BaseException:
            connection.close()
            raise
        return connection

    def _check_or_create(self, existed: bool) -> None:
        connection = self._connection
        try:
            application_id = connection.execute("PRAGMA application_id").fetchone()[0]
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise JournalStoreError(
                f"{self._path!r} is not a polyloop journal store (SQLite says: {exc})"
            ) from None
        if application_id == 0 and tables == 0 and version == 0:
            if self._read_only:
                raise JournalStoreError(f"{self._path!r} is empty: no journal store was written")
            self._create()
            return
        if application_id != _APPLICATION_ID:
            raise JournalStoreError(
                f"{self._path!r} is an SQLite file but not a polyloop journal store "
                f"(application_id {application_id:#x}, expected {_APPLICATION_ID:#x})"
            )
        if version > SCHEMA_VERSION:
            raise JournalStoreError(
                f"journal store {self._path!r} has schema version {version}, newer than this "
                f"polyloop's {SCHEMA_VERSION}: upgrade polyloop to read it"
            )
        if version < 1:
            raise JournalDamagedError(
                f"journal store {self._path!r} has no schema version (damaged or half-created)"
            )

    def _create(self) -> None:
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created it while this one waited for the lock.
            if connection.execute("PRAGMA application_id").fetchone()[0] == _APPLICATION_ID:
                connection.execute("COMMIT")
                return
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the connection; the store object is unusable afterwards."""
        self._connection.close()

    def __enter__(self) -> SqliteJournalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteJournalStore({self._path!r})"

    # -- records -----------------------------------------------------------------------------

    def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
        """Write one record in its own transaction; durable when this returns (J2, J12).

        Raises (a journal fault, B16) if it cannot be made durable, including a unique-key
        conflict: a second header for the batch, or a second commit of one call.
        """
        if self._read_only:
            raise JournalStoreError(f"journal store {self._path!r} was opened read-only")
        if kind not in _KINDS:
            raise ValueError(f"unknown record kind {kind!r}")
        # ASCII: a lone surrogate (a file name decoded with surrogateescape) is kept as its
        # escape, so any str the executor saw round-trips exactly; SQLite takes only UTF-8.
        text = json.dumps(body, ensure_ascii=True, separators=(",", ":"))
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            row = connection.execute(
                "SELECT max(seq) FROM records WHERE batch_id = ?", (batch_id,)
            ).fetchone()
            seq = 0 if row[0] is None else row[0] + 1
            connection.execute(
                "INSERT INTO records (batch_id, seq, kind, idx, body, crc) VALUES (?,?,?,?,?,?)",
                (batch_id, seq, kind, index, text, _crc(batch_id, seq, kind, index, text)),
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

    def records(self, batch_id: str) -> list[StoredRecord]:
        """Every record of `batch_id` in write order, each verified (J10); [] if none."""
        try:
            rows = self._connection.execute(
                "SELECT seq, kind, idx, body, crc FROM records WHERE batch_id = ? ORDER BY seq",
                (batch_id,),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalDamagedError(
                f"journal store {self._path!r}, batch {batch_id!r}: unreadable ({exc})"
            ) from None
        return [self._verify(batch_id, row) for row in rows]

    def batch_ids(self) -> list[str]:
        """The batch ids in the store, sorted."""
        try:
            rows = self._connection.execute(
                "SELECT DISTINCT batch_id FROM records ORDER BY batch_id"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalDamagedError(f"journal store {self._path!r}: unreadable ({exc})") from None
        ids = []
        for row in rows:
            if type(row[0]) is not str:
                raise JournalDamagedError(
                    f"journal store {self._path!r}: a batch id is not text ({row[0]!r})"
                )
            ids.append(row[0])
        return ids

    def _verify(self, batch_id: str, row: Sequence[Any]) -> StoredRecord:
        seq, kind, index, text, crc = row
        where = f"journal store {self._path!r}, batch {batch_id!r}, record {seq!r}"
        if (
            type(seq) is not int
            or type(kind) is not str
            or type(index) is not int
            or type(text) is not str
            or type(crc) is not int
            or kind not in _KINDS
            or _crc(batch_id, seq, kind, index, text) != crc
        ):
            raise JournalDamagedError(f"{where}: fails its CRC-32 check (damaged); nothing was run")
        try:
            body = json.loads(text)
        except ValueError:
            raise JournalDamagedError(f"{where}: its content is not valid JSON") from None
        return StoredRecord(seq=seq, kind=kind, index=index, body=body)

    def iter_all(self) -> Iterator[tuple[str, list[StoredRecord]]]:
        """Every batch with its verified records."""
        for batch_id in self.batch_ids():
            yield batch_id, self.records(batch_id)


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def _fsync_directory(directory: str) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # platforms without directory descriptors (Windows)
    try:
        os.fsync(descriptor)
    except OSError as exc:
        raise JournalStoreError(
            f"cannot fsync the directory {directory!r} of a new journal store: {exc}"
        ) from None
    finally:
        os.close(descriptor)
