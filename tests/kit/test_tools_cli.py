"""`polyloop-conformance check-tools`: targets, exit status 0/1/2, text and JSON reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _commands import run_registered

from conformance.toolcheck import add_check_tools_command

CORPUS = Path(__file__).resolve().parent.parent / "data" / "tool-schemas"
TOOLDATA = Path(__file__).resolve().parent / "tooldata"


def run(*argv: str) -> int:
    return run_registered(add_check_tools_command, "check-tools", *argv)


@pytest.mark.one_python
def test_H2_check_tools_on_the_bfcl_corpus_exits_1_with_fixes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    assert run(str(CORPUS / "bfcl-functions.json"), "--examples", "0", "--json", str(out)) == 1
    text = capsys.readouterr().out
    assert "FAIL calculate_triangle_area #0" in text
    assert (
        "  H2 parameters['type']: `dict` is not a JSON Schema type; did you mean `object`?" in text
    )
    assert "1198  H2 `dict` is not a JSON Schema type -> did you mean `object`?" in text
    assert text.rstrip().endswith("1167 tools: 0 passed, 1167 failed")
    report = json.loads(out.read_text())
    assert report["passed"] is False and len(report["tools"]) == 1167
    assert report["clauses"]["H2"] == {"pass": 0, "fail": 1167, "skipped": 0}


@pytest.mark.one_python
def test_check_tools_on_the_mcp_corpus_fails_only_the_shared_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Two cloudflare servers in the corpus share two names (R2); every schema passes.
    assert run(str(CORPUS / "mcp-servers.json"), "--examples", "0", "--quiet") == 1
    captured = capsys.readouterr()
    assert captured.out.rstrip().endswith("83 tools: 79 passed, 4 failed")
    assert "H2" not in captured.out.split("clause  pass")[0]
    assert captured.err == ""


def test_check_tools_imports_module_attr_and_runs_handlers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(TOOLDATA))
    code = run("sample_tools:registry", "--examples", "10", "--seed", "1", "--deadline", "0.5")
    text = capsys.readouterr().out
    assert code == 1
    assert "FAIL count_words" in text
    assert "H4 handler: the handler returned int (2), not str" in text
    # lookup passes; it is listed because it raised (KeyError, an allowed observation)
    assert "pass lookup\n  H4 handler raised on 10 of 10 valid calls (KeyError ×10); " in text
    assert 'smallest: {"key": ""} -> KeyError: \'\'' in text


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:tools", "cannot import 'no_such_module_xyz'"),
        ("sample_tools:missing", "'sample_tools' has no attribute 'missing'"),
        ("sample_tools", "expected module:attr"),
        ("missing-file.json", "cannot read missing-file.json"),
        ("sample_tools:not_tools", "cannot check a int"),
    ],
)
def test_check_tools_usage_errors_exit_2_with_one_line(
    target: str, message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(TOOLDATA))
    assert run(target) == 2
    err = capsys.readouterr().err
    assert err.startswith("polyloop-conformance: error: ")
    assert message in err and err.count("\n") == 1


def test_check_tools_through_the_console_entry_point(tmp_path: Path) -> None:
    """The same command as a user runs it: `python -m conformance check-tools FILE`."""
    schema_file = tmp_path / "tools.json"
    schema_file.write_text(
        json.dumps(
            {
                "tools": [
                    {
                        "name": "get",
                        "description": "d",
                        "inputSchema": {"type": "object", "properties": {"id": {"type": "strng"}}},
                    }
                ]
            }
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "check-tools", str(schema_file), "--examples", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    assert (
        "FAIL get\n  H2 parameters['properties']['id']['type']: "
        "`strng` is not a JSON Schema type; did you mean `string`?\n"
    ) in result.stdout


def test_H4_check_tools_fail_on_raise_fails_a_handler_raising_on_valid_calls(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`lookup` raises KeyError on every key but two: allowed by default (the test above),
    an H4 failure with --fail-on-raise, on the shrunk arguments."""
    monkeypatch.syspath_prepend(str(TOOLDATA))
    out = tmp_path / "report.json"
    argv = ("sample_tools:registry", "--only", "H4", "--examples", "10", "--seed", "1", "-q")
    assert run(*argv, "--fail-on-raise", "--json", str(out)) == 1
    text = capsys.readouterr().out
    assert "FAIL lookup\n  H4 handler: the handler raised KeyError: '' on arguments its schema" in (
        text
    )
    lookup = json.loads(out.read_text())["tools"][0]
    assert lookup["statuses"] == {"H4": "fail"}
    assert [(f["code"], f["example"]) for f in lookup["findings"]] == [
        ("handler-raised", {"key": ""})
    ]
    assert run(*argv, "--json", str(out)) == 1  # count_words still fails; lookup passes
    assert json.loads(out.read_text())["tools"][0]["statuses"] == {"H4": "pass"}


def test_check_tools_help_says_the_real_handlers_are_called(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        run("--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "H4 (and H6 with --replay) call each tool's real handler on generated arguments" in (
        text
    )
    assert "stub handlers" in text
    flag = "--fail-on-raise a handler raising an Exception on valid generated arguments fails H4"
    assert flag in text
