"""The command line's judgment of what the child reports (issue 22, items 1, 3 and 6): a wrong
executor that tampers with the kit's reporting gets no pass, an executor that breaks the
reporting is told what it broke, and nothing the target detached outlives the run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _subprocesses import env_with_tests

FAST = ["--profile", "fast"]


def certify(tmp_path: Path, target: str, *argv: str, **extra: str) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "certify", target, *FAST, *argv,
         "--json", str(report)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env_with_tests(**extra),
        timeout=300,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert report.is_file(), done.stderr
    data = json.loads(report.read_text())
    return done.returncode, {r["id"]: r for r in data["results"]}


def test_E5_a_forged_result_written_through_proc_self_fd_is_no_pass(tmp_path: Path) -> None:
    """The executor is wrong (E5) and writes a passing E5 and "done" to every write-only pipe
    it finds; before, the run reported PASSED, exit 0."""
    status, results = certify(
        tmp_path, "hostile.forges_results:ForgesThroughProcFd", "--only", "E5"
    )
    assert status == 1
    assert results["E5"]["status"] == "error"
    assert "carried a message the kit did not write" in results["E5"]["message"]


def test_E5_an_executor_wrapping_json_dumps_at_import_cannot_turn_its_fail_into_a_pass(
    tmp_path: Path,
) -> None:
    status, results = certify(tmp_path, "hostile.wraps_json_dumps:LiesThroughJson", "--only", "E5")
    assert status == 1
    assert results["E5"]["status"] == "fail"


def test_E5_a_signed_result_for_a_clause_not_selected_is_a_clear_error(tmp_path: Path) -> None:
    """The executor digs the kit's own channel out of memory (a forgery the kit cannot stop in
    process) and sends a result for E9; before, the parent crashed in `list.remove`."""
    status, results = certify(tmp_path, "hostile.forges_results:DigsOutTheChannel", "--only", "E5")
    assert status == 1
    assert results["E5"]["status"] == "error"
    assert "a result for E9, which is not selected" in results["E5"]["message"]


def test_E1_closing_the_kits_descriptors_is_diagnosed_as_a_closed_result_channel(
    tmp_path: Path,
) -> None:
    """Before: "the target ended the process: os._exit or sys.exit"."""
    status, results = certify(tmp_path, "hostile.forges_results:ClosesDescriptors", "--only", "E1")
    assert status == 1
    message = results["E1"]["message"]
    assert "could not report: its result channel was closed" in message
    assert "os._exit" not in message


def test_E1_a_broken_json_dumps_is_named_not_blamed_on_os_exit(tmp_path: Path) -> None:
    """Before: a set-up error, "the target ended the process: os._exit or sys.exit"."""
    status, results = certify(tmp_path, "hostile.breaks_json_dumps:Correct", "--only", "E1")
    assert status == 1
    message = results["E1"]["message"]
    assert "RuntimeError: json.dumps is broken" in message
    assert "os._exit" not in message


def test_E1_E5_a_raising_stdout_flush_costs_no_measured_result(tmp_path: Path) -> None:
    """A correct executor whose first call makes ``sys.stdout.flush`` raise; before, every
    clause was an error."""
    status, results = certify(tmp_path, "hostile.forges_results:BreaksFlush", "--only", "E1,E5")
    assert status == 0
    assert {clause: r["status"] for clause, r in results.items()} == {"E1": "pass", "E5": "pass"}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    return not text[text.rfind(b")") + 2 :].startswith(b"Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and a subreaper")
def test_E1_a_detached_daemon_of_the_target_does_not_outlive_the_run(tmp_path: Path) -> None:
    """The target starts a helper with ``start_new_session=True``; before, only the child's
    process group was killed and the helper slept on after the run."""
    pidfile = tmp_path / "daemon.pid"
    status, results = certify(
        tmp_path, "hostile.starts_daemon:StartsDaemon", "--only", "E1",
        HOSTILE_PIDFILE=str(pidfile),
    )  # fmt: skip
    pid = int(pidfile.read_text())
    try:
        assert status == 0 and results["E1"]["status"] == "pass"
        assert not _alive(pid), "the target's detached helper outlived certify"
    finally:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_E5_half_a_line_written_to_the_kits_pipe_loses_no_verdict(tmp_path: Path) -> None:
    """The kit's next message arrives corrupted; it must not go missing from the report."""
    status, results = certify(tmp_path, "hostile.forges_results:CorruptsTheChannel", "--only", "E5")
    assert status == 1
    assert results["E5"]["status"] == "error"
    assert "did not write" in results["E5"]["message"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and a subreaper")
def test_E1_sigterm_kills_the_targets_detached_daemon_too(tmp_path: Path) -> None:
    """SIGTERM during a clause: exit 143, and the helper the target detached is gone."""
    pidfile = tmp_path / "daemon.pid"
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "certify", "hostile.starts_daemon:StartsDaemon",
         "--profile", "thorough", "--only", "E1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        cwd=tmp_path, env=env_with_tests(HOSTILE_PIDFILE=str(pidfile)), start_new_session=True,
    )  # fmt: skip
    pid = 0
    try:
        waited = 0
        while not (pidfile.is_file() and pidfile.read_text()) and waited < 1200:
            assert process.poll() is None, "the run ended before the target started its daemon"
            time.sleep(0.1)  # readiness only: the verdict below does not depend on timing
            waited += 1
        pid = int(pidfile.read_text())
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 143 and "terminated" in err
        assert not _alive(pid), "the target's detached helper outlived a terminated certify"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        if pid and _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
