"""The tool checks over the real corpora: 83 MCP tools and 1,167 BFCL functions.

Schema checks only (no generation), so the full corpora take a few seconds. The counts are the
measured result of the run, pinned so that a change in either the checks or the data shows up.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.toolcheck import ToolCheckReport, check_registry, load_tool_file

pytestmark = pytest.mark.one_python

CORPUS = Path(__file__).resolve().parent.parent / "data" / "tool-schemas"


@pytest.fixture(scope="module")
def mcp() -> ToolCheckReport:
    tools = load_tool_file(CORPUS / "mcp-servers.json")
    return check_registry(tools, examples=0, raise_on_failure=False, target="mcp-servers.json")


@pytest.fixture(scope="module")
def bfcl() -> ToolCheckReport:
    tools = load_tool_file(CORPUS / "bfcl-functions.json")
    return check_registry(tools, examples=0, raise_on_failure=False, target="bfcl-functions.json")


def test_H2_H3_H5_every_mcp_tool_passes_the_schema_checks(
    mcp: ToolCheckReport, record_count: Callable[[str, int], None]
) -> None:
    record_count("mcp tools checked", len(mcp.tools))
    assert len(mcp.tools) == 83
    for clause in ("H2", "H3"):
        assert mcp.clause_counts()[clause] == {"pass": 83, "fail": 0, "skipped": 0}
    # Two cloudflare servers share two tool names: one registry cannot hold both (R2).
    assert mcp.clause_counts()["H5"] == {"pass": 79, "fail": 4, "skipped": 0}
    assert sorted((f.tool, f.code) for f in mcp.findings) == [
        ("accounts_list #0", "duplicate-name"),
        ("accounts_list #7", "duplicate-name"),
        ("set_active_account #1", "duplicate-name"),
        ("set_active_account #8", "duplicate-name"),
    ]
    # Handler-less specs: H1 has nothing to judge, generation was off.
    for clause in ("H1", "H4", "H6"):
        assert mcp.clause_counts()[clause]["skipped"] == 83


def test_H2_every_bfcl_function_is_flagged_for_its_python_type_names(
    bfcl: ToolCheckReport, record_count: Callable[[str, int], None]
) -> None:
    record_count("bfcl functions checked", len(bfcl.tools))
    assert len(bfcl.tools) == 1167
    assert bfcl.clause_counts()["H2"] == {"pass": 0, "fail": 1167, "skipped": 0}
    corpus = json.loads((CORPUS / "bfcl-functions.json").read_text(encoding="utf-8"))
    names = Counter(str(tool["name"]) for tool in corpus)
    shared = Counter(n for n in names.values() if n > 1)  # tools sharing a name: R2 refuses
    repeated = sum(n * tools for n, tools in shared.items())
    assert repeated == 603
    assert bfcl.clause_counts()["H5"] == {"pass": 1167 - repeated, "fail": repeated, "skipped": 0}
    assert bfcl.finding_counts() == {
        "H2 `dict` is not a JSON Schema type -> did you mean `object`?": 1198,
        "H5 another tool in this list has the same name; a model cannot tell them apart "
        "(ToolRegistry refuses duplicate names, R2) -> give each tool a name of its own": 603,
        "H2 `float` is not a JSON Schema type -> did you mean `number`?": 396,
        "H2 `tuple` is not a JSON Schema type -> did you mean `array`?": 4,
        "H2 `any` is not a JSON Schema type -> omit `type` to accept any value": 4,
    }
    first = bfcl.tools[0]
    assert first.tool == "calculate_triangle_area #0"  # the name recurs later in the corpus
    assert [str(f) for f in first.findings] == [
        "H2 'calculate_triangle_area #0' at parameters['type']: "
        "`dict` is not a JSON Schema type; did you mean `object`?",
        "H5 'calculate_triangle_area #0' at tool['name']: another tool in this list has the same "
        "name; a model cannot tell them apart (ToolRegistry refuses duplicate names, R2); give "
        "each tool a name of its own",
    ]


def test_H2_mcp_draft07_schemas_are_checked_under_draft07(mcp: ToolCheckReport) -> None:
    tools = load_tool_file(CORPUS / "mcp-servers.json")
    declared = [t for t in tools if isinstance(t.parameters, dict) and "$schema" in t.parameters]
    assert len(declared) == 75


def test_H4_polyloop_validation_accepts_generated_calls_for_every_mcp_tool(
    record_count: Callable[[str, int], None],
) -> None:
    """V1 through H4 on real schemas (75 of them draft-07): a few generated calls per tool,
    each accepted by jsonschema under the schema's dialect, must pass polyloop's validator."""
    tools = load_tool_file(CORPUS / "mcp-servers.json")
    report = check_registry(tools, examples=3, seed=0, raise_on_failure=False)
    tried = sum(tool.examples for tool in report.tools)
    record_count("mcp generated calls validated", tried)
    assert report.clause_counts()["H4"] == {"pass": 83, "fail": 0, "skipped": 0}, report.summary()
    assert tried >= 83 * 2
