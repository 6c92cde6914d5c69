"""Smoke test of the four independent section 12 runtimes under real SIGKILLs.

Each lifetime is a fresh child process (forked; it runs correct_recovery_child.lifetime) whose
handler kills its own process; a ledger outside the runtime's directory records every handler
entry.
"""

from __future__ import annotations

import asyncio
import errno
import importlib
import multiprocessing
import os
import signal
import sqlite3
import tempfile
from contextlib import closing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionStatus,
    ReplayPolicy,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

from . import correct_recovery_child as child

HERE = Path(__file__).resolve().parent
RUNTIMES = ("sqlite_log", "jsonl_log", "sqlite_rows", "file_per_record")
PRESENT = [name for name in RUNTIMES if (HERE / "correct_recovery" / f"{name}.py").exists()]

EXECUTED, NOT_EXECUTED, ENV_ERROR = "executed", "not_executed", "env_error"
SAFE = ReplayPolicy.SAFE
PAIR = ("first", "second")  # the child's "pair" scenario


FORK = multiprocessing.get_context("fork")


def _child(sender: Connection, args: tuple[str, ...]) -> None:
    try:
        result: dict[str, Any] = child.lifetime(*args)
    except BaseException as exc:  # a bug in the runtime: report it rather than hang
        result = {"crash": repr(exc)}
    sender.send(result)


class Lab:
    """One runtime's directory and the ledger its handlers write (outside that directory)."""

    def __init__(self, runtime: str, tmp_path: Path) -> None:
        self.runtime = runtime
        self.directory = tmp_path / "store"
        self.ledger = tmp_path / "ledger.txt"

    def lifetime(
        self, batch_id: str, scenario: str, *, killed: bool = False, variant: str = "default"
    ) -> Any:
        """One lifetime in a forked child (a fresh process; forking skips the interpreter's
        start-up, which dominates the run time on a loaded machine)."""
        args = (self.runtime, str(self.directory), str(self.ledger), batch_id, scenario, variant)
        receiver, sender = FORK.Pipe(duplex=False)
        process = FORK.Process(target=_child, args=(sender, args))
        process.start()
        sender.close()
        try:
            result = receiver.recv() if receiver.poll(60) else None
        except EOFError:  # the child died without answering
            result = None
        process.join(60)
        if killed:
            assert process.exitcode == -signal.SIGKILL and result is None
            return None
        assert process.exitcode == 0 and result is not None, result
        assert "crash" not in result, result["crash"]
        return result

    def entries(self) -> list[str]:
        if not self.ledger.exists():
            return []
        return self.ledger.read_text(encoding="utf-8").splitlines()


@pytest.fixture(params=PRESENT)
def lab(request: pytest.FixtureRequest, tmp_path: Path) -> Lab:
    return Lab(request.param, tmp_path)


def test_J5_J11_never_call_in_doubt_is_not_rerun(lab: Lab) -> None:
    lab.lifetime("b", "never", killed=True)
    assert lab.entries() == ["echo a", "send die"]
    first = lab.lifetime("b", "never")["outcomes"]
    assert first[0] == [EXECUTED, "echo:a", False, False]  # J3: the recorded outcome
    assert first[1][0] == ENV_ERROR and first[1][2] is True  # interrupted, never "not run"
    assert first[2][0] == NOT_EXECUTED and first[2][2] is True
    assert "1" in first[2][1]  # B13 via J5: names the in-doubt call by its whole-batch index
    assert lab.entries() == ["echo a", "send die"]  # J5: nothing entered on resume
    again = lab.lifetime("b", "never")["outcomes"]
    assert again == first  # J11: resuming a finished batch enters nothing, same outcomes
    assert lab.entries() == ["echo a", "send die"]


def test_J4_J3_safe_call_in_doubt_is_rerun_committed_one_is_not(lab: Lab) -> None:
    lab.lifetime("b", "safe", killed=True)
    assert lab.entries() == ["echo a", "fetch b"]
    outcomes = lab.lifetime("b", "safe")["outcomes"]
    assert outcomes == [
        [EXECUTED, "echo:a", False, False],
        [EXECUTED, "fetched:b", False, False],
        [EXECUTED, "echo:c", False, False],
    ]
    assert lab.entries() == ["echo a", "fetch b", "fetch b", "echo c"]


def test_J13_crash_loop_is_bounded_then_interrupted(lab: Lab) -> None:
    lab.lifetime("b", "loop", killed=True)
    lab.lifetime("b", "loop", killed=True)  # MAX_ATTEMPTS = 2 in the child
    outcomes = lab.lifetime("b", "loop")["outcomes"]
    assert lab.entries() == ["echo a", "loop", "loop"]
    assert outcomes[0] == [EXECUTED, "echo:a", False, False]
    assert outcomes[1][0] == ENV_ERROR and outcomes[1][2] is True
    assert outcomes[2][0] == NOT_EXECUTED and "1" in outcomes[2][1]


