"""check-tools' false verdicts of issue 22 item 4, and its H2 message quoting (issue 24 item 7).

- H2 judged `pattern` by Python's `re`: five valid ECMA-262 patterns failed. Now ECMA-262
  syntax (`conformance.tools.ecma_regex`), measured on the JSON-Schema-Test-Suite's
  `format/ecmascript-regex.json` cases and the patterns of its `ecmascript-regex.json`.
- Blank and duplicate tool names passed although `ToolSpec` (S3) and `ToolRegistry` (R2)
  refuse them.
- `multipleOf` 0.5 / 1e308 on integers crashed inside jsonschema (OverflowError), and
  5e-324 on [1, 2] was called unsatisfiable.
- With `--examples 0` a tool that timed out was filed under H4, which never ran.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from conformance._core.ground_truth import full_validator
from conformance.cli.supervise import _gave_up
from conformance.toolcheck import ToolDraft, check_registry, check_tool, load_tool_file
from conformance.tools.ecma_regex import judge
from conformance.tools.report import tools_report_schema
from conformance.tools.satisfiable import satisfiability
from polyloop import ToolSpec

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"
ISSUE_PATTERNS = ["(?<word>[a-z]+)", r"\p{L}", r"\p{Lu}", "(?<=a+)b", r"\cJ"]


def with_pattern(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}


def h2(pattern: str) -> tuple[str, list[str]]:
    report = check_tool({"name": "t", "parameters": with_pattern(pattern)}, examples=0)
    return report.statuses["H2"], [f.code for f in report.findings_for("H2")]


def suite_format_cases() -> list[tuple[str, bool]]:
    cases: dict[tuple[str, bool], None] = {}
    for draft in ("draft2020-12", "draft7"):
        path = SUITE / draft / "optional" / "format" / "ecmascript-regex.json"
        for group in json.loads(path.read_text(encoding="utf-8")):
            for test in group["tests"]:
                cases[(test["data"], test["valid"])] = None
    return list(cases)


def suite_patterns() -> list[str]:
    found: set[str] = set()
    for draft in ("draft2020-12", "draft7"):
        path = SUITE / draft / "optional" / "ecmascript-regex.json"
        stack: list[Any] = [json.loads(path.read_text(encoding="utf-8"))]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("pattern"), str):
                    found.add(node["pattern"])
                if isinstance(node.get("patternProperties"), dict):
                    found.update(node["patternProperties"])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return sorted(found)


@pytest.mark.parametrize("pattern", ISSUE_PATTERNS)
def test_H2_valid_ecma_262_patterns_pass(pattern: str) -> None:
    assert h2(pattern) == ("pass", [])


@pytest.mark.parametrize(("pattern", "valid"), suite_format_cases())
def test_H2_judges_the_suites_ecmascript_regex_format_cases(pattern: str, valid: bool) -> None:
    assert h2(pattern) == (("pass", []) if valid else ("fail", ["not-ecma-regex"]))


def test_H2_passes_every_pattern_of_the_suites_ecmascript_regex_tests() -> None:
    patterns = suite_patterns()
    assert len(patterns) >= 15
    assert {p: h2(p) for p in patterns} == {p: ("pass", []) for p in patterns}


def test_H2_python_only_syntax_names_the_ecma_spelling() -> None:
    report = check_tool({"name": "t", "parameters": with_pattern("(?P<n>x)")}, examples=0)
    (finding,) = report.findings_for("H2")
    assert finding.path == "parameters['properties']['s']['pattern']"
    assert finding.message == '"(?P<n>x)": Python\'s named group `(?P<name>…)`'
    assert finding.fix == "ECMA-262 writes `(?<name>…)`"


def test_H2_pattern_property_names_are_judged_as_ecma_262_too() -> None:
    schema = {"type": "object", "patternProperties": {r"^\p{Lu}": {}, "(?i)x": {}}}
    report = check_tool({"name": "t", "parameters": schema}, examples=0)
    assert [f.message.split(":")[0] for f in report.findings_for("H2")] == ['"(?i)x"']


def test_H2_a_pattern_the_kit_cannot_judge_is_a_note_never_a_failure() -> None:
    schema = with_pattern(r"\p{NoSuchProperty}")
    report = check_tool({"name": "t", "parameters": schema}, examples=0)
    assert report.statuses["H2"] == "pass" and report.passed
    (note,) = report.notes
    assert note.startswith("H2 parameters['properties']['s']['pattern']: ")
    assert "cannot judge" in note and "new RegExp" in note
    assert f"  note {note}" in report.to_text()
    data = check_registry([{"name": "t", "parameters": schema}], examples=0).to_json()
    Draft202012Validator(tools_report_schema()).validate(data)
    assert data["tools"][0]["notes"] == [note]  # type: ignore[index]


@pytest.mark.parametrize(
    ("pattern", "verdict"),
    [(r"\p{L}(", False), ("a{2,1}", False), (r"\p{NoSuch}", None), (r"(a)\1", True)],
)
def test_H2_a_doubtful_construct_excuses_only_errors_about_itself(
    pattern: str, verdict: bool | None
) -> None:
    assert judge(pattern).valid is verdict, judge(pattern)


_COMMON = st.text(alphabet="ab.*+?|()^$", max_size=12).filter(lambda p: "(?" not in p)


@given(_COMMON)
def test_H2_never_fails_a_pattern_that_both_dialects_spell_alike(pattern: str) -> None:
    """On syntax ECMA-262 and Python share, what `re` compiles is never called invalid."""
    try:
        re.compile(pattern)
    except re.error:
        return
    assert judge(pattern).valid is not False, judge(pattern)


@given(st.text(max_size=20))
def test_H2_the_pattern_judgment_never_raises(pattern: str) -> None:
    verdict = judge(pattern)
    assert verdict.valid in (True, False, None)
    assert (verdict.valid is True) == (verdict.message == "")


# --- names (S3, R2) ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", "\u3000"])
def test_H5_blank_tool_name_fails_as_toolspec_refuses_it(name: str) -> None:
    with pytest.raises(ValueError, match="blank"):
        ToolSpec(name=name, description="d", parameters={"type": "object"})
    report = check_tool({"name": name, "parameters": {"type": "object"}}, examples=0)
    (finding,) = report.findings_for("H5")
    assert (finding.code, finding.path) == ("blank-name", "tool['name']")
    assert f"the tool's name {json.dumps(name, ensure_ascii=False)} is blank" in finding.message


@given(st.text(max_size=8))
def test_H5_names_toolspec_accepts_get_no_name_finding(name: str) -> None:
    try:
        ToolSpec(name=name, description="d", parameters={"type": "object"})
    except ValueError:
        accepted = False
    else:
        accepted = True
    report = check_tool({"name": name, "parameters": {"type": "object"}}, examples=0)
    assert (report.statuses["H5"] == "pass") == accepted


def test_H5_duplicate_names_in_one_file_fail_each_entry(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    entry = {"name": "search", "parameters": {"type": "object"}}
    path.write_text(json.dumps([entry, entry, {**entry, "name": "other"}]))
    report = check_registry(load_tool_file(path), examples=0, raise_on_failure=False)
    assert {r.tool: r.statuses["H5"] for r in report.tools} == {
        "search #0": "fail",
        "search #1": "fail",
        "other": "pass",
    }
    finding = report.tool("search #0").findings_for("H5")[0]
    assert finding.code == "duplicate-name"
    assert finding.message.startswith("another tool in this list has the same name")


# --- multipleOf arithmetic ---------------------------------------------------------------------


async def ok(arguments: dict[str, Any]) -> str:
    return "ok"


@pytest.mark.parametrize("divisor", [0.5, 1e308])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_H4_integer_multipleof_float_never_blames_the_tool(divisor: float, seed: int) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": divisor}}}
    draft = ToolDraft(name="t", description="d", parameters=schema, handler=ok)
    report = check_tool(draft, examples=25, seed=seed)
    assert report.passed, report.to_text()
    assert report.statuses["H4"] == "pass"


@given(st.integers(min_value=-(10**400), max_value=10**400), st.sampled_from([0.5, 1e308, 0.1]))
def test_V1_ground_truth_multipleof_answers_for_integers_beyond_float_range(
    value: int, divisor: float
) -> None:
    schema = {"type": "object", "properties": {"n": {"multipleOf": divisor}}}
    verdict = full_validator(schema).is_valid({"n": value})
    try:
        expected = Draft202012Validator(schema).is_valid({"n": value})
    except OverflowError:
        expected = Fraction(value) % Fraction(divisor) == 0
    assert verdict == expected


def test_H3_tiny_multipleof_is_satisfiable_as_jsonschema_says() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 1, "maximum": 2, "multipleOf": 5e-324}},
        "required": ["n"],
    }
    assert Draft202012Validator(schema).is_valid({"n": 1})
    assert satisfiability(schema).satisfiable
    report = check_tool({"name": "t", "parameters": schema}, examples=0)
    assert report.statuses["H3"] == "pass"


def test_H3_a_truly_empty_multipleof_range_is_still_unsatisfiable() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 2, "multipleOf": 5}},
        "required": ["n"],
    }
    assert not satisfiability(schema).satisfiable


# --- a time-out with --examples 0 ---------------------------------------------------------------


def test_H4_time_out_without_generation_is_not_filed_under_h4() -> None:
    every = frozenset({"H1", "H2", "H3", "H4", "H5", "H6"})
    report = _gave_up("t", "gave up after 60s", every, 60.0, generating=False)
    assert report.statuses["H4"] == "skipped" and report.statuses["H3"] == "fail"
    assert [f.clause for f in report.findings] == ["H3"]
    generated = _gave_up("t", "gave up after 60s", every, 60.0, generating=True)
    assert [f.clause for f in generated.findings] == ["H4"]
    only_h2 = _gave_up("t", "gave up after 60s", frozenset({"H2", "H4"}), 60.0, generating=False)
    assert [f.clause for f in only_h2.findings] == ["H2"]


# --- H2 messages in JSON, not Python repr (issue 24 item 7) ------------------------------------


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "object", "required": True}, 'true is not of type "array"'),
        ({"type": "object", "properties": {"a": {"minimum": "1"}}}, '"1" is not of type "number"'),
        ({"type": "object", "properties": {"a": {"enum": None}}}, 'null is not of type "array"'),
    ],
)
def test_H2_messages_quote_json_not_python_repr(schema: dict[str, Any], message: str) -> None:
    report = check_tool({"name": "t", "parameters": schema}, examples=0)
    messages = [f.message for f in report.findings_for("H2")]
    assert message in messages, messages


# --- check_registry in a folder Hypothesis cannot write (issue 24 item 7) ----------------------

DOCS_TEST = """
from conformance.toolcheck import check_registry
from polyloop import ToolRegistry, ToolSpec

