"""The engine's entry point: `certify` on the reference, unusual and misbehaving executors."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from zoo.base import ZooExecutor
from zoo.runner import (
    REJECTS_EVERYTHING,
    BlocksTheLoop,
    HangsForever,
    LeaksTraceback,
    Misbehaves,
    NotAsync,
    SwallowsInterrupts,
    factory_that_raises,
)
from zoo.unusual import UNUSUAL

from conformance import certify
from conformance._core.report import Report, report_schema
from conformance.engine import CERTIFIED_CLAUSES, SetUpError, select_clauses
from conformance.executor.properties import black_box_clauses, validation
from polyloop import RegistryExecutor, ReplayPolicy, ToolRegistry, ToolSpec

STRICT = tuple(CERTIFIED_CLAUSES)
BLACK_BOX = frozenset(black_box_clauses())
UNSUSPENDED = frozenset({"E6"})
"""What a black-box run over handlers that never suspend cannot check: E6 needs a call still
running when the kit cancels it (`tests/zoo/blackbox.py` serves sleeping handlers for that)."""


def assert_valid_report(report: Report) -> None:
    jsonschema.validate(report.to_json(), report_schema())


def statuses(report: Report) -> dict[str, str]:
    return {result.id: result.status for result in report.results}


# --- the reference and other correct executors pass ------------------------------------------


@pytest.mark.every_python  # the reference certified on each interpreter
def test_reference_executor_passes_strict_white_box_on_the_ci_profile() -> None:
    # How long this takes is measured by `polyloop-conformance certify`, not asserted here:
    # the machines are shared and noisy.
    report = certify(RegistryExecutor, level="strict", profile="ci")
    assert statuses(report) == dict.fromkeys(STRICT, "pass"), report.to_text()
    assert report.passed and report.exit_status() == 0
    assert report.mode == "white-box" and report.seed == 0 and report.profile == "ci"
    # A V/E clause generates three fifths of the profile's 50 examples, its traps besides.
    assert all(result.examples >= 30 for result in report.results), report.to_text()
    assert_valid_report(report)


def test_reference_executor_passes_the_opt_in_hardened_level() -> None:
    """Issue 18: polyloop's own executor survives the hostile-object traps that certification
    at core/strict leaves out (lying keys, hidden __name__, a __class__ claiming str, a
    __str__ raising SystemExit, non-JSON leaves)."""
    report = certify(RegistryExecutor, level="hardened", profile="ci")
    assert statuses(report) == dict.fromkeys(STRICT, "pass"), report.to_text()
    assert report.level == "hardened"
    assert_valid_report(report)


@pytest.mark.parametrize("executor", UNUSUAL, ids=lambda cls: cls.__name__)
def test_unusual_but_correct_executors_pass(executor: Any) -> None:
    report = certify(executor, level="strict", profile="quick", seed=11)
    assert report.passed, report.to_text()


async def _read(arguments: dict[str, Any]) -> str:
    return f"read {arguments.get('path', '?')}"


async def _search(arguments: dict[str, Any]) -> str:
    if "query" in arguments and not isinstance(arguments["query"], str):
        raise ValueError("query must be text")
    return "3 results"


def _served_registry() -> ToolRegistry:
    d7 = "http://json-schema.org/draft-07/schema#"
    return ToolRegistry(
        specs=[
            ToolSpec(
                name="read_file",
                description="Read a file.",
                handler=_read,
                replay_policy=ReplayPolicy.SAFE,
                parameters={
                    "$schema": d7,
                    "type": "object",
                    "required": ["path"],
                    "additionalProperties": False,
                    "properties": {
                        "path": {"type": "string"},
                        "encoding": {"type": "string", "enum": ["utf-8", "latin-1"]},
                    },
                },
            ),
            ToolSpec(
                name="search",
                description="Search.",
                handler=_search,
                parameters={
                    "type": "object",
                    "properties": {
                        "query": {"type": "string"},
                        "limit": {"type": "integer", "minimum": 1},
                    },
                    "required": ["query"],
                },
            ),
        ]
    )


def test_reference_executor_passes_black_box() -> None:
    registry = _served_registry()
    report = certify(RegistryExecutor(registry), registry=registry, profile="quick", seed=5)
    assert report.mode == "black-box"
    assert report.passed, report.to_text()
    checked = {r.id for r in report.results if r.status == "pass"}
    skipped = {r.id for r in report.results if r.status == "skipped"}
    assert checked == BLACK_BOX - UNSUSPENDED
    assert skipped == set(STRICT) - checked
    assert "no call was still running" in (report.result("E6").message or "")
    assert all(r.message for r in report.results if r.status == "skipped")
    assert_valid_report(report)


def test_reference_executor_passes_black_box_over_the_real_mcp_schemas() -> None:
    corpus = Path(__file__).parents[1] / "data" / "tool-schemas" / "mcp-servers.json"
    tools = {tool["name"]: tool for tool in json.loads(corpus.read_text())}
    registry = ToolRegistry(
        specs=[
            ToolSpec(
                name=name,
                description=tool["description"] or "",
                handler=_search,
                parameters=tool["inputSchema"],
            )
            for name, tool in tools.items()
        ]
    )
    report = certify(RegistryExecutor(registry), registry=registry, profile="quick", seed=2)
    assert report.passed, report.to_text()
    assert {r.id for r in report.results if r.status == "pass"} == BLACK_BOX - UNSUSPENDED


def test_black_box_catches_an_executor_that_rejects_valid_calls() -> None:
    registry = _served_registry()
    report = certify(
        REJECTS_EVERYTHING, registry=registry, profile="quick", seed=1, only=["V1", "E2"]
    )
    assert statuses(report) == {"V1": "fail", "E2": "pass"}
    assert_valid_report(report)


# --- levels, selection, expected failures ----------------------------------------------------


def test_every_certified_clause_has_one_property_in_contract_order() -> None:
    import conformance
    from conformance.executor.properties import PROPERTIES

    assert tuple(PROPERTIES) == STRICT
    assert tuple(f"V{n}" for n in range(1, 9)) + tuple(f"E{n}" for n in range(1, 16)) == STRICT
    assert conformance.certify is certify  # the function, not the module of the same name


def test_core_level_leaves_out_the_hardening_clauses() -> None:
    core = select_clauses("core")
    assert {"V8", "E11", "E12", "E13"}.isdisjoint(core)
    assert set(select_clauses("strict")) == set(STRICT)
    assert len(STRICT) == 23


def test_only_and_expected_failures_are_validated() -> None:
    with pytest.raises(ValueError, match="E99"):
        certify(RegistryExecutor, only=["E99"])
    with pytest.raises(ValueError, match="does not check"):
        certify(RegistryExecutor, only=["S1"])
    with pytest.raises(ValueError, match="level core"):
        certify(RegistryExecutor, level="core", only=["E11"])
    with pytest.raises(ValueError, match="E42"):
        certify(RegistryExecutor, expected_failures={"E42": "why"})
    with pytest.raises(ValueError, match="reason"):
        certify(RegistryExecutor, expected_failures={"E4": " "})
    with pytest.raises(ValueError, match="profile"):
        certify(RegistryExecutor, profile="fastest")  # "fast" is one since issue 24
    with pytest.raises(TypeError, match="registry="):
        certify(RegistryExecutor(ToolRegistry()))


def test_a_failure_carries_a_minimal_counterexample_and_a_reproduction_line() -> None:
    report = certify(
        LeaksTraceback,
        profile="quick",
        seed=3,
        only=["E4", "E5"],
        target_name="tests:LeaksTraceback",
    )
    assert statuses(report) == {"E4": "fail", "E5": "pass"}
    result = report.result("E4")
    example = result.counterexample
    assert example is not None
    assert example.behaviour.startswith("raises ")
    assert "Traceback" in example.actual and "[E4]" in example.expected
    assert isinstance(example.action, dict) and "tool_call" in example.action
    # Shrunk: the counterexample's call is small.
    assert len(str(example.action)) < 200, example.action
    assert result.reproduce == (
        "polyloop-conformance certify tests:LeaksTraceback --level "
        "strict --profile quick --seed 3 --only E4"
    )
    assert report.failed_ids() == ("E4",) and report.exit_status() == 1
    assert_valid_report(report)
    text = report.to_text()
    assert "E4 fail" in text and "reproduce" in text and "FAILED" in text


class UnnamedWhenFewMissing(ZooExecutor):
    """Names missing keys only when a schema requires a dozen or more, or requires a key its
    properties do not list: V4's hand-picked traps (twelve and twenty-two required keys, and
    issue 18's unlisted one) pass, the calls Hypothesis draws fail."""

    def check_required(
        self, schema: Mapping[str, object], arguments: Mapping[str, object]
    ) -> str | None:
        text = super().check_required(schema, arguments)
        required = schema.get("required")
        properties = schema.get("properties")
        listed = properties if isinstance(properties, Mapping) else {}
        few = not isinstance(required, (list, tuple)) or (
            len(required) < 12 and all(key in listed for key in required)
        )
        return "missing required argument(s)" if text is not None and few else text


