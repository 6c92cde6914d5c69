"""The contract as documentation: `catalog`, and docs/contract.md kept in sync with the catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _commands import run_registered

from conformance import catalog
from conformance.cli import add_catalog_command
from conformance.docs import (
    ENTRY_POINTS,
    checked_by,
    contract_markdown,
    main,
)
from conformance.toolcheck import CLAUSES as TOOL_CLAUSES
from conformance.toolcheck import ToolContract

CONTRACT_MD = Path(__file__).resolve().parents[2] / "docs" / "contract.md"


def run_catalog(*argv: str) -> int:
    return run_registered(add_catalog_command, "catalog", *argv)


def test_docs_contract_md_is_up_to_date() -> None:
    current = CONTRACT_MD.read_text(encoding="utf-8") if CONTRACT_MD.is_file() else ""
    assert current == contract_markdown(), (
        "docs/contract.md is out of date with conformance/catalog.py; regenerate it with: "
        "python -m conformance.docs --write docs/contract.md"
    )


def test_contract_md_has_every_clause_with_level_title_summary_and_checkers() -> None:
    text = contract_markdown()
    for clause in catalog.CLAUSES:
        row = f"| [{clause.id}](#{clause.id.lower()}) | {clause.level} |"
        assert row in text
        assert f"\n### {clause.id}\n" in text
        assert clause.summary in text
        assert checked_by(clause), f"{clause.id} names no entry point that checks it"
        assert set(checked_by(clause)) <= set(ENTRY_POINTS)


def test_docs_check_mode_fails_on_a_stale_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "contract.md"
    stale.write_text("# old\n")
    assert main(["--check", str(stale)]) == 1
    assert f"python -m conformance.docs --write {stale}" in capsys.readouterr().err
    assert main(["--write", str(stale)]) == 0
    assert main(["--check", str(stale)]) == 0


def test_catalog_command_lists_every_clause(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_catalog() == 0
    text = capsys.readouterr().out
    assert text.startswith(f"polyloop tool contract {catalog.CONTRACT_VERSION}: ")
    for clause in catalog.CLAUSES:
        assert f"  {clause.id:<4} {clause.level:<7}{clause.title}" in text


def test_catalog_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_catalog("--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["contract_version"] == catalog.CONTRACT_VERSION
    assert [row["id"] for row in data["clauses"]] == [c.id for c in catalog.CLAUSES]
    h4 = next(row for row in data["clauses"] if row["id"] == "H4")
    assert h4["checked_by"] == ["check_tool", "ToolContract"]
    assert set(h4) == {"id", "level", "section", "title", "summary", "checked_by"}


def test_tool_clauses_match_the_catalog_and_toolcontract_tests() -> None:
    """H1-H6: one catalog row, one check_tool clause and one ToolContract test each."""
    catalog_ids = tuple(c.id for c in catalog.CLAUSES if c.section == "tools")
    assert catalog_ids == TOOL_CLAUSES
    tests = sorted(name for name in vars(ToolContract) if name.startswith("test_"))
    assert [name.split("_")[1] for name in tests] == list(TOOL_CLAUSES)
    for name in tests:
        doc = getattr(ToolContract, name).__doc__
        assert re.match(rf"{name.split('_')[1]}\b", doc), name


def test_37_the_contract_page_cites_nothing_outside_the_repository() -> None:
    """Issue 37, item 5: a clone has neither the contract's source file nor the design
    documents, so the page states what they decided instead of pointing at them."""
    text = contract_markdown()
    assert "CONTRACT.md" not in text and "0008" not in text
    assert "`SAFE` may, `NEVER` may not" in text
