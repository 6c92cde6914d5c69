"""Where the command line's reports go, and what happens when they cannot go there (issue 22,
item 2; issue 24, items 4 and 7): files before stdout, an output error of its own (exit 3),
every output path checked and its folder made before the run."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _subprocesses import env_with_tests
from hypothesis import given
from hypothesis import strategies as st

from conformance import engine
from conformance._core.report import BUDGET_SPENT, ClauseResult, Report
from conformance.cli import build_parser
from conformance.cli.shared import EXIT_STATUSES, _text_report
from conformance.subjects import shared_order
from polyloop import RegistryBatchExecutor

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _kit(
    tmp_path: Path, *args: str, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env_with_tests(),
        timeout=300,
    )


def _tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


@needs_dev_full
def test_certify_on_a_full_stdout_still_writes_the_json_and_exits_3(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = _kit(
            tmp_path, "certify", "--only", "E5", "--profile", "fast", "--json", "r.json",
            stdout=full.fileno(),
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["results"][0]["id"] == "E5"
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "polyloop-conformance: error: cannot write the report to stdout: No space left on device"
    )
    assert "Traceback" not in done.stderr


@needs_dev_full
def test_check_tools_on_a_full_stdout_still_writes_the_json_and_exits_3(tmp_path: Path) -> None:
    tools = _tools_file(tmp_path)
    with open("/dev/full", "w") as full:
        done = _kit(
            tmp_path, "check-tools", str(tools), "--examples", "0", "--json", "r.json",
            "--junit", "j.xml", stdout=full.fileno(),
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["tools"][0]["tool"] == "echo"
    assert "<testsuites>" in (tmp_path / "j.xml").read_text()
    assert "Traceback" not in done.stderr


def test_junit_and_json_into_missing_folders_are_created(tmp_path: Path) -> None:
    tools = _tools_file(tmp_path)
    done = _kit(
        tmp_path, "check-tools", str(tools), "--examples", "0",
        "--json", "out/a/r.json", "--junit", "out/b/j.xml",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out/a/r.json").is_file()
    assert (tmp_path / "out/b/j.xml").is_file()


def test_an_unwritable_junit_path_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    done = _kit(tmp_path, "certify", "--only", "E5", "--profile", "fast", "--junit", "afile/j.xml")
    assert done.returncode == 2
    assert "certifying" not in done.stderr  # refused before the child ever started
    assert done.stderr.strip().splitlines() == [
        "polyloop-conformance: error: cannot create the folder of --junit 'afile/j.xml': "
        "File exists"
    ]
    assert done.stdout == ""


def test_help_lists_version_and_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    text = build_parser().format_help()
    assert "--version" in text
    for status in ("0 ", "1 ", "2 ", "3 ", "130"):
        assert f"\n  {status}" in text
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("polyloop-conformance ")


def test_E15_a_selection_where_only_the_type_check_ran_is_not_certified(tmp_path: Path) -> None:
    """Issue 22, item 6: an executor that always raises skips E5 and passes E15 (a type
    check); before, that printed PASSED and exited 0."""
    done = _kit(
        tmp_path, "certify", "hostile.always_raises:AlwaysRaises", "--only", "E5,E15",
        "--profile", "fast",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "NOT CERTIFIED: 2 clauses (1 pass, 1 skipped)" in done.stdout
    assert (
        "E5 skipped and the rest (E15) check only the executor's type, so nothing of "
        "substance was checked (--allow-skips accepts this)"
    ) in done.stdout
    allowed = _kit(
        tmp_path, "certify", "hostile.always_raises:AlwaysRaises", "--only", "E5,E15",
        "--profile", "fast", "--allow-skips",
    )  # fmt: skip
    assert allowed.returncode == 0


def test_E5_certify_leaves_no_hypothesis_folder_and_takes_an_examples_override(
    tmp_path: Path,
) -> None:
    """Issue 22, item 6 and 24, item 7: nothing is left in the working directory; issue 24,
    item 3: ``--examples N`` replaces the profile's count."""
    small = _kit(tmp_path, "certify", "--only", "E5", "--profile", "fast", "--examples", "1",
                 "--json", "small.json")  # fmt: skip
    assert small.returncode == 0, small.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["small.json"]
    big = _kit(tmp_path, "certify", "--only", "E5", "--profile", "fast", "--examples", "30",
               "--json", "big.json")  # fmt: skip
    assert big.returncode == 0, big.stderr
    counts = [
        json.loads((tmp_path / name).read_text())["results"][0]["examples"]
        for name in ("small.json", "big.json")
    ]
    assert counts[0] < counts[1]
    assert not (tmp_path / ".hypothesis").exists()


