"""Parent side of the crash tests: lifetimes in child processes, a ledger, the invariants.

`Schedule.lifetime` starts `tests/_durable_child.py` and waits for it (it may SIGKILL itself);
`check_invariants` judges the ledger, the store's state between lifetimes and the outcomes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polyloop.durable import SqliteJournalStore, read_batch

CHILD = Path(__file__).with_name("_durable_child.py")
INTERRUPTED = "interrupted while running; its effects are unknown"
NEVER_TOOLS = {"never", "never_x"}


@dataclass
class Schedule:
    directory: Path
    calls: list[tuple[str, dict[str, Any]]]
    batch_id: str = "batch"
    max_attempts: int = 3
    store_name: str = "journal.db"
    ledger_name: str = "ledger.jsonl"
    lives: list[dict[str, Any]] = field(default_factory=list)

    @property
    def store(self) -> Path:
        return self.directory / self.store_name

    @property
    def ledger(self) -> Path:
        return self.directory / self.ledger_name

    def start(
        self,
        crash: tuple[str, int] | None = None,
        *,
        policies: dict[str, str] | None = None,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
        life = len(self.lives)
        config = {
            "life": life,
            "crash": list(crash) if crash else None,
            "ledger": str(self.ledger),
            "store": str(self.store),
            "batch_id": self.batch_id,
            "calls": [[name, extra] for name, extra in (calls or self.calls)],
            "policies": policies or {},
            "max_attempts": self.max_attempts,
            "out": str(self.directory / f"out-{self.batch_id}-{life}.json"),
        }
        path = self.directory / f"config-{self.batch_id}-{life}.json"
        path.write_text(json.dumps(config))
        record: dict[str, Any] = {
            "config": config,
            "committed_before": self.committed(),
        }
        self.lives.append(record)
        process = subprocess.Popen(
            [sys.executable, str(CHILD), str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        return process, record

    def finish(self, process: subprocess.Popen[bytes], record: dict[str, Any]) -> None:
        _, stderr = process.communicate(timeout=120)
        record["returncode"] = process.returncode
        record["stderr"] = stderr.decode(errors="replace")
        out = Path(record["config"]["out"])
        record["outcomes"] = json.loads(out.read_text()) if out.exists() else None
        record["committed_after"] = self.committed()
        if process.returncode not in (0, -signal.SIGKILL):
            raise AssertionError(f"lifetime failed ({process.returncode}):\n{record['stderr']}")

    def lifetime(
        self,
        crash: tuple[str, int] | None = None,
        *,
        policies: dict[str, str] | None = None,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> dict[str, Any]:
        process, record = self.start(crash, policies=policies, calls=calls)
        self.finish(process, record)
        return record

    def committed(self) -> list[list[Any]]:
        """The committed outcomes now, read through a fresh connection (empty if no store)."""
        if not self.store.exists():
            return []
        with SqliteJournalStore(self.store) as store:
            state = read_batch(store, self.batch_id)
        if state is None:
            return []
        return [[o.status.name, o.observation, o.observation_is_synthetic] for o in state.committed]

    def ledger_lines(self) -> list[dict[str, Any]]:
        if not self.ledger.exists():
            return []
        return [json.loads(line) for line in self.ledger.read_text().splitlines()]


def entries(lines: list[dict[str, Any]], batch_calls: int | None = None) -> Counter[int]:
    return Counter(line["call"] for line in lines if line["event"] == "enter")


def check_invariants(schedule: Schedule, outcomes: list[list[Any]]) -> None:
    """Section 12's invariants over every lifetime of `schedule` (J3, J5, J8, J13)."""
    lines = schedule.ledger_lines()
    calls = schedule.calls
    assert len(outcomes) == len(calls), "J8: one outcome per call"
    entered = entries(lines)
    for index, (name, _) in enumerate(calls):
        if name in NEVER_TOOLS:
            assert entered[index] <= 1, f"J5: NEVER call {index} entered {entered[index]} times"
        else:
            assert entered[index] <= schedule.max_attempts, (
                f"J13: SAFE call {index} entered {entered[index]} times"
            )
    for life, record in enumerate(schedule.lives):
        done = len(record["committed_before"])
        for line in lines:
            if line["life"] == life and line["event"] == "enter":
                assert line["call"] >= done, (
                    f"J3: call {line['call']} entered in lifetime {life} after its commit"
                )
        # J3: a committed outcome is returned exactly, whatever happens later.
        assert outcomes[: len(record["committed_after"])] == record["committed_after"]
    for index, (status, observation, _synthetic) in enumerate(outcomes):
        if status == "EXECUTED":
            assert any(
                line["call"] == index
                and line["event"] == "return"
                and line.get("obs") == observation
                for line in lines
            ), f"call {index} EXECUTED without a matching return in the ledger"
    # J5: a NEVER call entered in a lifetime that died before committing it is interrupted.
    for life, record in enumerate(schedule.lives):
        if record["returncode"] != -signal.SIGKILL:
            continue
        committed = len(record["committed_after"])
        for line in lines:
            if (
                line["life"] == life
                and line["event"] == "enter"
                and line["call"] >= committed
                and calls[line["call"]][0] in NEVER_TOOLS
            ):
                assert outcomes[line["call"]] == ["ENV_ERROR", INTERRUPTED, True], (
                    f"J5: in-doubt NEVER call {line['call']} answered {outcomes[line['call']]}"
                )
