"""The command line runs the target in a child process it watches (issue 13.4-13.7, 11.6-11.8).

Each test runs ``python -m conformance certify`` on one hostile target from ``hostile/`` in a
subprocess of its own session, with a bounded timeout, and kills that session afterwards. The
parent must report what the target did and the clause in progress: never exit 0 without a full
report, never mix the target's output into the report, never wait for what the target forked.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from _helpers import AS_FROM_A_TERMINAL
from _subprocesses import env_with_tests

from conformance._core.report import report_schema

HERE = Path(__file__).parent
QUICK = ["--profile", "quick", "--seed", "1"]
LIMIT = 120.0
"""Seconds any one command may take here; a run the watchdog does not stop fails the test."""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")


@contextlib.contextmanager
def _started(argv: list[str], **extra: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", AS_FROM_A_TERMINAL, "conformance", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env_with_tests(**extra),
        start_new_session=True,
    )
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def certify(*argv: str, **extra: str) -> tuple[int, str, str]:
    with _started(["certify", *argv], **extra) as process:
        out, err = process.communicate(timeout=LIMIT)
        return process.returncode, out, err


def _results(out: str) -> dict[str, dict[str, object]]:
    data = json.loads(out)
    jsonschema.validate(data, report_schema())
    return {result["id"]: result for result in data["results"]}


def test_sys_exit_at_import_is_exit_2_naming_it() -> None:
    status, out, err = certify("hostile.exit_at_import:factory", *QUICK, "--only", "E1")
    assert status == 2 and out == ""
    assert "SystemExit: 0" in err and "while importing" in err


def test_os_exit_at_import_is_exit_2_naming_it() -> None:
    status, out, err = certify("hostile.os_exit_at_import:factory", *QUICK, "--only", "E1")
    assert status == 2 and out == ""
    assert "exited with status 0" in err and "while importing" in err


@pytest.mark.parametrize(
    "target, said",
    [
        ("hostile.exit_in_factory:sys_exit_0", "SystemExit: 0"),
        ("hostile.exit_in_factory:sys_exit_3", "SystemExit: 3"),
        ("hostile.exit_in_factory:generator_exit", "GeneratorExit"),
        ("hostile.exit_in_factory:bare_base_exception", "BaseException"),
        ("hostile.os_exit_in_factory:factory", "exited with status 0"),
        ("hostile.os_exit_in_execute:OsExit", "exited with status 0"),
    ],
)
def test_E1_a_target_that_ends_its_process_is_the_clause_error(target: str, said: str) -> None:
    status, out, _ = certify(target, *QUICK, "--only", "E1,E2", "--json", "-")
    assert status == 1
    results = _results(out)
    for clause in ("E1", "E2"):  # a death costs its clause; a fresh child checks the next one
        assert results[clause]["status"] == "error"
        assert said in str(results[clause]["message"])


def test_E1_a_forked_orphan_never_holds_the_kits_stdout(tmp_path: Path) -> None:
    pidfile = tmp_path / "orphan.pid"
    started = time.monotonic()
    status, out, _ = certify(
        "hostile.fork_in_execute:Forks", *QUICK, "--only", "E1", HOSTILE_PIDFILE=str(pidfile)
    )
    assert status == 0 and "PASSED" in out
    assert time.monotonic() - started < 50  # the orphan sleeps 60 s holding the pipes
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    pytest.fail("the target's forked child outlived the run")


def test_E1_json_on_stdout_is_never_mixed_with_the_targets_output() -> None:
    status, out, err = certify("hostile.prints_to_stdout:Prints", *QUICK, "--only", "E1,E2")
    assert status == 0 and "HOSTILE" not in err
    status, out, err = certify(
        "hostile.prints_to_stdout:Prints", *QUICK, "--only", "E1,E2", "--json", "-"
    )
    assert status == 0 and "HOSTILE" not in err
    results = _results(out)
    for clause in ("E1", "E2"):  # captured and kept with the clause that wrote it
        output = str(results[clause]["output"])
        assert "HOSTILE-PRINT" in output and "HOSTILE-LOG" in output
        assert "HOSTILE-WARNING" in output


def test_E1_the_text_report_summarises_the_captured_output_with_show_output() -> None:
    status, out, _ = certify(
        "hostile.prints_to_stdout:Prints", *QUICK, "--only", "E1", "--show-output"
    )
    assert status == 0
    assert "target output during E1:" in out and "  | HOSTILE-PRINT {not json" in out


def test_37_a_passing_clause_output_is_counted_not_printed() -> None:
    """Issue 37, item 4: a passing run's report ends with the verdict and one line about the
    output, not with the target's log."""
    status, out, _ = certify("hostile.prints_to_stdout:Prints", *QUICK, "--only", "E1,E2")
    assert status == 0 and "HOSTILE" not in out
    assert out.rstrip().splitlines()[-1] == (
        "the target printed during 2 passing clause(s) (E1, E2); --show-output shows it, "
        "--json keeps it"
    )


