"""Running a schedule: each lifetime a fresh, contained child process (contract section 12).

The kit's temporary directory for one schedule holds the target's directory (``target/``, the
only place the target is told about), the ledger the kit's handlers write (outside it) and the
kit's own files (configs, answers, child output). Every lifetime is time-boxed; when it ends,
by itself, by its own SIGKILL or by the time box, the kit kills whatever the child started
(`polyloop._contain.kill_tree`: its group, its marked descendants), so no process outlives a
lifetime. The directory is removed when the schedule is done.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.recovery.schedules import DEFAULT_MAX_ATTEMPTS, Call, Schedule
from polyloop import _contain

__all__ = ["LIFETIME_LIMIT", "Life", "Observation", "run_schedule"]

CHILD = Path(__file__).with_name("_lifetime.py")
LIFETIME_LIMIT = 60.0
"""Seconds one lifetime may take before the kit kills it (a lifetime is a few handler calls)."""
BATCH_ID = "kit-batch"
_BOOT = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"


@dataclass
class Life:
    """What one lifetime did."""

    number: int
    crash: tuple[str, int] | None
    purpose: str
    """``crash``, ``resume``, ``noop``, ``other-batch`` or ``damaged``."""
    ended: str = ""
    """``killed`` (its own SIGKILL), ``returned``, ``raised``, ``timeout`` or ``failed``."""
    outcomes: list[Any] | None = None
    error: str | None = None
    message: str | None = None
    stderr: str = ""
    lines: list[dict[str, Any]] = field(default_factory=list)
    max_attempts: int | None = None
    value_error: bool = False
    in_factory: bool = False
    """It raised from ``factory(registry, directory)``, before ``run``."""
    damaged_at: str | None = None
    """J10: where the kit flipped a byte before this lifetime."""

    def entered(self) -> list[int]:
        return self.events("enter")

    def events(self, event: str) -> list[int]:
        """The calls of this lifetime's ledger lines of `event` (``enter``, ``return``, or a
        journal report: ``started``, ``committed``), in order."""
        return [line["call"] for line in self.lines if line["event"] == event]


@dataclass
class Observation:
    """Every lifetime of one schedule, in order."""

    schedule: Schedule
    lives: list[Life] = field(default_factory=list)
    kit_error: str | None = None
    damage_missed: bool = False
    """The schedule asked for store damage (J10) and no file held call 0's observation as
    plain text, so none was done."""

    def max_attempts(self) -> int:
        found = next((life.max_attempts for life in self.lives if life.max_attempts), None)
        return found if isinstance(found, int) and found >= 1 else DEFAULT_MAX_ATTEMPTS

    def final(self) -> Life | None:
        """The first clean resume that returned (after the crashes and the J9 probe)."""
        return next(
            (life for life in self.lives if life.purpose == "resume" and life.ended == "returned"),
            None,
        )


class _Run:
    def __init__(self, target: str, root: Path, schedule: Schedule, limit: float) -> None:
        self.target = target
        self.root = root
        self.directory = root / "target"
        self.kit = root / "kit"
        self.ledger = root / "ledger.jsonl"
        self.schedule = schedule
        self.limit = limit
        self.directory.mkdir()
        self.kit.mkdir()
        self.env = dict(os.environ)
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        self.env["PYTHONPATH"] = os.pathsep.join(paths)
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"

    def lifetime(
        self,
        observation: Observation,
        purpose: str,
        crash: tuple[str, int] | None = None,
        calls: tuple[Call, ...] | None = None,
    ) -> Life:
        number = len(observation.lives)
        life = Life(number=number, crash=crash, purpose=purpose)
        observation.lives.append(life)
        out = self.kit / f"out-{number}.json"
        pre = self.kit / f"out-{number}.json.pre"
        config: dict[str, Any] = {
            "target": self.target,
            "directory": str(self.directory),
            "ledger": str(self.ledger),
            "life": number,
            "batch_id": BATCH_ID,
            "calls": [c.as_json() for c in (calls or self.schedule.calls)],
            "tools": self.schedule.tools_json(number),
            "crash": list(crash) if crash else None,
            "out": str(out),
        }
        path = self.kit / f"config-{number}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        before = self._ledger_size()
        life.ended, life.stderr = self._spawn(path, number)
        life.lines = self._ledger_lines(before)
        if pre.exists():
            with contextlib.suppress(ValueError):
                life.max_attempts = json.loads(pre.read_text(encoding="utf-8"))["max_attempts"]
        if out.exists() and life.ended == "exited":
            answer = json.loads(out.read_text(encoding="utf-8"))
            if "error" in answer:
                life.ended, life.error, life.message = "raised", answer["error"], answer["message"]
                life.value_error = bool(answer.get("value_error"))
                life.in_factory = bool(answer.get("in_factory"))
            else:
                life.ended, life.outcomes = "returned", answer["outcomes"]
        elif life.ended == "exited":
            life.ended = "failed"
        return life

    def _spawn(self, config: Path, number: int) -> tuple[str, str]:
        mark = _contain.new_mark()
        stderr_path = self.kit / f"stderr-{number}.txt"
        with open(stderr_path, "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(CHILD), str(config)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
                env=_contain.contained_env(mark, self.env),
                cwd=os.getcwd(),
            )
        ended = "timeout"
        start = time.monotonic()
        status: Any = None
        while time.monotonic() - start < self.limit:
            status = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if status is not None:
                break
            time.sleep(0.002)
        # Not yet reaped: the pid is still the child's while its tree is killed.
        _contain.kill_tree(process.pid, mark=mark)
        code = process.wait()
        if status is not None:
            ended = "killed" if code == -signal.SIGKILL else "exited" if code == 0 else "failed"
        text = stderr_path.read_text(encoding="utf-8", errors="replace")
        return ended, text[-2000:]

    def _ledger_size(self) -> int:
        return self.ledger.stat().st_size if self.ledger.exists() else 0

    def _ledger_lines(self, start: int) -> list[dict[str, Any]]:
        if not self.ledger.exists():
            return []
        with open(self.ledger, "rb") as file:
            file.seek(start)
            data = file.read()
        lines = []
        for raw in data.splitlines():
            with contextlib.suppress(ValueError):
                lines.append(json.loads(raw))
        return lines

    def damage(self) -> str | None:
        """Change one letter of every copy of call 0's recorded observation the target's files
        hold as plain text (not in a SQLite -wal/-shm file, whose torn frames SQLite itself
        drops): a store must notice (J10) or it returns what it never recorded, whichever copy
        it reads. None when no file holds it (an encoded or compressed store)."""
        needle = f"{self.schedule.calls[0].tool}#0:".encode()
        places = []
        for path in sorted(self.directory.rglob("*")):
            if not path.is_file() or path.name.endswith(("-wal", "-shm")):
                continue
            data = bytearray(path.read_bytes())
            found = [at for at in range(len(data)) if data.startswith(needle, at)]
            if not found:
                continue
            for at in found:
                data[at] ^= 0x20  # the first letter's case: safe_seq -> Safe_seq
            path.write_bytes(bytes(data))
            places.append(f"{path.name} at byte{'s' if len(found) > 1 else ''} ")
            places[-1] += ", ".join(str(at) for at in found)
        return "; ".join(places) or None


def run_schedule(target: str, schedule: Schedule, *, limit: float = LIFETIME_LIMIT) -> Observation:
    """Every lifetime of `schedule` against the target named `target` (``module:attr``)."""
    observation = Observation(schedule=schedule)
    root = Path(tempfile.mkdtemp(prefix="polyloop-recovery-"))
    try:
        run = _Run(target, root, schedule, limit)
        _play(run, observation)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return observation


def _play(run: _Run, observation: Observation) -> None:
    schedule = run.schedule
    for crash in schedule.crashes:
        life = run.lifetime(observation, "crash", crash)
        if life.ended in ("timeout", "failed"):
            return
    if schedule.other_batch is not None:
        if not schedule.crashes:
            run.lifetime(observation, "crash")  # something to resume: a complete first run
        run.lifetime(observation, "other-batch", calls=schedule.other_calls())
    tries = observation.max_attempts() + 2 if schedule.has_bomb() else 1
    for _ in range(tries):
        life = run.lifetime(observation, "resume")
        if life.ended != "killed":
            break
    if observation.final() is None:
        return
    run.lifetime(observation, "noop")
    if schedule.damage:
        where = run.damage()
        observation.damage_missed = where is None
        if where is not None:
            life = run.lifetime(observation, "damaged")
            life.damaged_at = where