def test_J10_flipped_byte_in_a_record_is_damage_naming_store_and_batch(lab: Lab) -> None:
    lab.lifetime("batch-x", "never", killed=True)
    lab.lifetime("batch-x", "never")
    flipped = 0
    for path in lab.directory.rglob("*"):
        data = path.read_bytes() if path.is_file() else b""
        if b"echo:a" in data:
            path.write_bytes(data.replace(b"echo:a", b"echo:A"))
            flipped += 1
    assert flipped >= 1
    damaged = lab.lifetime("batch-x", "never")
    assert "error" in damaged and damaged["error"] != "ValueError"
    assert str(lab.directory) in damaged["message"] and "batch-x" in damaged["message"]
    assert lab.entries() == ["echo a", "send die"]


def snapshot(directory: Path) -> dict[str, object]:
    """The store's logical content: SQLite databases as SQL dumps (a checkpoint of the WAL on
    close is SQLite moving bytes, not a record written), every other file as bytes."""
    content: dict[str, object] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if path.name.endswith(("-wal", "-shm")):
            continue
        if path.suffix in (".sqlite3", ".db"):
            with closing(sqlite3.connect(path)) as conn:
                content[str(path)] = list(conn.iterdump())
        else:
            content[str(path)] = path.read_bytes()
    return content


def test_J9_changed_batch_is_refused_and_the_store_is_unchanged(lab: Lab) -> None:
    lab.lifetime("b", "safe", killed=True)
    before = snapshot(lab.directory)
    refused = lab.lifetime("b", "changed")  # other arguments at index 1
    assert refused["error"] == "ValueError" and "call 1" in refused["message"]
    refused = lab.lifetime("b", "never")  # other tool name at index 1
    assert refused["error"] == "ValueError" and "call 1" in refused["message"]
    assert snapshot(lab.directory) == before
    assert lab.entries() == ["echo a", "fetch b"]
    outcomes = lab.lifetime("b", "safe")["outcomes"]  # the refusals wrote nothing
    assert [row[1] for row in outcomes] == ["echo:a", "fetched:b", "echo:c"]


@pytest.mark.parametrize("variant", ["fetch-never", "no-fetch"])
def test_J6_current_never_or_unregistered_tool_is_not_rerun(lab: Lab, variant: str) -> None:
    lab.lifetime("b", "safe", killed=True)  # fetch was SAFE in the header
    outcomes = lab.lifetime("b", "safe", variant=variant)["outcomes"]
    assert lab.entries() == ["echo a", "fetch b"]
    assert outcomes[0] == [EXECUTED, "echo:a", False, False]
    assert outcomes[1][0] == ENV_ERROR and outcomes[1][2] is True
    assert outcomes[2][0] == NOT_EXECUTED and "1" in outcomes[2][1]


def test_J4_in_doubt_safe_call_the_resume_never_reaches_is_interrupted(lab: Lab) -> None:
    lab.lifetime("b", "pair", killed=True)  # both concurrency-safe: both in doubt
    assert lab.entries() == ["pair first", "pair second"]
    outcomes = lab.lifetime("b", "pair", variant="pair-down")["outcomes"]
    assert lab.entries() == ["pair first", "pair second", "pair first"]
    assert outcomes[0] == [ENV_ERROR, "backend down", False, False]
    assert outcomes[1][0] == ENV_ERROR and outcomes[1][2] is True  # never "not run"


def test_J5_rejected_calls_keep_their_E1_E2_outcome_after_a_never_doubt(lab: Lab) -> None:
    lab.lifetime("b", "mixed", killed=True)
    outcomes = lab.lifetime("b", "mixed")["outcomes"]
    assert lab.entries() == ["echo a", "send die"]
    assert [row[0] for row in outcomes] == [EXECUTED, ENV_ERROR] + [NOT_EXECUTED] * 3
    assert all(row[2] is True for row in outcomes[1:])
    assert "nope" in outcomes[3][1]  # E2: the rejection message names the unknown tool
    assert "1" in outcomes[4][1] and outcomes[4][1] != outcomes[2][1]
    assert lab.lifetime("b", "mixed")["outcomes"] == outcomes


def _only(name: str, tmp_path: Path) -> Lab:
    if name not in PRESENT:
        pytest.skip(f"{name} is not written yet")
    return Lab(name, tmp_path)