def test_E1_a_target_that_closes_fd_1_cannot_lose_the_report() -> None:
    status, out, _ = certify(
        "hostile.closes_fd1:ClosesStdout", *QUICK, "--only", "E1,E2", "--json", "-"
    )
    assert status == 0
    assert set(_results(out)) == {"E1", "E2"}


@pytest.mark.parametrize(
    "target", ["hostile.holds_gil_regex:Regex", "hostile.patches_monotonic:FreezesClock"]
)
def test_E1_a_deadline_the_target_defeats_is_enforced_by_the_watchdog(target: str) -> None:
    status, out, _ = certify(target, *QUICK, "--only", "E1", "--deadline", "0.5", "--json", "-")
    assert status == 1
    result = _results(out)["E1"]
    assert result["status"] == "error"
    assert "watchdog's clock" in str(result["message"]) and "E1" in str(result["message"])


def test_timeout_bounds_the_whole_run_and_exits_2() -> None:
    status, out, err = certify(
        "hostile.holds_gil_regex:Regex", *QUICK, "--only", "E1,E2", "--timeout", "3"
    )
    assert status == 2
    assert "did not finish within --timeout 3s (stopped in E1)" in err
    assert "E1     error" in out and "E2 skipped: not run: --timeout" in out


def test_json_path_that_cannot_be_written_is_exit_2_before_the_run(tmp_path: Path) -> None:
    # A missing folder is made (issue 24, item 4); a folder that cannot be is refused.
    (tmp_path / "plain-file").write_text("")
    path = tmp_path / "plain-file" / "report.json"
    status, out, err = certify(*QUICK, "--only", "E1", "--json", str(path))
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        f"polyloop-conformance: error: cannot create the folder of --json {str(path)!r}: "
        "File exists"
    ]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize(
    "signum, status, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_exits_130_says_interrupted_and_reports_nothing(
    signum: int, status: int, said: str
) -> None:
    with _started(["certify", "--profile", "thorough", "--only", "V7"]) as process:
        assert process.stderr is not None
        line = ""
        deadline = time.monotonic() + LIMIT
        while "checking" not in line and time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, "the run ended before checking V7"
        children = _children(process.pid)
        time.sleep(0.5)
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
        assert process.returncode == status
        assert said in err and "PASSED" not in out and out == ""
        for child in children:  # the child's whole group was killed with it
            with pytest.raises(ProcessLookupError):
                os.kill(child, 0)


def check_tools(*argv: str) -> tuple[int, str, str]:
    with _started(["check-tools", *argv]) as process:
        out, err = process.communicate(timeout=LIMIT)
        return process.returncode, out, err


def test_H4_a_tool_whose_checks_hang_gives_up_and_the_run_goes_on() -> None:
    started = time.monotonic()
    status, out, err = check_tools(
        str(HERE / "hostile" / "redos_tools.json"),
        "--tool-timeout",
        "6",
        "--seed",
        "0",
        "--json",
        "-",
    )
    assert time.monotonic() - started < 60
    assert status == 1
    tools = {tool["tool"]: tool for tool in json.loads(out)["tools"]}
    assert tools["redos"]["statuses"]["H4"] == "fail"
    assert "gave up after 6s" in tools["redos"]["findings"][0]["message"]
    assert tools["fine"]["passed"] is True and tools["fine"]["examples"] > 0
    assert "[2/2] fine" in err  # the next tool ran, in a fresh child


def test_a_tools_factory_that_calls_sys_exit_is_exit_2() -> None:
    status, out, err = check_tools("hostile.tools_factory_exits:make_tools")
    assert status == 2 and out == ""
    assert "SystemExit: 0" in err and "while loading the tools" in err


def test_a_json_write_that_fails_at_the_end_still_prints_the_text_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from conformance import cli

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli.Path, "write_text", refuse)  # the parent's write, after the run
    status = cli.main(["certify", *QUICK, "--only", "E1", "--json", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert status == 3  # an output error (issue 22, item 2), not a usage error
    assert "PASSED: 1 clauses" in out or "PASSED: 1 clause" in out
    assert "cannot write" in err and "Permission denied" in err
