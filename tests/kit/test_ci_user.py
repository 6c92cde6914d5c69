"""Issue 11, what a CI user relies on: versions in the report, the expected-failures format,
the conventions of ``--only`` and the messages, and CI-native output."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from importlib import metadata
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from zoo.base import ZooExecutor
from zoo.blackbox import black_box_registry
from zoo.broken import NoToolCallExecuted
from zoo.runner import ClaimsCompletion

from conformance import certify
from conformance._core.report import ClauseResult, Counterexample, Report, report_schema
from conformance.cli import load_expected_failures, main
from conformance.engine import SetUpError
from polyloop import Action, ActionOutcome, RegistryExecutor, ToolRegistry, ToolSpec

__all__ = ["ClaimsCompletion"]  # certified by name below


def make_report(*results: ClauseResult) -> Report:
    return Report(
        kit_version="9.9",
        contract_version="1.0",
        target="m:f",
        level="strict",
        profile="ci",
        seed=0,
        python="3.11.7",
        results=results,
    )


def result(clause_id: str, status: str, **extra: object) -> ClauseResult:
    return ClauseResult(
        id=clause_id,
        title=f"title of {clause_id}",
        level="core",
        status=status,
        examples=extra.pop("examples", 3),  # type: ignore[arg-type]
        seconds=0.5,
        **extra,  # type: ignore[arg-type]
    )


FAILED_E4 = result(
    "E4",
    "fail",
    message="the handler's exception was not reported as an error",
    counterexample=Counterexample(
        schema={"type": "object"},
        action={"tool_call": {"name": "t", "arguments": {}}},
        behaviour="raises ValueError",
        expected="status error",
        actual="status ok",
    ),
    reproduce="polyloop-conformance certify m:f --only E4",
)


# --- 5: versions ----------------------------------------------------------------------------


def test_5_report_versions_name_the_libraries_that_generate_the_examples() -> None:
    report = make_report(result("E1", "pass"))
    data = report.to_json()
    jsonschema.validate(data, report_schema())
    for name in ("hypothesis", "hypothesis-jsonschema", "jsonschema"):
        assert data["versions"][name] == metadata.version(name)
    assert data["versions"]["kit"] == "9.9" and data["versions"]["python"] == "3.11.7"
    line = next(x for x in report.to_text().splitlines() if x.startswith("versions"))
    hypothesis_version = metadata.version("hypothesis")
    assert f"hypothesis {hypothesis_version}" in line
    assert f"hypothesis-jsonschema {metadata.version('hypothesis-jsonschema')}" in line
    assert f"jsonschema {metadata.version('jsonschema')}" in line
    assert line.startswith("versions  kit 9.9   contract 1.0   python 3.11.7")


def test_5_the_published_schema_requires_the_versions() -> None:
    data = make_report(result("E1", "pass")).to_json()
    del data["versions"]["hypothesis"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, report_schema())


# --- 10: expected-failures text format -------------------------------------------------------


def test_10_a_reason_may_contain_a_hash(tmp_path: Path) -> None:
    path = tmp_path / "xfail.txt"
    path.write_text(
        "# known failures\n"
        "E12: the cancel path is not wired yet, tracked in #123\n"
        "  # an indented comment\n"
        "E4 - handler errors #2 and #3\n",
        encoding="utf-8",
    )
    assert load_expected_failures(str(path)) == {
        "E12": "the cancel path is not wired yet, tracked in #123",
        "E4": "handler errors #2 and #3",
    }


def test_10_a_reason_that_is_only_a_hash_tag_is_still_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "xfail.txt"
    path.write_text("E12: #123\n", encoding="utf-8")
    assert load_expected_failures(str(path)) == {"E12": "#123"}


# --- 15: --only, did-you-mean, singular and plural --------------------------------------------


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_15_only_accepts_lower_case(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["certify", "--only", "e1", "--profile", "quick", "--json", "-"], capsys)
    assert status == 0
    assert [r["id"] for r in json.loads(out)["results"]] == ["E1"]


@pytest.mark.parametrize("only", ["", ",", " , "])
def test_15_only_rejects_an_empty_list(only: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["certify", "--only", only], capsys)
    assert status == 2
    assert err.startswith("polyloop-conformance: error: --only needs at least one clause ID")


def test_15_did_you_mean_lists_only_what_certify_checks(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["certify", "--only", "E44"], capsys)
    assert status == 2
    assert "unknown clause ID 'E44'; did you mean E4 or E14?" in err
    assert "H4" not in err and "S1" not in err


def test_15_a_clause_another_command_checks_is_named_as_such(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, err = run(["certify", "--only", "h4"], capsys)
    assert status == 2 and "certify does not check H4; certify checks V1," in err
    status, _, err = run(["check-tools", "polyloop:ToolRegistry", "--only", "e4"], capsys)
    assert status == 2
    assert "check-tools does not check E4; check-tools checks H1, H2, H3, H4, H5, H6" in err


def test_15_did_you_mean_for_check_tools(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["check-tools", "polyloop:ToolRegistry", "--only", "H44"], capsys)
    assert status == 2 and "unknown clause ID 'H44'; did you mean H4?" in err
    assert "E4" not in err


def test_15_one_clause_is_singular() -> None:
    text = make_report(result("E1", "pass")).to_text()
    assert text.splitlines()[-1] == "PASSED: 1 clause (1 pass)"
    assert (
        make_report(result("E1", "pass"), result("E2", "pass"))
        .to_text()
        .endswith("PASSED: 2 clauses (2 pass)")
    )


# --- 9: a wrong set-up is one message, exit 2 ------------------------------------------------


def always_raises(registry: ToolRegistry) -> RegistryExecutor:
    raise RuntimeError("no database configured")


def test_9_a_factory_that_always_raises_is_one_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(
        ["certify", f"{__name__}:always_raises", "--only", "E1,E4,V1", "--profile", "quick"],
        capsys,
    )
    assert status == 2 and out == ""
    [line] = [x for x in err.splitlines() if x.startswith("polyloop-conformance: error:")]
    assert line.startswith(
        "polyloop-conformance: error: the factory raised RuntimeError: no database configured,"
    ), err
    assert "in every clause (V1, E1, E4): nothing was checked" in line


def test_9_certify_raises_set_up_error_for_such_a_factory() -> None:
    with pytest.raises(SetUpError, match="nothing was checked"):
        certify(always_raises, only=["E1"], profile="quick")


def test_9_a_kit_defect_is_one_set_up_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import engine

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("internal")

    monkeypatch.setattr(engine, "_search_clause", broken)
    with pytest.raises(SetUpError, match=r"the kit failed while checking E1 \(a bug in the kit"):
        certify(RegistryExecutor, only=["E1", "E2"], profile="quick")
    # A random seed is lost with the report that is never printed: the line names it.
    with pytest.raises(SetUpError) as raised:
        certify(RegistryExecutor, only=["E1"], profile="quick", seed=1234)
    assert str(raised.value).endswith("--profile quick --seed 1234 --only E1"), raised.value


# --- 11: a black-box run that checked nothing does not pass ----------------------------------

BLACK_BOX_REGISTRY = black_box_registry()
BLACK_BOX_EXECUTOR = RegistryExecutor(BLACK_BOX_REGISTRY)


def black_box(only: str, *extra: str) -> list[str]:
    return [
        "certify",
        f"{__name__}:BLACK_BOX_EXECUTOR",
        "--registry",
        f"{__name__}:BLACK_BOX_REGISTRY",
        "--only",
        only,
        "--profile",
        "quick",
        *extra,
    ]


def test_11_a_black_box_run_that_skipped_everything_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(black_box("E4,E10"), capsys)
    assert status == 1, out
    assert "PASSED" not in out
    assert out.splitlines()[-2:] == [
        "NOT CERTIFIED: 2 clauses (2 skipped)",
        "every selected clause was skipped (E4, E10), so nothing was checked "
        "(--allow-skips accepts this)",
    ]


def test_11_allow_skips_accepts_it(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(black_box("E4,E10", "--allow-skips", "--json", "-"), capsys)
    data = json.loads(out)
    assert status == 0 and data["passed"] is True
    assert data["unchecked"].startswith("every selected clause was skipped")
    jsonschema.validate(data, report_schema())


def test_11_black_box_skipping_E6_is_not_certified() -> None:
    report = make_report(
        result("E1", "pass"), result("E6", "skipped", message="no call could be caught suspended")
    )
    black = dataclasses.replace(report, mode="black-box")
    assert report.unchecked() is None and report.exit_status() == 0  # white-box: fine
    assert black.unchecked() == (
        "E6 was skipped, though black-box mode is meant to check it "
        "(no call could be caught suspended)"
    )
    assert black.exit_status() == 1 and black.exit_status(allow_skips=True) == 0
    assert "NOT CERTIFIED: 2 clauses (1 pass, 1 skipped)" in black.to_text()


def test_11_a_run_that_checked_something_still_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(black_box("E1,E4"), capsys)
    assert status == 0 and "PASSED: 2 clauses (1 pass, 1 skipped)" in out, out


def plain_registry() -> ToolRegistry:
    async def echo(text: str) -> str:
        return text

    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    return ToolRegistry(
        [ToolSpec(name="echo", description="Echo.", parameters=schema, handler=echo)]
    )


def test_11_V7_E14_without_a_scenario_are_skipped_plainly() -> None:
    registry = plain_registry()
    report = certify(RegistryExecutor(registry), registry=registry, only=["V7", "E14", "V1"])
    assert {r.id: r.status for r in report.results} == {
        "V1": "pass",
        "V7": "skipped",
        "E14": "skipped",
    }
    assert report.result("E14").message == (
        "no scenario could be generated from the registry's schemas"
    )


def test_11_deciding_there_is_no_scenario_takes_a_bounded_number_of_draws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Hypothesis itself gives up only after hundreds of rejected draws (seconds); the kit stops
    # after its own small budget. Counted, not timed.
    from hypothesis import reject
    from hypothesis import strategies as st

    from conformance.executor.properties import PROPERTIES

    draws = [0]

    @st.composite
    def never(draw: st.DrawFn) -> int:
        draws[0] += 1
        value = draw(st.integers())
        reject()  # as `beyond_subset_calls` does when a schema allows no such call
        return value

    monkeypatch.setitem(
        PROPERTIES, "V7", dataclasses.replace(PROPERTIES["V7"], scenarios=lambda _source: never())
    )
    registry = plain_registry()
    report = certify(RegistryExecutor(registry), registry=registry, only=["V7"])
    assert report.result("V7").status == "skipped"
    assert draws[0] <= 200, draws[0]


# --- 16: CI-native output --------------------------------------------------------------------


def test_16_certify_junit_has_one_testcase_per_clause_with_the_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    argv = ["certify", f"{__name__}:ClaimsCompletion", "--only", "E1,E7", "--profile", "quick"]
    status, _, _ = run([*argv, "--junit", str(junit)], capsys)
    assert status == 1
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    cases = {case.get("name", "").split()[0]: case for case in suite.iter("testcase")}
    assert set(cases) == {"E1", "E7"}
    # Issue 24, item 4: a class name of dotted words, no spaces or colons.
    assert {case.get("classname") for case in cases.values()} == {
        "polyloop_conformance.certify.test_ci_user.ClaimsCompletion"
    }
    assert cases["E1"].find("failure") is None
    failure = cases["E7"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("E7 fail: No completion claim")
    assert "env_reported_completion is True" in failure.get("message", "")
    text = failure.text or ""
    assert "action     {" in text and "reproduce  polyloop-conformance certify" in text


def test_16_certify_format_github_is_one_error_per_failed_clause(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["certify", f"{__name__}:ClaimsCompletion", "--only", "E1,E7", "--profile", "quick"]
    status, out, _ = run([*argv, "--format", "github"], capsys)
    assert status == 1
    errors = [line for line in out.splitlines() if line.startswith("::")]
    assert len(errors) == 1, errors
    # Issue 24, item 4: the annotation points at the factory and says its verdict once.
    source = Path(inspect.getsourcefile(ClaimsCompletion) or "")
    match = re.match(r"::error file=([^,]*),line=(\d+),title=([^:]*)::(.*)", errors[0])
    assert match is not None, errors[0]
    assert Path(match[1]).resolve() == source.resolve()
    assert int(match[2]) == inspect.getsourcelines(ClaimsCompletion)[1]
    assert match[3] == "E7 fail%3A No completion claim and no truncation on this path"
    assert not match[4].startswith("E7 fail")
    assert "%0Aaction     {" in errors[0]
    assert out.index("polyloop conformance report") < out.index("::error")


def test_16_github_escapes_newlines_percent_and_title_separators() -> None:
    from conformance.cli.ci_output import Case, github_annotations

    case = Case(suite="s", name="n", status="fail", headline="E4 fail: 100%, a:b", detail="x\ny")
    assert github_annotations([case]) == "::error title=E4 fail::E4 fail: 100%25, a:b%0Ax%0Ay"
    title_case = Case(suite="s", name="n", status="error", headline="A,B: c", detail="")
    assert github_annotations([title_case]) == "::error title=A%2CB::A,B: c"


def test_16_check_tools_junit_and_github_per_tool_and_clause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {"name": "good", "parameters": {"type": "object"}},
                {"name": "bad", "parameters": {"type": "dict"}},
            ]
        ),
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    argv = ["check-tools", str(tools), "--examples", "0", "-q", "--only", "h1,h2"]
    status, out, _ = run([*argv, "--junit", str(junit), "--format", "github"], capsys)
    assert status == 1
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith("::error file=")
    assert ",line=1,title=H2 fail for tool 'bad'::" in errors[0] and str(tools) in errors[0]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    names = sorted(case.get("name", "") for case in suite.iter("testcase"))
    assert len(names) == 4 and "H2 bad" in names and "H1 good" in names, names
    assert suite.get("failures") == "1"


# --- 13: --database for certify ---------------------------------------------------------------


class RareNoToolCallExecuted(NoToolCallExecuted):
    """Breaks E1 only for plain code of 4 characters or more (none of the call-like
    punctuation of the kit's hand-picked E1 actions, which run first and are never saved): a
    generated search finds it after a few examples, a replay from the database at once."""

    def no_tool_call_outcome(self, action: Action) -> ActionOutcome:
        code = action.code or ""
        if len(code) >= 4 and not any(mark in code for mark in "({<:="):
            return super().no_tool_call_outcome(action)
        return ZooExecutor.no_tool_call_outcome(self, action)


def test_13_with_a_database_runs_are_unseeded_and_replay_counterexamples_first(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "db")
    runs = [
        certify(RareNoToolCallExecuted, only=["E1"], profile="ci", database=db) for _ in range(2)
    ]
    assert runs[0].seed != runs[1].seed  # a fresh seed per run (1 in 2**32 to collide)
    assert [r.result("E1").status for r in runs] == ["fail", "fail"]
    assert any(Path(db).rglob("*")), "the counterexample was not saved"
    # The second run found it first thing after the kit's hand-picked E1 actions (which run
    # before anything else): its counterexample is the saved, minimal one.
    assert runs[1].result("E1").examples <= runs[0].result("E1").examples
    assert runs[1].result("E1").counterexample == runs[0].result("E1").counterexample


def test_13_with_a_database_and_a_seed_runs_reproduce_exactly(tmp_path: Path) -> None:
    db = str(tmp_path / "db")
    plain = certify(RareNoToolCallExecuted, only=["E1"], profile="ci", seed=5)
    assert plain.result("E1").examples > 1  # so a replay from the database would show
    certify(RareNoToolCallExecuted, only=["E1"], profile="ci", database=db)  # fills it
    runs = [
        certify(RareNoToolCallExecuted, only=["E1"], profile="ci", seed=5, database=db)
        for _ in range(2)
    ]
    assert {r.seed for r in runs} == {5}
    assert [r.result("E1").examples for r in runs] == [plain.result("E1").examples] * 2
    assert all(r.result("E1").counterexample == plain.result("E1").counterexample for r in runs)


def test_13_certify_help_says_what_database_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["certify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "replay them first next time" in text and "without --seed each run" in text
    assert "shared between runs and workers" not in text


# --- 17: counterexamples that point at the bug ------------------------------------------------


def test_17_a_dispatch_counterexample_uses_the_plain_schema_when_it_shows_the_bug() -> None:
    from zoo.broken import CatchesValueError

    report = certify(CatchesValueError, only=["E10"], profile="ci")
    example = report.result("E10").counterexample
    assert example is not None, report.to_text()
    assert example.schema == {"type": "object"}, report.to_text()
    assert "raises ValueError" in example.behaviour
    assert '  schema     {"type": "object"}' in report.to_text()


def test_17_the_plain_schema_is_not_used_when_the_bug_needs_the_schema() -> None:
    # E2 is about rejecting an invalid call: with {"type": "object"} no call is invalid, so the
    # plain scenario shows nothing and the counterexample keeps its schema.
    from zoo.broken import RejectionNotSynthetic

    report = certify(RejectionNotSynthetic, only=["E2"], profile="ci")
    example = report.result("E2").counterexample
    assert example is not None, report.to_text()
    assert example.schema != {"type": "object"}, report.to_text()


def test_17_E1_lists_the_tools_instead_of_calling_them_a_schema() -> None:
    report = certify(NoToolCallExecuted, only=["E1"], profile="ci")
    example = report.result("E1").counterexample
    assert example is not None
    assert example.schema is None and example.tools
    text = report.to_text()
    assert "  tools      [" in text and "  schema " not in text
    assert "registered tools" not in text
    jsonschema.validate(report.to_json(), report_schema())


def test_15_a_tool_contract_failure_starts_with_the_clause_and_the_finding() -> None:
    from conformance.toolcheck import check_tool
    from conformance.tools.contract import failure_text

    tool = check_tool({"name": "bad", "parameters": {"type": "dict"}}, examples=0)
    text = failure_text(tool, "H2")
    assert text.startswith(
        "H2 fail for tool 'bad': `dict` is not a JSON Schema type; did you mean `object`?\n"
    ), text
    assert "tool 'bad' failed H2" in text