def test_fast_profile_is_deterministic_with_seed_0(tmp_path: Path) -> None:
    """Issue 24, item 3: the pre-commit profile takes seed 0, not a fresh random seed."""
    reports = []
    for name in ("a.json", "b.json"):
        done = _kit(tmp_path, "certify", "--only", "E1", "--profile", "fast", "--json", name)
        assert done.returncode == 0, done.stderr
        reports.append(json.loads((tmp_path / name).read_text()))
    assert reports[0]["seed"] == reports[1]["seed"] == 0
    assert reports[0]["results"][0]["examples"] == reports[1]["results"][0]["examples"]


def test_budget_skips_the_clauses_it_leaves_no_time_for(tmp_path: Path) -> None:
    """Issue 24, item 3: ``--budget`` is a budget, not a hard stop: no clause starts once it is
    spent, and those left are reported (a run that then checked nothing is not certified)."""
    done = _kit(
        tmp_path, "certify", "--only", "E1,E5", "--profile", "fast", "--budget", "0.001",
        "--json", "r.json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [(r["id"], r["status"], r["message"]) for r in results] == [
        ("E1", "skipped", "not run: --budget 0.001s was spent"),
        ("E5", "skipped", "not run: --budget 0.001s was spent"),
    ]
    assert "NOT CERTIFIED" in done.stdout


def _budget_report(*statuses: tuple[str, str, str | None]) -> Report:
    results = tuple(
        ClauseResult(id=i, title="t", level="core", status=s, examples=1, seconds=0.0, message=m)
        for i, s, m in statuses
    )
    return Report(
        kit_version="0", contract_version="1", target="t", level="strict", profile="ci",
        seed=0, python="3", results=results, mode="white-box",
    )  # fmt: skip


def test_37_a_run_the_budget_cut_short_is_not_a_pass_and_names_what_it_left() -> None:
    """Issue 37, item 1: nothing failed, yet clauses were left for time: exit 4, not 0, and the
    last line says how many and which."""
    spent = "not run: --budget 10s was spent"
    report = _budget_report(
        ("E1", "pass", None), ("B1", "skipped", spent), ("B2", "skipped", spent)
    )
    assert report.passed and report.exit_status() == BUDGET_SPENT == 4
    assert report.unjudged() == ("B1", "B2")
    text = report.to_text().splitlines()
    assert text[-2].startswith("NOT JUDGED: 3 clauses")
    assert text[-1] == (
        "2 clauses not judged, --budget was spent: B1, B2 (exit 4: no failure found, not a pass)"
    )


def test_37_the_budget_line_stays_last_after_the_targets_output() -> None:
    spent = "not run: --budget 10s was spent"
    report = _budget_report(("E1", "pass", None), ("B1", "skipped", spent))
    loud = dataclasses.replace(report.results[0], output="LOG LINE\n")
    report = dataclasses.replace(report, results=(loud, report.results[1]))
    quiet = _text_report(report).splitlines()
    assert quiet[-1].startswith("1 clause not judged, --budget was spent: B1")
    assert "LOG LINE" not in "\n".join(quiet) and "during 1 passing clause(s) (E1)" in quiet[-3]
    shown = _text_report(report, show_all=True)
    assert "  | LOG LINE" in shown and shown.splitlines()[-1] == quiet[-1]


def test_37_other_skips_and_failures_keep_their_status() -> None:
    """A skip for another reason is no budget skip, and a failure stays exit 1."""
    spent = "not run: --budget 10s was spent"
    other = _budget_report(("E1", "pass", None), ("E6", "skipped", "black-box: no handler"))
    assert other.exit_status() == 0 and "NOT JUDGED" not in other.to_text()
    failed = _budget_report(("E1", "fail", None), ("B1", "skipped", spent))
    assert failed.exit_status() == 1 and "FAILED" in failed.to_text()


def test_37_the_help_documents_the_budget_exit_status() -> None:
    assert "4    certify: nothing failed, but --budget was spent" in EXIT_STATUSES


@needs_dev_full
def test_a_full_stderr_costs_the_progress_not_the_report(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "conformance", "certify", "--only", "E5", "--profile",
             "fast", "--json", "r.json"],
            stdout=subprocess.PIPE, stderr=full.fileno(), text=True, cwd=tmp_path,
            env=env_with_tests(), timeout=300,
        )  # fmt: skip
    assert done.returncode == 0
    assert "PASSED" in done.stdout
    assert (tmp_path / "r.json").is_file()


# --- issue 37, item 4: a check-tools annotation points at its tool's entry in a JSON file -------


def _entry(name: str, schema_type: str) -> dict[str, object]:
    return {"name": name, "description": "d", "inputSchema": {"type": schema_type}}


