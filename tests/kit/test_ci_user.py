"""Issue 11, what a CI user relies on: versions in the report, the expected-failures format,
the conventions of ``--only`` and the messages, and CI-native output."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest

from conformance import certify
from conformance.cli import load_expected_failures, main
from conformance.engine import SetUpError
from conformance.report import ClauseResult, Counterexample, Report, report_schema
from polyloop import RegistryExecutor, ToolRegistry


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
