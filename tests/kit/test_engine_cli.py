"""``polyloop-conformance certify``: exit statuses 0/1/2, progress, JSON, expected failures."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from _subprocesses import env_with_tests, run_python

from conformance._core.report import report_schema
from conformance.cli import main

HERE = Path(__file__).parent
QUICK = ["--profile", "quick", "--seed", "1"]
CLAIMS = "zoo.runner:ClaimsCompletion"
"""Breaks E7 only (every outcome claims completion), named as a user names a target."""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_passing_run_exits_0_with_progress_on_stderr_and_the_report_on_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(["certify", *QUICK, "--only", "E1,V2"], capsys)
    assert status == 0
    lines = err.strip().splitlines()
    assert lines[0].startswith("certifying polyloop:RegistryExecutor (white-box)")
    # Issue 11.7: each clause is announced before it runs, then its result follows.
    assert lines[1] == "[ 1/2] V2   ... checking"
    assert re.fullmatch(r"\[ 1/2\] V2   \.\.\. pass \(\d+ examples, \d+\.\ds\)", lines[2])
    assert lines[3] == "[ 2/2] E1   ... checking"
    assert re.fullmatch(r"\[ 2/2\] E1   \.\.\. pass \(\d+ examples, \d+\.\ds\)", lines[4])
    assert "polyloop conformance report" in out and "PASSED" in out


def test_failing_target_exits_1_and_writes_a_valid_json_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "report.json"
    status, out, _ = run(
        ["certify", CLAIMS, *QUICK, "--only", "E7,E5", "--json", str(path)],
        capsys,
    )
    assert status == 1
    data = json.loads(path.read_text())
    jsonschema.validate(data, report_schema())
    assert {r["id"]: r["status"] for r in data["results"]} == {"E5": "pass", "E7": "fail"}
    failed = next(r for r in data["results"] if r["id"] == "E7")
    assert failed["reproduce"].startswith(
        f"polyloop-conformance certify {CLAIMS} --level strict --profile quick --seed 1 --only E7"
    )
    assert failed["counterexample"]["expected"] and "E7 fail" in out


def test_json_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["certify", *QUICK, "--only", "E1", "--json", "-"], capsys)
    assert status == 0
    jsonschema.validate(json.loads(out), report_schema())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["certify", "no_such_module_xyz:factory"], "cannot import 'no_such_module_xyz'"),
        (["certify", "polyloop:NoSuchFactory"], "has no attribute 'NoSuchFactory'"),
        (["certify", "polyloop.tools"], "is not module:attr"),
        (["certify", "polyloop:__version__"], "is a str"),
        (["certify", "--only", "E1,E99"], "unknown clause ID 'E99'"),
        (["certify", "--only", "S1"], "certify does not check"),
        (["certify", "--level", "core", "--only", "E11"], "not checked at level core"),
        (["certify", "--profile", "fastest"], "invalid choice"),
        (["certify", "--deadline", "0"], "more than 0"),
        (["certify", "--registry", "polyloop:ToolRegistry"], "--registry needs an executor"),
    ],
)
def test_usage_and_import_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(argv, capsys)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("polyloop-conformance: error: ") and message in err


def test_an_expected_failure_that_now_passes_fails_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stale = tmp_path / "expected.txt"
    stale.write_text("# clauses we know fail\nE1: we thought the sentence was missing\n")
    status, out, _ = run(
        ["certify", *QUICK, "--only", "E1", "--expected-failures", str(stale)], capsys
    )
    assert status == 1
    assert "remove E1 from the expected-failures list" in out


def test_expected_failures_in_json_turn_a_failure_into_xfail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    listed = tmp_path / "expected.json"
    listed.write_text(
        json.dumps(
            {
                "expected_failures": [
                    {"id": "E7", "reason": "completion is claimed until issue 12 is fixed"}
                ]
            }
        )
    )
    status, out, _ = run(
        [
            "certify",
            CLAIMS,
            *QUICK,
            "--only",
            "E7",
            "--expected-failures",
            str(listed),
        ],
        capsys,
    )
    assert status == 0
    assert "E7 xfail" in out and "issue 12" in out


@pytest.mark.parametrize(
    "content, message",
    [
        ("E4\n", "has no reason"),
        ('{"E4": ""}', "needs a clause ID and a reason"),
        ("E77: unknown clause\n", "unknown contract clause 'E77'"),
        ('["E4"]', "expected a JSON object"),
    ],
)
def test_a_bad_expected_failures_file_exits_2(
    content: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "expected"
    path.write_text(content)
    status, _, err = run(
        ["certify", *QUICK, "--only", "E1", "--expected-failures", str(path)], capsys
    )
    assert status == 2 and message in err


def test_missing_expected_failures_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["certify", "--expected-failures", "/nonexistent/list"], capsys)
    assert status == 2 and "cannot read expected failures" in err


def test_python_dash_m_and_the_other_subcommands_are_wired(tmp_path: Path) -> None:
    argv = ["-m", "conformance", "certify", CLAIMS, *QUICK, "--only", "E7"]
    done = run_python(argv, cwd=tmp_path, env=env_with_tests(), timeout=120)
    assert done.returncode == 1, done.stderr
    assert "[ 1/1] E7   ... fail" in done.stderr
    helped = run_python(["-m", "conformance", "--help"], cwd=tmp_path, env=os.environ, timeout=60)
    assert helped.returncode == 0
    for command in ("certify", "check-tools", "catalog"):
        assert command in helped.stdout