def test_a_shared_database_replays_the_counterexample(tmp_path: Any) -> None:
    # The V4 traps pass, so the counterexample is one Hypothesis found and saved.
    database = str(tmp_path / "db")
    first = certify(UnnamedWhenFewMissing, profile="ci", seed=8, only=["V4"], database=database)
    assert first.result("V4").status == "fail" and any((tmp_path / "db").iterdir())
    again = certify(UnnamedWhenFewMissing, profile="ci", seed=9, only=["V4"], database=database)
    assert again.result("V4").status == "fail"
    # the hand-picked V4 traps first (they pass), then the saved example at once
    assert again.result("V4").examples == len(validation.traps()["V4"]) + 1
    assert again.result("V4").counterexample == first.result("V4").counterexample


def test_the_same_seed_reproduces_the_same_counterexample() -> None:
    first = certify(LeaksTraceback, profile="quick", seed=8, only=["E4"]).result("E4")
    again = certify(LeaksTraceback, profile="quick", seed=8, only=["E4"]).result("E4")
    assert first.counterexample == again.counterexample


def test_expected_failures_turn_failures_into_xfail_and_stale_entries_into_failures() -> None:
    report = certify(
        LeaksTraceback,
        profile="quick",
        seed=3,
        only=["E4", "E5"],
        expected_failures={
            "E4": "tracebacks are kept on purpose",
            "E5": "we thought texts were changed",
        },
    )
    e4, e5 = report.result("E4"), report.result("E5")
    assert e4.status == "xfail" and e4.expected_failure == "tracebacks are kept on purpose"
    assert e5.status == "fail" and "remove E5" in (e5.message or "")
    assert not report.passed
    assert_valid_report(report)
    only_xfail = certify(
        LeaksTraceback, profile="quick", seed=3, only=["E4"], expected_failures={"E4": "known"}
    )
    assert only_xfail.passed and only_xfail.exit_status() == 0


