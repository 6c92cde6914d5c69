"""The mutation harness's own rules: the equivalent list only shrinks, survivors are reported with
their diff, and a mutant is loaded in memory without touching the tree."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from detection_report import write_report
from run import (
    ANNOTATION_REASON,
    ROOT,
    Mutant,
    _locate,
    annotation_only,
    code_patches,
    with_annotation_only,
)


def mutant(name: str, *, on_path: bool = True) -> Mutant:
    return Mutant(
        id=name,
        module="polyloop/tools.py" if on_path else "polyloop/elsewhere.py",
        operator="core/AddNot",
        occurrence=0,
        function="RegistryExecutor.execute",
        lines=(1, 1),
        diff=f"-old {name}\n+new {name}",
        source="",
    )


def write(tmp_path: Path, mutants: list[Mutant], results: dict[str, Any], **kw: Any) -> list[str]:
    return write_report(
        tmp_path / "detection.md",
        mutants=mutants,
        generated=len(mutants),
        results=results,
        equivalents=kw.get("equivalents", {}),
        stale=kw.get("stale", []),
        wall=60.0,
        reference_seconds=10.0,
        jobs=2,
        load=((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
        partial=False,
    )


def verdicts(kit: str, tests: str) -> dict[str, Any]:
    return {"kit": {"status": kit, "seconds": 1.0, "clause": "E4"}, "tests": {"status": tests}}


def test_equivalent_entry_that_is_killed_fails_the_run(tmp_path: Path) -> None:
    problems = write(
        tmp_path,
        [mutant("m1")],
        {"m1": verdicts("killed", "survived")},
        equivalents={"m1": {"reason": "no behaviour changes", "kind": "equivalent"}},
    )
    assert problems and "m1" in problems[0] and "remove it" in problems[0]


def test_stale_equivalent_entry_fails_the_run(tmp_path: Path) -> None:
    problems = write(tmp_path, [mutant("m1")], {"m1": verdicts("killed", "killed")}, stale=["gone"])
    assert problems == ["equivalent entry 'gone' matches no mutant: remove it"]


def test_survivors_are_reported_with_their_diff_and_counted(tmp_path: Path) -> None:
    mutants = [mutant("alive"), mutant("dead"), mutant("off", on_path=False)]
    results = {
        "alive": verdicts("survived", "survived"),
        "dead": verdicts("killed", "timeout"),
        "off": verdicts("unreached", "killed"),
    }
    assert write(tmp_path, mutants, results) == []
    text = (tmp_path / "detection.md").read_text()
    assert "#### `alive`" in text and "+new alive" in text
    assert "#### `dead`" not in text
    assert "| kit alone | validation/dispatch path (2) | 1 | 0 | 0 | 1 | 0 | **50.0%** |" in text
    assert "| library tests | all non-equivalent (3) | 1 | 1 | 0 | 1 | 0 | **66.7%** |" in text


def test_wording_entry_may_be_killed_by_the_tests_but_not_by_the_kit(tmp_path: Path) -> None:
    wording = {"w": {"reason": "V6 leaves the text free", "kind": "wording"}}
    results = {"w": verdicts("survived", "killed")}
    assert write(tmp_path, [mutant("w")], results, equivalents=wording) == []
    text = (tmp_path / "detection.md").read_text()
    assert "validation/dispatch path (0)" in text and "all non-equivalent (1)" in text
    results = {"w": verdicts("killed", "killed")}
    problems = write(tmp_path, [mutant("w")], results, equivalents=wording)
    assert problems and "detected by the kit" in problems[0]


def test_hardening_mutant_leaves_the_kit_population_with_the_clause_as_its_reason(
    tmp_path: Path,
) -> None:
    """Issue 18: a mutant strict passes and hardened kills is kind hardening, judged by the
    library tests only, listed with the clause that told it apart."""
    results = {
        "h": {"kit": {"status": "survived", "hardening": "E13"}, "tests": {"status": "killed"}},
        "alive": verdicts("survived", "killed"),
    }
    assert write(tmp_path, [mutant("h"), mutant("alive")], results) == []
    text = (tmp_path / "detection.md").read_text()
    assert "| kit alone | validation/dispatch path (1) | 0 | 0 | 0 | 1 | 0 | **0.0%** |" in text
    assert "all non-equivalent (2)" in text
    assert "kind `hardening`" in text and "level hardened fails it on E13" in text
    hardening = {"h": {"reason": "a lying key", "kind": "hardening"}}
    problems = write(
        tmp_path, [mutant("h")], {"h": verdicts("killed", "killed")}, equivalents=hardening
    )
    assert problems and "detected by the kit" in problems[0]


def test_equivalent_mutant_that_survives_is_listed_with_its_reason(tmp_path: Path) -> None:
    problems = write(
        tmp_path,
        [mutant("same")],
        {"same": verdicts("survived", "survived")},
        equivalents={"same": {"reason": "the bound is never reached", "kind": "equivalent"}},
    )
    assert problems == []
    assert "Reason: the bound is never reached" in (tmp_path / "detection.md").read_text()


SOURCE = """\
import os


