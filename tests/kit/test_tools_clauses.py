"""The tool authors' checks (H1-H6): each broken tool is reported under exactly its clause.

Every test builds one small tool that breaks (or keeps) one clause and asserts which clause
`check_tool` reports, where, and the fix it suggests. Generation is kept small (a handful of
examples, deadlines of a tenth of a second) so the whole file runs in seconds.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections.abc import Mapping
from typing import Any

import pytest
from _helpers import ASYNC_HANDLERS

from conformance.toolcheck import (
    Finding,
    ToolCheckFailed,
    ToolDraft,
    ToolReport,
    check_registry,
    check_tool,
)
from polyloop import ReplayPolicy, ToolRegistry, ToolSpec
from polyloop.tools import ToolValidationError

OBJECT_N = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
OBJECT_Q = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


async def echo(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True)


def spec(parameters: Mapping[str, object] = OBJECT_N, **fields: Any) -> ToolSpec:
    fields.setdefault("name", "tool")
    fields.setdefault("description", "A tool under test.")
    return ToolSpec(parameters=parameters, **fields)


def failed(report: ToolReport) -> list[str]:
    return list(report.failed_clauses())


def only_finding(report: ToolReport, clause: str) -> Finding:
    findings = report.findings_for(clause)
    assert len(findings) == 1, findings
    return findings[0]


# --- H1 ------------------------------------------------------------------------------------------


def sync_handler(arguments: dict[str, Any]) -> str:
    return "done"


def test_H1_sync_handler_reported() -> None:
    report = check_tool(
        ToolDraft(name="t", description="d", parameters=OBJECT_N, handler=sync_handler),
        examples=0,
    )
    assert failed(report) == ["H1"]
    finding = only_finding(report, "H1")
    assert (finding.tool, finding.path, finding.code) == ("t", "handler", "sync-handler")
    assert "async def" in finding.fix


def test_H1_sync_handler_smuggled_into_a_toolspec_reported() -> None:
    # ToolSpec refuses a sync handler (S5); an instance built around __init__ still gets caught.
    smuggled = object.__new__(ToolSpec)
    for name, value in {
        "name": "smuggled",
        "description": "d",
        "parameters": OBJECT_N,
        "replay_policy": ReplayPolicy.NEVER,
        "completes_run": False,
        "handler": sync_handler,
    }.items():
        object.__setattr__(smuggled, name, value)
    report = check_tool(smuggled, examples=0)
    assert failed(report) == ["H1"]
    assert only_finding(report, "H1").code == "sync-handler"


def test_H1_non_callable_handler_reported() -> None:
    report = check_tool(
        ToolDraft(name="t", description="d", parameters=OBJECT_N, handler="not a function"),
        examples=0,
    )
    assert only_finding(report, "H1").code == "not-callable"


@pytest.mark.parametrize("handler", list(ASYNC_HANDLERS.values()), ids=list(ASYNC_HANDLERS))
def test_H1_async_callables_pass(handler: Any) -> None:
    report = check_tool(spec(handler=handler), examples=0)
    assert report.statuses["H1"] == "pass"


# --- H2 ------------------------------------------------------------------------------------------


def test_H2_misspelled_type_reported() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "strng"}}}
    report = check_tool(ToolDraft(name="weather", description="d", parameters=schema), examples=0)
    assert failed(report) == ["H2"]
    finding = only_finding(report, "H2")
    assert finding.path == "parameters['properties']['city']['type']"
    assert f"{finding.message}; {finding.fix}" == (
        "`strng` is not a JSON Schema type; did you mean `string`?"
    )


def test_H2_bfcl_dict_type_reported_with_fix() -> None:
    # The first function of BFCL's corpus, as written there.
    schema = {
        "type": "dict",
        "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}},
        "required": ["base", "height"],
    }
    report = check_tool(
        ToolDraft(name="calculate_triangle_area", description="d", parameters=schema), examples=0
    )
    assert failed(report) == ["H2"]
    finding = only_finding(report, "H2")
    assert finding.path == "parameters['type']"
    assert str(finding) == (
        "H2 'calculate_triangle_area' at parameters['type']: "
        "`dict` is not a JSON Schema type; did you mean `object`?"
    )
    assert report.statuses["H3"] == "skipped"
    assert report.reasons["H3"] == "the schema is not valid (see H2)"


@pytest.mark.parametrize(
    ("written", "fix"),
    [
        ("float", "did you mean `number`?"),
        ("tuple", "did you mean `array`?"),
        ("list", "did you mean `array`?"),
        ("int", "did you mean `integer`?"),
        ("str", "did you mean `string`?"),
        ("bool", "did you mean `boolean`?"),
        ("Integer", "did you mean `integer`?"),
        ("any", "omit `type` to accept any value"),
    ],
)
def test_H2_python_type_names_get_a_fix(written: str, fix: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": ["null", written]}}}
    finding = only_finding(
        check_tool(ToolDraft(name="t", description="d", parameters=schema), examples=0), "H2"
    )
    assert finding.path == "parameters['properties']['x']['type'][1]"
    assert finding.code == "unknown-type"
    assert finding.fix == fix


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"properties": {}}, "the top level declares no `type`"),
        ({"type": "array"}, "the top level has type 'array'"),
    ],
)
def test_H2_top_level_must_be_an_object(schema: dict[str, Any], message: str) -> None:
    finding = only_finding(
        check_tool(ToolDraft(name="t", description="d", parameters=schema), examples=0), "H2"
    )
    assert (finding.path, finding.code) == ("parameters['type']", "top-level-type")
    assert finding.message.startswith(message)


def test_H2_schema_is_checked_under_its_own_dialect() -> None:
    # A list of schemas under `items` is draft-07 tuple validation, but invalid in 2020-12.
    tuple_items = {
        "type": "object",
        "properties": {"point": {"type": "array", "items": [{"type": "number"}]}},
    }
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items}
    assert check_tool(ToolDraft(name="t", description="d", parameters=draft7), examples=0).passed
    finding = only_finding(
        check_tool(ToolDraft(name="t", description="d", parameters=tuple_items), examples=0), "H2"
    )
    assert finding.path == "parameters['properties']['point']['items']"
    assert "prefixItems" in finding.fix


def test_H2_unknown_dialect_reported() -> None:
    schema = {"$schema": "https://example.com/my-dialect", "type": "object"}
    finding = only_finding(
        check_tool(ToolDraft(name="t", description="d", parameters=schema), examples=0), "H2"
    )
    assert (finding.path, finding.code) == ("parameters['$schema']", "unknown-dialect")


def test_H2_property_named_type_is_not_a_type_keyword() -> None:
    schema = {"type": "object", "properties": {"type": {"type": "string"}}}
    assert check_tool(ToolDraft(name="t", description="d", parameters=schema), examples=0).passed


# --- H3 ------------------------------------------------------------------------------------------


def test_H3_unsatisfiable_schema_reported() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
        "required": ["n"],
    }
    report = check_tool(spec(schema, handler=echo), examples=5)
    assert failed(report) == ["H3"]
    assert only_finding(report, "H3").code == "unsatisfiable"
    assert report.statuses["H4"] == "skipped"
    assert report.reasons["H4"] == "the schema is not satisfiable (see H3)"


def test_H3_array_property_with_a_string_enum_is_unsatisfiable() -> None:
    # Found in BFCL (extract_parameters_v1): an array whose enum lists strings, and required.
    schema = {
        "type": "object",
        "properties": {
            "metrics": {"type": "array", "items": {"type": "string"}, "enum": ["trust", "buzz"]}
        },
        "required": ["metrics"],
    }
    report = check_tool(spec(schema), examples=0)
    assert failed(report) == ["H3"]


# --- H4 ------------------------------------------------------------------------------------------


async def none_for_negatives(arguments: dict[str, Any]) -> str:
    if arguments["n"] < 0:
        return None  # type: ignore[return-value]  # the bug under test
    return "ok"


def test_H4_handler_returning_none_reported() -> None:
    report = check_tool(spec(handler=none_for_negatives), examples=25, seed=1)
    assert failed(report) == ["H4"]
    finding = only_finding(report, "H4")
    assert (finding.path, finding.code) == ("handler", "non-str-return")
    assert "NoneType" in finding.message
    assert finding.example == {"n": -1}  # shrunk to the smallest failing call


async def hangs_for_big_numbers(arguments: dict[str, Any]) -> str:
    if arguments["n"] > 100:
        await asyncio.Event().wait()
    return "ok"


def test_H4_hanging_handler_reported_at_the_deadline() -> None:
    start = time.monotonic()
    report = check_tool(spec(handler=hangs_for_big_numbers), examples=25, seed=1, deadline=0.05)
    assert time.monotonic() - start < 10
    assert failed(report) == ["H4"]
    finding = only_finding(report, "H4")
    assert finding.code == "deadline"
    assert "within 0.05s" in finding.message
    assert finding.example is not None and finding.example["n"] > 100


async def blocks_the_loop(arguments: dict[str, Any]) -> str:
    if arguments["n"] > 100:
        time.sleep(0.3)  # a synchronous call inside async def: cannot be cancelled
    return "ok"


def test_H4_handler_blocking_its_event_loop_reported() -> None:
    report = check_tool(spec(handler=blocks_the_loop), examples=25, seed=1, deadline=0.05)
    finding = only_finding(report, "H4")
    assert finding.code == "deadline"
    assert "blocked its event loop" in finding.message
    assert "asyncio.to_thread" in finding.fix


@pytest.mark.parametrize(
    "exception",
    [SystemExit(3), KeyboardInterrupt(), asyncio.CancelledError(), GeneratorExit()],
    ids=lambda exc: type(exc).__name__,
)
def test_H4_base_exception_reported_without_stopping_the_run(exception: BaseException) -> None:
    async def escapes(arguments: dict[str, Any]) -> str:
        if arguments["q"]:
            raise exception
        return "ok"

    report = check_tool(spec(OBJECT_Q, handler=escapes), examples=25, seed=1)
    assert failed(report) == ["H4"]
    finding = only_finding(report, "H4")
    assert finding.code == "base-exception"
    assert type(exception).__name__ in finding.message
    assert finding.example is not None and len(str(finding.example["q"])) == 1


async def strict_about_length(arguments: dict[str, Any]) -> str:
    if len(arguments["q"]) > 1:
        raise ValueError("q must be a single character")
    return arguments["q"]


def test_H4_exceptions_are_allowed_and_counted_with_the_smallest_example() -> None:
    report = check_tool(spec(OBJECT_Q, handler=strict_about_length), examples=25, seed=1)
    assert report.statuses["H4"] == "pass"
    stats = report.handler_stats
    assert stats is not None and stats.calls == report.examples >= 10
    assert 0 < stats.raised < stats.calls
    assert stats.exceptions == {"ValueError": stats.raised}
    assert stats.smallest_raising is not None and len(stats.smallest_raising["q"]) == 2
    assert stats.smallest_observation == "ValueError: q must be a single character"
    assert "handler raised on" in report.to_text()


class RejectingRegistry(ToolRegistry):
    """A registry whose validator refuses valid calls: a V1 bug H4 must catch."""

    def validate(self, call: Any) -> None:
        raise ToolValidationError(f"tool {call.name!r}: rejected")


def test_H4_validator_rejecting_valid_arguments_reported() -> None:
    tool = spec(handler=echo)
    report = check_registry(RejectingRegistry([tool]), examples=5, raise_on_failure=False)
    finding = only_finding(report.tool("tool"), "H4")
    assert (finding.path, finding.code) == ("parameters", "validator-rejected")
    assert "V1" in finding.fix


def test_H4_checks_validation_for_tools_without_handlers() -> None:
    report = check_tool(spec(), examples=5)
    assert report.statuses["H4"] == "pass"
    assert report.statuses["H1"] == "skipped"
    assert report.handler_stats is None
    tool = ToolDraft(name="t", description="d", parameters=OBJECT_N)
    rejected = check_registry(RejectingRegistry([spec()]), examples=5, raise_on_failure=False)
    assert rejected.tool("tool").failed_clauses() == ("H4",)
    assert check_tool(tool, examples=5).passed


# --- H5 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "code", "fix"),
    [
        ({"a", "b"}, "not-json", 'use a list (with "uniqueItems": true'),
        (math.nan, "non-finite", "use a finite number"),
        (str, "python-type", 'write the string "string"'),
        (b"raw", "not-json", "decode them to a str"),
    ],
    ids=["set", "nan", "python-class", "bytes"],
)
def test_H5_schema_that_is_not_json_reported(value: object, code: str, fix: str) -> None:
    schema = {"type": "object", "properties": {"tags": {"enum": value}}}
    report = check_tool(ToolDraft(name="t", description="d", parameters=schema), examples=0)
    assert failed(report) == ["H5"]
    finding = only_finding(report, "H5")
    assert (finding.path, finding.code) == ("parameters['properties']['tags']['enum']", code)
    assert finding.fix.startswith(fix)
    assert report.reasons["H2"] == "parameters is not JSON data (see H5)"


def test_H5_cycles_and_non_string_keys_reported_without_recursing() -> None:
    cyclic: dict[str, Any] = {"type": "object", "properties": {}}
    cyclic["properties"]["self"] = cyclic
    report = check_tool(ToolDraft(name="t", description="d", parameters=cyclic), examples=0)
    assert [f.code for f in report.findings_for("H5")] == ["cycle"]
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(10_000):
        deep = {"not": deep}
    assert [
        f.code
        for f in check_tool(
            ToolDraft(name="t", description="d", parameters=deep), examples=0
        ).findings_for("H5")
    ] == ["too-deep"]
    keyed = {"type": "object", "properties": {1: {"type": "string"}}}
    finding = only_finding(
        check_tool(ToolDraft(name="t", description="d", parameters=keyed), examples=0), "H5"
    )
    assert (finding.path, finding.code) == ("parameters['properties'][1]", "non-str-key")


class TupleSchemaRegistry(ToolRegistry):
    """A registry whose model schema holds a tuple: json.loads gives back a list."""

    def schema_for_model(self) -> list[dict[str, Any]]:
        entries = super().schema_for_model()
        entries[0]["parameters"]["required"] = tuple(entries[0]["parameters"]["required"])
        return entries


def test_H5_model_schema_changing_in_a_json_round_trip_reported() -> None:
    report = check_registry(TupleSchemaRegistry([spec()]), examples=0, raise_on_failure=False)
    finding = only_finding(report.tool("tool"), "H5")
    assert finding.path == "schema_for_model()['parameters']['required']"
    assert (finding.code, finding.message) == (
        "round-trip",
        "a tuple becomes a list after a JSON round trip",
    )


# --- H6 ------------------------------------------------------------------------------------------


def test_H6_safe_tool_returning_different_text_on_replay_reported() -> None:
    counter = itertools.count()

    async def next_ticket(arguments: dict[str, Any]) -> str:
        return f"ticket {next(counter)}"

    tool = spec(OBJECT_Q, handler=next_ticket, replay_policy=ReplayPolicy.SAFE)
    report = check_tool(tool, examples=5, replay=True)
    assert failed(report) == ["H6"]
    finding = only_finding(report, "H6")
    assert (finding.path, finding.code) == ("handler", "replay-differs")
    assert "ReplayPolicy.NEVER" in finding.fix


def test_H6_is_opt_in_and_only_for_safe_tools() -> None:
    safe = spec(handler=echo, replay_policy=ReplayPolicy.SAFE)
    assert check_tool(safe, examples=5).reasons["H6"].startswith("opt-in")
    never = spec(handler=echo)
    assert check_tool(never, examples=5, replay=True).reasons["H6"] == (
        "the tool is not SAFE to replay"
    )
    assert check_tool(safe, examples=5, replay=True).statuses["H6"] == "pass"


# --- a correct tool, reports, input forms ------------------------------------------------------


def test_correct_tool_passes_every_clause() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["q"],
        "additionalProperties": False,
    }
    tool = spec(schema, handler=echo, replay_policy=ReplayPolicy.SAFE)
    report = check_tool(tool, examples=20, replay=True, raise_on_failure=True)
    assert report.statuses == dict.fromkeys(("H1", "H2", "H3", "H4", "H5", "H6"), "pass")
    assert report.findings == ()
    assert report.handler_stats is not None and report.handler_stats.raised == 0


def test_check_registry_raises_a_readable_summary() -> None:
    registry = ToolRegistry(
        [spec(name="good", handler=echo), spec(name="bad", handler=none_for_negatives)]
    )
    with pytest.raises(ToolCheckFailed) as caught:
        check_registry(registry, examples=10, seed=1)
    assert isinstance(caught.value, AssertionError)
    text = str(caught.value)
    assert text.startswith("1 of 2 tools failed the tool checks")
    assert "FAIL bad" in text and "H4 handler: the handler returned NoneType" in text
    assert 'arguments: {"n": -1}' in text
    assert caught.value.report.tool("good").passed


def test_check_registry_non_raising_variant_returns_the_report() -> None:
    registry = ToolRegistry([spec(name="bad", handler=none_for_negatives)])
    report = check_registry(registry, examples=10, seed=1, raise_on_failure=False)
    assert not report.passed and report.exit_status() == 1
    assert report.clause_counts()["H4"] == {"pass": 0, "fail": 1, "skipped": 0}
    json.dumps(report.to_json())
    with pytest.raises(ToolCheckFailed):
        report.raise_for_failures()


@pytest.mark.parametrize(
    "definition",
    [
        {"name": "t", "description": "d", "inputSchema": OBJECT_N},
        {"name": "t", "description": "d", "parameters": OBJECT_N},
        {"type": "function", "function": {"name": "t", "description": "d", "parameters": OBJECT_N}},
        {"name": "t", "description": "d", "input_schema": OBJECT_N},
    ],
    ids=["mcp", "bfcl", "openai", "anthropic"],
)
def test_tool_definition_mappings_are_accepted(definition: dict[str, Any]) -> None:
    report = check_tool(definition, examples=0)
    assert report.tool == "t" and report.passed


def test_unknown_clause_and_bad_settings_rejected() -> None:
    with pytest.raises(ValueError, match="H7"):
        check_tool(spec(), only=["H7"])
    with pytest.raises(ValueError, match="deadline"):
        check_tool(spec(), deadline=0)
    with pytest.raises(ValueError, match="unknown conformance profile"):
        check_tool(spec(), profile="nightly")
