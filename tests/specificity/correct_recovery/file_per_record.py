"""Runtime 4: one directory per batch, one file per journal record.

Each record is written to a temporary file, `fsync`ed, renamed into place and the directory
`fsync`ed (the batch directory's creation fsyncs the store directory too), so a record is wholly
there or absent (J10, J12). A leftover temporary file is a record never written. Names:
`header.json`, `started-<index>-<attempt>.json`, `committed-<index>.json`; each file holds
`{"record": ..., "crc32": ...}` with the CRC-32 of the record's canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
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
    exact_text,
    outcome_from_data,
    outcome_to_data,
    text_from_data,
)

__all__ = ["RecordDirectoryDamaged", "factory"]

_TEMP_PREFIX = ".tmp-"
_STARTED = re.compile(r"started-(\d{6})-(\d{4})\.json")
_COMMITTED = re.compile(r"committed-(\d{6})\.json")


class RecordDirectoryDamaged(RuntimeError):
    """A record file that cannot be read or fails its check (J10)."""


def _canonical(record: Any) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def _sync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _RecordFiles(Backend):
    def __init__(self, root: Path) -> None:
        self._root = root

    def _folder(self, batch_id: str) -> Path:
        name = hashlib.blake2b(batch_id.encode("utf-8", "surrogatepass"), digest_size=16)
        return self._root / f"b{name.hexdigest()}"

    def damaged(self, batch_id: str, detail: str) -> Exception:
        return RecordDirectoryDamaged(
            f"batch {batch_id!r} in record store {self._folder(batch_id)}: {detail}"
        )

    def _read(self, batch_id: str, path: Path) -> Any:
        try:
            wrapper = json.loads(path.read_text(encoding="utf-8"))
            record = wrapper["record"]
            if checksum(_canonical(record)) != wrapper["crc32"]:
                raise ValueError("CRC-32 mismatch")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise self.damaged(batch_id, f"{path.name} is unreadable: {exc}") from exc
        return record

    def load(self, batch_id: str) -> Recorded | None:
        folder = self._folder(batch_id)
        try:
            names = sorted(n for n in os.listdir(folder) if not n.startswith(_TEMP_PREFIX))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self.damaged(batch_id, f"cannot list the batch: {exc}") from exc
        if not names:
            return None  # created, but its header never landed
        if "header.json" not in names:
            raise self.damaged(batch_id, "records without a header")
        try:
            return self._collect(batch_id, folder, names)
        except (ValueError, TypeError, KeyError) as exc:
            raise self.damaged(batch_id, str(exc)) from exc

    def _collect(self, batch_id: str, folder: Path, names: list[str]) -> Recorded:
        head = self._read(batch_id, folder / "header.json")
        if text_from_data(head["batch"]) != batch_id:
            raise ValueError("the header belongs to another batch")
        recorded = Recorded(header=tuple((c[0], c[1]) for c in head["calls"]))
        attempts: dict[int, list[int]] = {}
        for name in names:
            started, committed = _STARTED.fullmatch(name), _COMMITTED.fullmatch(name)
            record = None if name == "header.json" else self._read(batch_id, folder / name)
            if started:
                index, attempt = int(started[1]), int(started[2])
                if record != {"kind": "started", "index": index, "attempt": attempt}:
                    raise ValueError(f"{name} does not hold its own record")
                attempts.setdefault(index, []).append(attempt)
            elif committed:
                index = int(committed[1])
                if record is None or record["kind"] != "committed" or record["index"] != index:
                    raise ValueError(f"{name} does not hold its own record")
                recorded.committed[index] = outcome_from_data(record["outcome"])
            elif name != "header.json":
                raise ValueError(f"unexpected file {name}")
        for index, seen in attempts.items():
            if sorted(seen) != list(range(1, len(seen) + 1)):
                raise ValueError(f"started records of call {index} have gaps")
            recorded.started[index] = len(seen)
        return recorded

    def _write(self, batch_id: str, name: str, record: Any) -> None:
        folder = self._folder(batch_id)
        if not folder.exists():
            folder.mkdir()
            _sync_directory(self._root)
        text = json.dumps({"record": record, "crc32": checksum(_canonical(record))})
        temp = folder / f"{_TEMP_PREFIX}{os.getpid()}-{name}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            data = memoryview(text.encode("utf-8"))
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, folder / name)
        _sync_directory(folder)

    def put_header(self, batch_id: str, entries: Sequence[CallEntry]) -> None:
        record = {
            "kind": "header",
            "batch": exact_text(batch_id),
            "calls": [list(e) for e in entries],
        }
        self._write(batch_id, "header.json", record)

    def put_started(self, batch_id: str, index: int, attempt: int) -> None:
        record = {"kind": "started", "index": index, "attempt": attempt}
        self._write(batch_id, f"started-{index:06d}-{attempt:04d}.json", record)

    def put_committed(self, batch_id: str, index: int, outcome: ActionOutcome) -> None:
        record = {"kind": "committed", "index": index, "outcome": outcome_to_data(outcome)}
        self._write(batch_id, f"committed-{index:06d}.json", record)

    def close(self) -> None:
        pass


WORDING = Wording(
    interrupted=lambda i: (
        f"call {i} was interrupted by a crash while running; its effects are unknown"
    ),
    not_run_after_env_error=lambda i, k: (
        f"skipped: call {k} hit an environment error, so call {i} was not run"
    ),
    no_tool_call=lambda i: f"call {i} has no tool call",
)


def factory(registry: ToolRegistry, directory: str | Path, **options: int) -> DurableRuntime:
    """The section 12 certification target over record files in `directory`."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    return DurableRuntime(registry, _RecordFiles(root), WORDING, **options)