async def search(arguments):
    return "ok"

def test_my_tools():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    spec = ToolSpec(name="search", description="Search.", parameters=schema, handler=search)
    check_registry(ToolRegistry([spec]))
"""


def test_H4_check_registry_from_the_docs_passes_where_the_database_is_unusable(
    tmp_path: Path,
) -> None:
    """A read-only folder, simulated for root too: the storage directory lies under a file."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_docs_example.py").write_text(DOCS_TEST)
    (tmp_path / "a-file").write_text("")
    env = {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / "a-file" / "hypothesis")}
    env.pop("HYPOTHESIS_PROFILE", None)
    command = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio", "-W", "error"]
    result = subprocess.run(
        [sys.executable, *command, "test_docs_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout


RAW_DEFINITIONS_TEST = """
import json
from conformance.toolcheck import ToolContract

class TestServerTools(ToolContract):
    tools = json.loads('''[
        {"name": "read", "inputSchema": {"type": "object", "properties": {"p": {}}}},
        {"type": "function", "function": {"name": "find", "parameters": {"type": "object"}}},
        {"name": "ask", "input_schema": {"type": "object", "required": ["q"]}}
    ]''')
    examples = 3
"""


def test_H2_toolcontract_takes_raw_json_definitions_as_the_docs_say(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "test_raw.py").write_text(RAW_DEFINITIONS_TEST)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_raw.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    for name in ("read", "find", "ask"):
        passed = rf"PASSED test_raw.py::TestServerTools::test_H2_\w+\[{name}\]"
        assert re.search(passed, result.stdout), result.stdout[-3000:]
    assert "failed" not in result.stdout
