"""Runtime 2: one append-only JSON-lines file per batch, `fsync` after every record.

A line is `<crc32 as 8 hex digits> <json payload>\\n`. A last chunk without its newline is a torn
append (J10: "a record never written"); it is cut off before the next append, never before the
batch check (J9 writes nothing). A complete line that fails its check is damage.
"""

from __future__ import annotations

import hashlib
import json
import os
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

__all__ = ["JsonlJournalDamaged", "factory"]


class JsonlJournalDamaged(OSError):
    """A journal file that cannot be read or whose records fail their check (J10)."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _JsonlFiles(Backend):
    def __init__(self, root: Path) -> None:
        self._root = root
        self._valid: dict[str, int] = {}  # batch -> length of its valid prefix, once loaded

    def _file(self, batch_id: str) -> Path:
        digest = hashlib.sha256(batch_id.encode("utf-8", "surrogatepass")).hexdigest()
        return self._root / f"batch-{digest[:40]}.jsonl"

    def damaged(self, batch_id: str, detail: str) -> Exception:
        where = self._file(batch_id)
        return JsonlJournalDamaged(f"damaged journal {where} (batch {batch_id!r}): {detail}")

    def load(self, batch_id: str) -> Recorded | None:
        path = self._file(batch_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            self._valid[batch_id] = 0
            return None
        except OSError as exc:
            raise self.damaged(batch_id, f"unreadable: {exc}") from exc
        end = raw.rfind(b"\n") + 1  # whatever follows the last newline is a torn append
        self._valid[batch_id] = end
        payloads = []
        for number, line in enumerate(raw[:end].splitlines(), start=1):
            try:
                crc_text, payload = line.decode("utf-8").split(" ", 1)
                if int(crc_text, 16) != checksum(payload) or len(crc_text) != 8:
                    raise ValueError("CRC-32 mismatch")
                payloads.append(json.loads(payload))
            except ValueError as exc:
                raise self.damaged(batch_id, f"line {number}: {exc}") from exc
        if not payloads:
            return None
        try:
            return _replay(batch_id, payloads)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise self.damaged(batch_id, str(exc)) from exc

    def _append(self, batch_id: str, record: dict[str, Any]) -> None:
        path = self._file(batch_id)
        payload = json.dumps(record, separators=(",", ":"))  # ASCII: any str survives
        line = f"{checksum(payload):08x} {payload}\n".encode("ascii")
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            valid = self._valid.get(batch_id, 0)
            if os.fstat(fd).st_size != valid:
                os.ftruncate(fd, valid)  # drop a torn tail: it was never a record
            os.lseek(fd, valid, os.SEEK_SET)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _fsync_dir(self._root)
        self._valid[batch_id] = valid + len(line)

    def put_header(self, batch_id: str, entries: Sequence[CallEntry]) -> None:
        calls = [{"call": desc, "policy": policy} for desc, policy in entries]
        self._append(batch_id, {"type": "header", "batch": exact_text(batch_id), "calls": calls})

    def put_started(self, batch_id: str, index: int, attempt: int) -> None:
        self._append(batch_id, {"type": "started", "index": index, "attempt": attempt})

    def put_committed(self, batch_id: str, index: int, outcome: ActionOutcome) -> None:
        record = {"type": "committed", "index": index, "outcome": outcome_to_data(outcome)}
        self._append(batch_id, record)

    def close(self) -> None:
        pass  # `_valid` stays: another run of this object may be appending to its own batch


def _replay(batch_id: str, payloads: list[Any]) -> Recorded:
    head, *rest = payloads
    if head.get("type") != "header" or text_from_data(head.get("batch")) != batch_id:
        raise ValueError("the first record is not this batch's header")
    recorded = Recorded(header=tuple((c["call"], c["policy"]) for c in head["calls"]))
    for record in rest:
        kind, index = record["type"], record["index"]
        if kind == "started":
            if record["attempt"] != recorded.started.get(index, 0) + 1:
                raise ValueError(f"started record of call {index} out of sequence")
            recorded.started[index] = record["attempt"]
        elif kind == "committed" and index not in recorded.committed:
            recorded.committed[index] = outcome_from_data(record["outcome"])
        else:
            raise ValueError(f"unexpected {kind} record for call {index}")
    return recorded


WORDING = Wording(
    interrupted=lambda i: (
        "the process stopped while this call ran; whether it took effect is unknown"
    ),
    not_run_after_env_error=lambda i, k: (
        f"call {i} was never started because call {k} reported an environment error"
    ),
    no_tool_call=None,  # E1/E2 outcomes in the registry executor's own words
)


def factory(registry: ToolRegistry, directory: str | Path, **options: int) -> DurableRuntime:
    """The section 12 certification target over JSON-lines files in `directory`."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    return DurableRuntime(registry, _JsonlFiles(root), WORDING, **options)