class Thing:
    @property
    def value(self) -> int:
        if os.sep == "/":
            return 1
        return 2


def helper(x):
    return [
        x + 1,
        x - 1,
    ]
"""


@pytest.mark.parametrize(
    ("line", "function", "span"),
    [
        (1, "<module>", (1, 1)),
        (5, "Thing.value", (5, 6)),
        (7, "Thing.value", (7, 7)),
        (8, "Thing.value", (8, 8)),
        (15, "helper", (13, 16)),
    ],
)
def test_a_mutated_line_is_located_in_its_function_and_statement(
    line: int, function: str, span: tuple[int, int]
) -> None:
    assert _locate(SOURCE, line) == (function, span)


def test_mutant_is_a_frozen_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        mutant("x").id = "y"  # type: ignore[misc]


def _replaced(old: str, new: str) -> Mutant:
    source = (ROOT / "polyloop/tools.py").read_text(encoding="utf-8")
    assert source.count(old) == 1
    return dataclasses.replace(mutant(f"{old} => {new}"), source=source.replace(old, new))


def test_annotation_only_mutants_are_recognised_and_marked_equivalent() -> None:
    only_annotation = _replaced(
        "def _exception_text(exc: BaseException) -> str | None:",
        "def _exception_text(exc: BaseException) -> str + None:",
    )
    parameter = _replaced("def _plain_key(key: object)", "def _plain_key(key: int)")
    behaviour = _replaced(
        "if type(key) is str:\n        return key", "if type(key) is int:\n        return key"
    )
    assert annotation_only(only_annotation)
    assert annotation_only(parameter)
    assert not annotation_only(behaviour)
    found = with_annotation_only([only_annotation, behaviour], {})
    assert found == {only_annotation.id: {"kind": "equivalent", "reason": ANNOTATION_REASON}}


def test_a_mutant_that_does_not_parse_is_judged_not_annotation_only() -> None:
    """cosmic-ray turns the keyword-only marker `*` into `+`: invalid syntax, which must be
    judged (it fails to import, so it is killed) rather than crash the harness."""
    broken = _replaced(
        "def batch_executor(self, *, max_concurrency",
        "def batch_executor(self, +, max_concurrency",
    )
    assert not annotation_only(broken)
    assert with_annotation_only([broken], {}) == {}
    assert code_patches(broken) is None  # a fresh import judges it


def test_class_bodies_are_named_apart_from_the_module_and_their_methods() -> None:
    source = (ROOT / "polyloop/tools.py").read_text(encoding="utf-8")
    lines = source.splitlines()

    def where(text: str) -> str:
        (number,) = [n for n, line in enumerate(lines, 1) if line.strip() == text]
        return _locate(source, number)[0]

    assert where("completes_run: bool = False") == "ToolSpec.<body>"
    assert where('__slots__ = ("_compiled", "_registry")') == "RegistryExecutor.<body>"
    assert where("def registry(self) -> ToolRegistry:") == "RegistryExecutor.registry"
    assert where("_outcome = _trusted_outcome") == "<module>"