def test_J10_torn_last_line_is_a_record_never_written(tmp_path: Path) -> None:
    lab = _only("jsonl_log", tmp_path)
    lab.lifetime("b", "safe", killed=True)
    (journal,) = lab.directory.glob("*.jsonl")
    with journal.open("ab") as handle:
        handle.write(b'0badc0de {"type":"committed","ind')
    outcomes = lab.lifetime("b", "safe")["outcomes"]
    assert [row[1] for row in outcomes] == ["echo:a", "fetched:b", "echo:c"]
    text = journal.read_text(encoding="utf-8")
    assert text.endswith("\n") and "0badc0de" not in text
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join([*lines[:1], b"00000000 {}\n", *lines[1:]]))
    damaged = lab.lifetime("b", "safe")
    assert "error" in damaged and str(lab.directory) in damaged["message"]


def test_J10_leftover_temporary_file_is_a_record_never_written(tmp_path: Path) -> None:
    lab = _only("file_per_record", tmp_path)
    lab.lifetime("b", "safe", killed=True)
    (folder,) = lab.directory.iterdir()
    (folder / ".tmp-1-committed-000001.json").write_text('{"record": {"kind": "comm')
    outcomes = lab.lifetime("b", "safe")["outcomes"]
    assert [row[1] for row in outcomes] == ["echo:a", "fetched:b", "echo:c"]


@pytest.mark.parametrize(("name", "header_fsyncs"), [("jsonl_log", 2), ("file_per_record", 3)])
def test_J2_J12_failed_fsync_of_started_is_a_journal_fault_and_nothing_is_entered(
    name: str, header_fsyncs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _only(name, tmp_path)
    module = importlib.import_module(f"{__package__}.correct_recovery.{name}")
    entered: list[str] = []

    async def probe(arguments: dict[str, Any]) -> str:
        entered.append("probe")
        return "ran"

    spec = ToolSpec(name="probe", description="probe", parameters={"type": "object"}, handler=probe)
    runtime = module.factory(ToolRegistry([spec]), tmp_path / "store")
    calls = {"n": 0}
    real_fsync = os.fsync

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] > header_fsyncs:  # the header is durable; the started record is not
            raise OSError(errno.EIO, "injected fsync failure")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    action = Action(tool_call=ToolCall(name="probe", arguments={}))
    with pytest.raises(OSError, match="injected fsync failure"):
        asyncio.run(runtime.run("b", [action]))
    assert entered == []
    assert calls["n"] == header_fsyncs + 1  # never retried
    stored = [p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert any(b'"header"' in data for data in stored)  # it was the started record that failed


_AWKWARD = st.sampled_from(["\ud800", "\udfff", "\u2028", "\r", "\n", "\x00", '"', "|", " "])
_TEXT = st.lists(st.one_of(st.characters(), _AWKWARD), max_size=30).map("".join)


@pytest.mark.parametrize("name", RUNTIMES)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXT, raises=st.sampled_from(["", "env", "value"]), key=_TEXT)
def test_J3_recorded_outcomes_come_back_exactly_for_any_text(
    name: str, tmp_path: Path, text: str, raises: str, key: str
) -> None:
    _only(name, tmp_path)
    module = importlib.import_module(f"{__package__}.correct_recovery.{name}")

    async def speak(arguments: dict[str, Any]) -> str:
        if raises == "env":
            raise ToolEnvironmentError(text)
        if raises == "value":
            raise ValueError(text)
        return text

    spec = ToolSpec(name="speak", description="s", parameters={"type": "object"}, handler=speak)
    registry = ToolRegistry([spec])
    action = Action(tool_call=ToolCall(name="speak", arguments={key: [text, 1.5, None]}))
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    first = asyncio.run(module.factory(registry, directory).run(key or "k", [action] * 2))
    again = asyncio.run(module.factory(registry, directory).run(key or "k", [action] * 2))
    assert again == first
    assert text in first[0].observation


def test_J4_B14_cancelled_resume_commits_unreached_in_doubt_call_interrupted(
    lab: Lab,
) -> None:
    lab.lifetime("b", "pair", killed=True)  # both concurrency-safe: both in doubt
    module = importlib.import_module(f"{__package__}.correct_recovery.{lab.runtime}")

    async def hang(arguments: dict[str, Any]) -> str:
        await asyncio.sleep(60)
        return "unreachable"

    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    spec = ToolSpec(  # now exclusive: the resume enters call 0 alone
        name="pair", description="p", parameters=schema, handler=hang, replay_policy=SAFE
    )
    registry = ToolRegistry([spec])
    actions = [Action(tool_call=ToolCall(name="pair", arguments={"x": x})) for x in PAIR]

    async def cancelled_resume() -> None:
        task = asyncio.create_task(module.factory(registry, lab.directory).run("b", actions))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_resume())
    outcomes = asyncio.run(module.factory(registry, lab.directory).run("b", actions))
    assert [(o.status, o.observation_is_synthetic) for o in outcomes] == [
        (ActionStatus.ENV_ERROR, True),  # B14: entered again, ended by the cancellation
        (ActionStatus.ENV_ERROR, True),  # J4: in doubt, never reached: interrupted, not "not run"
    ]