def _annotations(out: str) -> dict[str, str]:
    """Tool name -> the ``line=`` of its ``::error`` annotation."""
    found = {}
    for line in out.splitlines():
        match = re.match(r"::error file=[^,]*,line=(\d+),title=H2 fail for tool '([^']*)'", line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def test_check_tools_format_github_points_at_each_tools_entry_in_a_json_file(
    tmp_path: Path,
) -> None:
    tools = [_entry("good", "object"), _entry("bad", "dict"), _entry("worse", "strng")]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"server": "s", "tools": tools}, indent=2) + "\n")
    lines = path.read_text().splitlines()
    # Where each entry's object opens: the line before its "name" (json.dumps, indent 2).
    expected = {
        name: str(lines.index(f'      "name": "{name}",')) for name in ("good", "bad", "worse")
    }
    assert expected["bad"] != "1" and expected["bad"] != expected["worse"]
    done = _kit(tmp_path, "check-tools", "tools.json", "--examples", "0", "-q", "--only", "H2",
                "--format", "github")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert _annotations(done.stdout) == {"bad": expected["bad"], "worse": expected["worse"]}


def test_check_tools_format_github_keeps_line_1_when_the_entry_cannot_be_told(
    tmp_path: Path,
) -> None:
    """A report whose tools are not the file's (here: the file changed after the check) gets
    the file's first line, never another tool's line."""
    from conformance.cli.ci_output import tool_cases
    from conformance.tools.report import ToolCheckReport, ToolReport

    path = tmp_path / "tools.json"
    path.write_text(json.dumps([_entry("other", "object"), _entry("bad", "dict")], indent=2))
    report = ToolCheckReport(
        target=str(path),
        tools=(
            ToolReport(tool="renamed", statuses={"H2": "fail"}),
            ToolReport(tool="bad", statuses={"H2": "fail"}),
        ),
        examples=0,
        deadline=2.0,
        seed=None,
    )
    bad = path.read_text().splitlines().index('    "name": "bad",')  # its "{" is the line before
    cases = tool_cases(report, file=str(path), line=1)
    assert [(case.name, case.line) for case in cases] == [("H2 renamed", 1), ("H2 bad", bad)]
    assert [case.line for case in tool_cases(report, file=str(tmp_path / "gone.json"), line=1)] == [
        1,
        1,
    ]


def _formatted(
    entries: list[dict[str, object]], layout: list[tuple[str, str]], wrapped: bool
) -> tuple[str, list[int]]:
    """A JSON tool file written piece by piece, and the line each entry's object opens on."""
    text, starts = "", []
    prefix = '{"note": "[{]}", "tools":' if wrapped else ""
    text += layout[0][0] + prefix + layout[0][1] + "["
    for i, entry in enumerate(entries):
        before, after = layout[(i + 1) % len(layout)]
        text += before
        starts.append(text.count("\n") + 1)
        text += json.dumps(entry, indent=None if i % 2 else 1) + after
        text += "," if i < len(entries) - 1 else ""
    text += "]" + ("}" if wrapped else "") + layout[-1][1]
    return text, starts


@given(
    names=st.lists(st.text(max_size=5), min_size=1, max_size=6),
    layout=st.lists(
        st.tuples(st.text(" \t\n", max_size=4), st.text(" \t\n", max_size=4)),
        min_size=1,
        max_size=4,
    ),
    wrapped=st.booleans(),
)
def test_json_tool_entries_finds_the_line_of_every_entry(
    names: list[str], layout: list[tuple[str, str]], wrapped: bool
) -> None:
    from conformance.cli.ci_output import json_tool_entries

    entries = [_entry(name, "object") for name in names]
    text, starts = _formatted(entries, layout, wrapped)
    assert json_tool_entries(text) == list(zip(entries, starts, strict=True))


def test_37_a_budget_gives_each_subject_its_share_in_turn() -> None:
    """Issue 37, item 1: with a budget the batch subject's clauses are not all left behind the
    executor clauses it is checked through: the run takes one of each in turn."""
    assert shared_order(("V1", "V2", "E1", "E5", "B1", "B2")) == (
        "V1",
        "B1",
        "V2",
        "B2",
        "E1",
        "E5",
    )
    assert shared_order(("E1", "E5")) == ("E1", "E5")
    assert shared_order(()) == ()


def test_37_a_shared_run_reports_in_contract_order() -> None:
    ran: list[str] = []
    report = engine._certify(
        RegistryBatchExecutor, registry=None, level="strict", profile="fast", seed=0,
        only=["E1", "E5", "B1", "B3"], expected_failures=None, deadline=5.0, progress=None,
        target_name=None, database=None, fail_fast=False,
        started=lambda clause, index, total: ran.append(clause), share=True,
    )  # fmt: skip
    assert ran == ["E1", "B1", "E5", "B3"]
    assert [r.id for r in report.results] == ["E1", "E5", "B1", "B3"] and report.passed