# --- robust against what it tests -----------------------------------------------------------


@pytest.mark.parametrize("executor", [HangsForever, BlocksTheLoop])
def test_an_executor_that_never_returns_fails_within_the_deadline(executor: Any) -> None:
    started = time.perf_counter()
    report = certify(executor, profile="quick", seed=1, only=["E5", "V2"], deadline=0.3)
    elapsed = time.perf_counter() - started
    # Issue 18: once a fresh executor no longer answers a plain call, later clauses are not
    # judged (skipped, saying why) rather than failed for the same hang.
    assert statuses(report) == {"V2": "fail", "E5": "skipped"}, report.to_text()
    assert "0.3s" in (report.result("V2").message or ""), report.to_text()
    assert "stopped answering during V2" in (report.result("V2").message or "")
    assert "not judged" in (report.result("E5").message or "")
    # Generous bound: without the deadline, HangsForever never returns and BlocksTheLoop
    # costs 3 s per example; with it the run ends promptly even on a loaded machine.
    assert elapsed < 30, f"took {elapsed:.1f}s"
    assert_valid_report(report)


def test_afactory_that_raises_is_one_set_up_error_not_a_crash() -> None:
    # Issue 11 item 9: a factory failing in every clause is one SetUpError (CLI: exit 2).
    with pytest.raises(SetUpError, match="RuntimeError: no backend configured, in every clause"):
        certify(factory_that_raises, profile="quick", seed=1, only=["E1", "E5"])


def test_an_executor_that_raises_or_returns_junk_is_reported_against_the_clause() -> None:
    report = certify(Misbehaves, profile="quick", seed=2, only=["V1", "E1", "E2", "E5"])
    # A valid call that raises before reaching its handler is V1's failure; E5 (what becomes of
    # a handler's str) has nothing to judge (issue 9, defect 8).
    assert statuses(report) == {"V1": "fail", "E1": "fail", "E2": "fail", "E5": "skipped"}
    assert "not an ActionOutcome" in (report.result("E1").message or "")
    assert "RuntimeError" in (report.result("E2").message or "")
    not_async = certify(NotAsync, profile="quick", seed=2, only=["E1"])
    assert statuses(not_async) == {"E1": "fail"}
    assert "awaitable" in (not_async.result("E1").message or "")


def test_keyboard_interrupts_raised_by_handlers_never_reach_the_kit() -> None:
    # The reference lets KeyboardInterrupt through (E6 passes) and the test process survives.
    assert certify(RegistryExecutor, profile="quick", seed=4, only=["E6"]).passed
    report = certify(SwallowsInterrupts, profile="quick", seed=4, only=["E6"])
    assert statuses(report) == {"E6": "fail"}
    assert report.result("E6").counterexample is not None


def test_report_schema_names_every_profile_certify_accepts() -> None:
    # A report of `--profile fast` (the pre-commit profile) must validate like any other.
    from conformance._core.hypo import PROFILES

    assert report_schema()["properties"]["profile"]["enum"] == list(PROFILES)


def test_a_fast_profile_report_validates_against_the_schema() -> None:
    report = certify(lambda registry: registry.executor(), only=["E1"], profile="fast", seed=0)
    assert report.profile == "fast" and report.passed
    assert_valid_report(report)


def test_a_VE_clause_generates_three_fifths_of_the_profiles_examples() -> None:
    """30 at ``ci``, at least one however few are asked for, and still the kit's own settings
    class (which keeps Hypothesis from drawing the target's constants)."""
    from conformance._core import hypo
    from conformance.executor.search import clause_settings

    ci = hypo.run_settings(hypo.profile_settings("ci"))
    assert clause_settings(ci).max_examples == 30
    assert clause_settings(type(ci)(ci, max_examples=1)).max_examples == 1
    assert clause_settings(type(ci)(ci, max_examples=1000)).max_examples == 600
    assert type(clause_settings(ci)) is type(ci) is hypo.KitSettings
    assert clause_settings(ci).derandomize and clause_settings(ci).deadline == ci.deadline
