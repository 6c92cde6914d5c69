"""H3/H4 use the generator `certify` uses: unsatisfiable schemas fail H3 at the contradiction's
JSON path, and a schema hypothesis-jsonschema cannot resolve is still checked by H4."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.toolcheck import ToolDraft, check_tool

KIT = Path(__file__).resolve().parents[2] / "conformance"


async def echo(arguments: dict[str, Any]) -> str:
    return "ok"


def draft(parameters: object, handler: object = echo) -> ToolDraft:
    return ToolDraft(name="t", description="a tool", parameters=parameters, handler=handler)


def test_H3_required_key_a_closed_object_forbids_is_unsatisfiable_at_its_path() -> None:
    schema = {"type": "object", "required": ["a"], "additionalProperties": False}
    report = check_tool(draft(schema), only=["H3", "H4"])
    assert report.statuses == {"H3": "fail", "H4": "skipped"}
    (finding,) = report.findings
    assert finding.code == "unsatisfiable"
    assert finding.path == "parameters['required'][0]"
    assert "'a' is required" in finding.message


@settings(max_examples=20, deadline=None)
@given(
    keyword=st.sampled_from([("minimum", "maximum"), ("minLength", "maxLength")]),
    low=st.integers(1, 50),
    gap=st.integers(1, 50),
)
def test_H3_lower_bound_above_upper_bound_is_unsatisfiable_at_the_bound(
    keyword: tuple[str, str], low: int, gap: int
) -> None:
    low_key, high_key = keyword
    kind = "integer" if low_key == "minimum" else "string"
    prop = {"type": kind, low_key: low + gap, high_key: low}
    schema = {"type": "object", "properties": {"x": prop}, "required": ["x"]}
    report = check_tool(draft(schema), only=["H3"], examples=0)
    assert report.statuses == {"H3": "fail"}
    assert report.findings[0].path == f"parameters['properties']['x'][{low_key!r}]"


def test_H3_satisfiable_closed_object_passes() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert check_tool(draft(schema), only=["H3"], examples=0).statuses == {"H3": "pass"}


def test_H4_checks_a_recursive_ref_hypothesis_jsonschema_cannot_resolve() -> None:
    calls: list[object] = []

    async def record(arguments: dict[str, Any]) -> str:
        calls.append(arguments)
        return "ok"

    schema = {"type": "object", "properties": {"child": {"$ref": "#"}}}
    report = check_tool(draft(schema, record), only=["H3", "H4"], examples=10, seed=0)
    assert report.statuses == {"H3": "pass", "H4": "pass"}
    assert report.examples > 0 and calls


def test_hypothesis_jsonschema_is_imported_in_exactly_one_place() -> None:
    sites = [
        str(path.relative_to(KIT))
        for path in KIT.rglob("*.py")
        if re.search(r"^\s*(from|import) hypothesis_jsonschema", path.read_text(), re.M)
    ]
    assert sites == ["_core/hjs_compat.py"]
