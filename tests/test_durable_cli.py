"""`python -m polyloop.durable show`: per call committed / in doubt / not started, read-only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from polyloop.durable import SqliteJournalStore
from polyloop.durable.__main__ import main


def _crash_state(path: Path) -> None:
    with SqliteJournalStore(path) as store:
        store.append(
            "b",
            "header",
            -1,
            {
                "calls": [
                    {"tool": "pay", "arguments": {"i": 0}},
                    {"tool": "read", "arguments": {"i": 1}},
                    {"code": "print(2)"},
                ],
                "policies": ["NEVER", "SAFE", "NEVER"],
            },
        )
        store.append("b", "started", 0, {})
        store.append(
            "b",
            "committed",
            0,
            {
                "status": "EXECUTED",
                "observation": "paid",
                "synthetic": False,
                "completion": False,
                "truncated": 0,
            },
        )
        store.append("b", "started", 1, {})
        store.append("b", "started", 1, {})


def test_show_lists_each_call_state_with_status_and_replay_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.db"
    _crash_state(path)
    before = path.read_bytes()
    assert main(["show", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "batch 'b': 3 calls: 1 committed, 1 in doubt, 1 not started"
    assert lines[1].split() == ["0", "pay", "committed", "EXECUTED", '"paid"']
    assert lines[2].split() == ["1", "read", "in", "doubt", "replay", "SAFE", "started", "2x"]
    assert lines[3].split() == ["2", "(code)", "not", "started"]
    assert path.read_bytes() == before  # read-only
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.db"]


def test_show_one_batch_and_a_missing_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.db"
    _crash_state(path)
    assert main(["show", str(path), "b"]) == 0
    assert main(["show", str(path), "nope"]) == 1
    assert "has no batch 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "text"),
    [(None, "does not exist"), (b"plain text\n" * 20, "not a polyloop journal store")],
)
def test_show_refuses_what_is_not_a_store_with_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, text: str
) -> None:
    path = tmp_path / "x.db"
    if content is not None:
        path.write_bytes(content)
    assert main(["show", str(path)]) == 1
    assert text in capsys.readouterr().err


def test_show_refuses_a_damaged_record_naming_the_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.db"
    _crash_state(path)
    data = bytearray(path.read_bytes())
    at = data.find(b"paid")
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["show", str(path)]) == 1
    assert "batch 'b'" in capsys.readouterr().err


def test_show_runs_as_a_module_with_help_and_usage_errors() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "polyloop.durable", "show", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0 and "in doubt" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "polyloop.durable"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_J5_example_really_crashes_and_resumes_without_charging_twice() -> None:
    example = Path(__file__).parents[1] / "examples" / "durable.py"
    result = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, check=True, timeout=120
    )
    out = result.stdout
    assert "first process: exit -9" in out
    assert "1  pay                  in doubt     replay NEVER  started 1x" in out
    assert out.count("charged 30 EUR") == 1
    assert "journal: interrupted while running; its effects are unknown" in out
    assert "journal: not run: call 1 reported an environment error" in out
