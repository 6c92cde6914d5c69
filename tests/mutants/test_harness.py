"""The mutation harness's own rules: the equivalent list only shrinks, survivors are reported with
their diff, and a mutant is loaded in memory without touching the tree."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from detection_report import SECTION_ORDER, compose, markers, write_report
from run import (
    ANNOTATION_REASON,
    BATCH_OFF_PATH,
    BATCH_PATH_FUNCTIONS,
    PATH_FUNCTIONS,
    POLICY_OFF_PATH,
    POLICY_PATH_FUNCTIONS,
    RECOVERY_OFF_PATH,
    RECOVERY_PATH_FUNCTIONS,
    ROOT,
    SUBJECTS,
    Mutant,
    _batch_kit_verdict,
    _equivalents,
    _Job,
    _kit_verdict,
    _locate,
    _recovery_kit_verdict,
    _scopes,
    annotation_only,
    batch_policy_factory,
    code_patches,
    expose_to_children,
    functools_partial,
    live_functions,
    policy_factory,
    run_jobs,
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


def test_unreachable_entry_leaves_the_kit_population_listed_with_its_reason(
    tmp_path: Path,
) -> None:
    """Issue 34: a statement on the path that only a condition the kit cannot create reaches
    (a power loss, a foreign file) is kind unreachable: out of the kit's population, counted
    in its own row and listed with its reason; a kit that kills it fails the run."""
    unreachable = {"u": {"reason": "only a power loss tells", "kind": "unreachable"}}
    mutants = [mutant("u"), mutant("alive")]
    results = {"u": verdicts("survived", "killed"), "alive": verdicts("killed", "killed")}
    assert write(tmp_path, mutants, results, equivalents=unreachable) == []
    text = (tmp_path / "detection.md").read_text()
    assert "out of the kit's reach (kind `unreachable`" in text and "| 1 |" in text
    assert "validation/dispatch path (1) | 1 | 0 | 0 | 0 | 0 | **100.0%**" in text
    assert "#### `u`" in text and "Reason: only a power loss tells (tests: killed)" in text
    assert "as survivors instead" in text and "1 of 2, **50.0%**" in text
    results["u"] = verdicts("killed", "killed")
    problems = write(tmp_path, mutants, results, equivalents=unreachable)
    assert problems and "unreachable mutant 'u' was detected by the kit" in problems[0]


def test_report_without_unreachable_entries_keeps_its_rows(tmp_path: Path) -> None:
    assert write(tmp_path, [mutant("a")], {"a": verdicts("killed", "killed")}) == []
    text = (tmp_path / "detection.md").read_text()
    assert "unreachable" not in text and "wording and hardening excluded | 1 |" in text


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


def test_an_annotated_assignment_is_annotation_only_in_a_function_body_only() -> None:
    """`x: A | B = {}` in a function body is never evaluated nor stored (PEP 526); a dataclass
    field's annotation is stored in the class and read by `dataclasses`."""
    local = _replaced(
        "compiled: dict[str, ToolSpec | _CompiledTool] = {}",
        "compiled: dict[str, ToolSpec + _CompiledTool] = {}",
    )
    field = _replaced("    description: str\n", "    description: int\n")
    value = _replaced(
        "compiled: dict[str, ToolSpec | _CompiledTool] = {}",
        "compiled: dict[str, ToolSpec | _CompiledTool] = None",
    )
    assert annotation_only(local)
    assert not annotation_only(field)
    assert not annotation_only(value)


def test_a_mutant_that_does_not_parse_is_judged_not_annotation_only() -> None:
    """cosmic-ray turns the keyword-only marker `*` into `+`: invalid syntax, which must be
    judged (it fails to import, so it is killed) rather than crash the harness."""
    broken = _replaced(
        "self, *, max_concurrency: int = 10",
        "self, +, max_concurrency: int = 10",
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
    assert where('__slots__ = ("_compiled", "_policy", "_registry")') == "RegistryExecutor.<body>"
    assert where("def registry(self) -> ToolRegistry:") == "RegistryExecutor.registry"
    assert where("_outcome = _trusted_outcome") == "<module>"


# ---- the batch subject (issue 20) -------------------------------------------------------------


def batch_mutant(name: str, *, on_path: bool = True) -> Mutant:
    return Mutant(
        id=name,
        module="polyloop/batch.py",
        operator="core/AddNot",
        occurrence=0,
        function="_Batch._fill" if on_path else "RegistryBatchExecutor.__init__",
        lines=(1, 1),
        diff=f"-old {name}\n+new {name}",
        source="",
    )


def write_batch(path: Path, mutants: list[Mutant], results: dict[str, Any], **kw: Any) -> list[str]:
    return write_report(
        path,
        mutants=mutants,
        generated=len(mutants),
        results=results,
        equivalents=kw.get("equivalents", {}),
        stale=[],
        wall=60.0,
        reference_seconds=10.0,
        jobs=2,
        load=((1.0, 1.0, 1.0), (1.0, 1.0, 1.0)),
        partial=False,
        subject="batch",
    )


def b_verdicts(kit: str, tests: str) -> dict[str, Any]:
    return {"kit": {"status": kit, "seconds": 1.0, "clause": "B7"}, "tests": {"status": tests}}


def section(text: str, subject: str) -> str:
    begin, end = markers(subject)
    assert text.count(begin) == 1 and text.count(end) == 1, subject
    return text.split(begin, 1)[1].split(end, 1)[0]


def test_each_subject_rewrites_only_its_own_section_in_either_order(tmp_path: Path) -> None:
    executor_first = tmp_path / "a.md"
    batch_first = tmp_path / "b.md"
    write(tmp_path, [mutant("e")], {"e": verdicts("survived", "killed")})
    executor_text = (tmp_path / "detection.md").read_text()
    executor_first.write_text(executor_text)
    write_batch(executor_first, [batch_mutant("b")], {"b": b_verdicts("killed", "killed")})
    write_batch(batch_first, [batch_mutant("b")], {"b": b_verdicts("killed", "killed")})
    batch_text = batch_first.read_text()
    batch_first.write_text(compose(batch_text, "executor", section(executor_text, "executor")))
    assert executor_first.read_text() == batch_first.read_text()
    both = executor_first.read_text()
    assert both.index(markers("executor")[1]) < both.index(markers("batch")[0])
    assert section(both, "batch") == section(batch_text, "batch")
    # A later run of one subject leaves the other's section byte for byte.
    write_batch(executor_first, [batch_mutant("x")], {"x": b_verdicts("survived", "killed")})
    again = executor_first.read_text()
    assert section(again, "executor") == section(both, "executor")
    assert "#### `x`" in section(again, "batch") and "#### `b`" not in again


def test_a_report_without_markers_is_kept_as_the_executor_section() -> None:
    """main's detection.md, written before subjects had sections: the batch run wraps it."""
    legacy = "# Detection power: mutation analysis of the tool layer\n\nold numbers\n"
    text = compose(legacy, "batch", "## batch section")
    assert section(text, "executor") == "\n" + legacy
    assert section(text, "batch") == "\n## batch section\n"
    assert compose(legacy, "executor", "new") == "\n".join([*markers("executor"), ""]).replace(
        markers("executor")[0], markers("executor")[0] + "\nnew"
    )
    assert SECTION_ORDER == ("executor", "batch", "policy", "recovery")


def test_text_outside_the_sections_is_kept() -> None:
    text = compose("preamble\n", "executor", "x")  # no markers: the whole text was executor's
    text = "preamble kept\n\n" + text
    out = compose(text, "batch", "y")
    assert out.startswith("preamble kept\n\n" + markers("executor")[0])
    assert compose(out, "executor", "z").startswith("preamble kept\n\n")


def test_batch_section_counts_the_scheduling_path_and_prints_survivor_notes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "detection.md"
    mutants = [batch_mutant("alive"), batch_mutant("dead"), batch_mutant("r9", on_path=False)]
    results = {
        "alive": b_verdicts("survived", "killed"),
        "dead": b_verdicts("timeout", "killed"),
        "r9": {"kit": {"status": "off-path"}, "tests": {"status": "killed"}},
    }
    notes = {"alive": {"reason": "B5 reads timing from the trace only", "kind": "survivor"}}
    assert write_batch(path, mutants, results, equivalents=notes) == []
    text = section(path.read_text(), "batch")
    assert "## Mutants of `RegistryBatchExecutor` (`polyloop/batch.py`), killed by" in text
    assert "| kit alone | scheduling path (2) | 0 | 1 | 0 | 1 | 0 | **50.0%** |" in text
    assert "| library tests | all non-equivalent (3) | 3 | 0 | 0 | 0 | 0 | **100.0%** |" in text
    assert "### Kit survivors on the scheduling path" in text and "#### `alive`" in text
    assert "Why: B5 reads timing from the trace only" in text
    assert "tests/mutants/equivalent_batch.toml" in text


def test_a_survivor_note_on_a_mutant_both_judges_detect_fails_the_run(tmp_path: Path) -> None:
    notes = {"gone": {"reason": "was a gap", "kind": "survivor"}}
    problems = write_batch(
        tmp_path / "d.md",
        [batch_mutant("gone")],
        {"gone": b_verdicts("killed", "killed")},
        equivalents=notes,
    )
    assert problems and "survivor 'gone' is detected now" in problems[0]
    assert "equivalent_batch.toml" in problems[0]


def test_batch_equivalent_list_reads_survivor_entries_with_reasons(tmp_path: Path) -> None:
    pytest.importorskip("tomllib")
    listed = tmp_path / "eq.toml"
    listed.write_text(
        '[[equivalent]]\nid = "a"\nkind = "equivalent"\nreason = "same"\n'
        '[[survivor]]\nid = "b"\nreason = "why"\n'
    )
    assert _equivalents(listed) == {
        "a": {"reason": "same", "kind": "equivalent"},
        "b": {"reason": "why", "kind": "survivor"},
    }
    listed.write_text('[[survivor]]\nid = "b"\nreason = " "\n')
    with pytest.raises(SystemExit, match="needs a reason"):
        _equivalents(listed)
    assert SUBJECTS["batch"].equivalent_file.exists()
    assert (
        _equivalents(SUBJECTS["batch"].equivalent_file)
        .keys()
        .isdisjoint(_equivalents(SUBJECTS["executor"].equivalent_file))
    )


def test_batch_out_of_reach_mutants_are_another_python_s(tmp_path: Path) -> None:
    """The batch section's out-of-reach mutants differ only on another Python than the
    harness's: its list says so, not the recovery subject's conditions (a power loss, ...)."""
    listed = {"u": {"reason": "3.12+ only", "kind": "unreachable"}}
    results = {"u": b_verdicts("survived", "survived"), "a": b_verdicts("killed", "killed")}
    path = tmp_path / "detection.md"
    assert (
        write_batch(path, [batch_mutant("u"), batch_mutant("a")], results, equivalents=listed) == []
    )
    text = section(path.read_text(), "batch")
    assert "| kit alone | scheduling path (1) | 1 |" in text
    assert "only under a Python other than the 3.11 the harness judges on" in text
    assert "a power loss" not in text and "Reason: 3.12+ only (tests: survived)" in text
    write(tmp_path, [mutant("u")], {"u": verdicts("survived", "killed")}, equivalents=listed)
    assert "a power loss" in (tmp_path / "detection.md").read_text()


def test_batch_subject_judges_its_own_policy_code_on_a_batch_policy_factory() -> None:
    """Unlike the executor's policy stages (`POLICY_OWNED`), nothing of polyloop/batch.py is
    left to the policy subject: it mutates tools.py and policy.py only and certifies a plain
    executor (P11 is skipped there). So the batch subject keeps its deciding stages on its own
    path and its kit judge certifies them on P1-P12 through `batch_policy_factory`, which the
    kit claims as a batch policy factory (P11 is checked on it)."""
    from conformance.policy.subject import policy_parameter, takes_cap

    batch, policy = SUBJECTS["batch"], SUBJECTS["policy"]
    assert batch.left_to is None and batch.population is None
    assert "polyloop/batch.py" not in policy.modules
    assert policy.population is not None and "polyloop/batch.py" not in policy.population
    assert policy.target == "policy_factory"
    deciding = {"_Batch._decide_all", "_Batch._attempt_chain", "_Batch._deciding_busy"}
    assert deciding <= BATCH_PATH_FUNCTIONS["polyloop/batch.py"]
    assert not deciding & BATCH_OFF_PATH["polyloop/batch.py"]
    assert "P" in batch.clause_kinds
    assert policy_parameter(batch_policy_factory) is not None and takes_cap(batch_policy_factory)


def test_batch_path_functions_name_real_functions_of_batch_py() -> None:
    """Every name on the scheduling path (and off it) is a function of polyloop/batch.py, and
    every function there is classified: a renamed or new function fails this test."""
    source = (ROOT / "polyloop/batch.py").read_text(encoding="utf-8")
    functions = {name for _, _, name in _scopes(source)[0]} | {"<module>"}
    on_path = BATCH_PATH_FUNCTIONS["polyloop/batch.py"]
    off_path = BATCH_OFF_PATH["polyloop/batch.py"]
    assert on_path <= functions, sorted(on_path - functions)
    assert off_path <= functions, sorted(off_path - functions)
    assert not on_path & off_path
    assert on_path | off_path == functions, sorted(functions - on_path - off_path)
    assert "RegistryBatchExecutor.execute_batch" in on_path and "_Batch.run" in on_path
    assert batch_mutant("x").on_path and not batch_mutant("y", on_path=False).on_path
    assert PATH_FUNCTIONS.keys().isdisjoint(BATCH_PATH_FUNCTIONS)


def test_subjects_keep_their_own_files() -> None:
    executor, batch = SUBJECTS["executor"], SUBJECTS["batch"]
    assert executor.modules == ("polyloop/tools.py", "polyloop/_json.py", "polyloop/types.py")
    assert batch.modules == ("polyloop/batch.py",)
    assert executor.results.name == "results.json" and executor.logs.name == "logs"
    for field in ("results", "logs", "equivalent_file", "reach_prefix"):
        assert getattr(executor, field) != getattr(batch, field), field
    assert batch.target == "RegistryBatchExecutor" and "B" in batch.clause_kinds


# ---- the policy subject (issue 33) -----------------------------------------------------------


def test_policy_path_functions_classify_every_policy_function() -> None:
    """Every function of polyloop/policy.py is on the policy path or off it, and every function
    of polyloop/tools.py's policy section (from `# --- policy`) is on the policy path or is one
    the executor subject mutates: a renamed or new policy function fails this test."""
    policy_source = (ROOT / "polyloop/policy.py").read_text(encoding="utf-8")
    functions = {name for _, _, name in _scopes(policy_source)[0]} | {"<module>"}
    on_path = POLICY_PATH_FUNCTIONS["polyloop/policy.py"]
    off_path = POLICY_OFF_PATH["polyloop/policy.py"]
    assert not on_path & off_path
    assert on_path | off_path == functions, sorted(functions ^ (on_path | off_path))

    tools_source = (ROOT / "polyloop/tools.py").read_text(encoding="utf-8")
    section = tools_source[: tools_source.index("# --- policy")].count("\n") + 1
    tools_functions = {name for _, _, name in _scopes(tools_source)[0]}
    stages = {name for first, _, name in _scopes(tools_source)[0] if first > section}
    policy_tools = POLICY_PATH_FUNCTIONS["polyloop/tools.py"]
    off_tools = POLICY_OFF_PATH["polyloop/tools.py"]
    assert not policy_tools & off_tools
    assert policy_tools | off_tools <= tools_functions, sorted(
        (policy_tools | off_tools) - tools_functions
    )
    executor_path = PATH_FUNCTIONS["polyloop/tools.py"]
    classified = policy_tools | off_tools | executor_path
    assert stages <= classified, sorted(stages - classified)
    assert {"_decide", "_chain", "_Chain.enter", "RegistryExecutor.execute"} <= policy_tools
    # The policy subject's mutants are the policy functions only, judged on its own path.
    policy = SUBJECTS["policy"]
    assert policy.population is not None and policy.path is POLICY_PATH_FUNCTIONS
    assert set(policy.population["polyloop/tools.py"]) == policy_tools | off_tools
    assert set(policy.population["polyloop/policy.py"]) == functions


def test_policy_subject_keeps_its_own_files_and_certifies_a_policy_factory() -> None:
    from conformance.policy.subject import policy_parameter

    policy = SUBJECTS["policy"]
    for other in ("executor", "batch"):
        for field in ("results", "logs", "equivalent_file", "reach_prefix"):
            assert getattr(policy, field) != getattr(SUBJECTS[other], field), (other, field)
    assert policy.clause_kinds == "P" and policy.tests == "test_policy*.py"
    assert policy.target == policy_factory.__name__
    assert policy_parameter(policy_factory) is not None  # the kit claims it as a policy factory


def test_P3_policy_kit_judge_kills_stages_that_let_a_denial_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The policy subject's kit judge, in a forked child as a run does it: a `_decide` that
    ignores the deciders' denials fails a P clause (the test process keeps the reference)."""
    import run

    import polyloop  # noqa: F401

    monkeypatch.setattr(run, "SUBJECT", SUBJECTS["policy"])
    source = (ROOT / "polyloop/tools.py").read_text(encoding="utf-8")
    old, new = "    if denials is not None:\n", "    if denials is None:\n"
    assert source.count(old) == 1
    lets_through = Mutant(
        id="_decide::denials",
        module="polyloop/tools.py",
        operator="core/ReplaceComparisonOperator_IsNot_Is",
        occurrence=0,
        function="_decide",
        lines=(1, 1),
        diff="",
        source=source.replace(old, new),
    )
    assert lets_through.on_path and code_patches(lets_through)
    work = functools_partial(_kit_verdict, lets_through, ["P3"], live_functions())
    found = _judge(_Job(("m", "kit"), work, 300, tmp_path / "kit.log"))
    assert found["status"] == "killed" and found["clause"] == "P3", found


def _batch_replaced(old: str, new: str) -> Mutant:
    source = (ROOT / "polyloop/batch.py").read_text(encoding="utf-8")
    assert source.count(old) == 1
    return dataclasses.replace(batch_mutant(f"{old} => {new}"), source=source.replace(old, new))


def _judge(job: _Job) -> dict[str, Any]:
    found: dict[str, Any] = {}
    run_jobs([job], 1, lambda _, result: found.update(result))
    return found


def test_B7_batch_kit_judge_kills_a_scheduler_that_ignores_the_cap(tmp_path: Path) -> None:
    """The batch subject's kit judge, in a forked child as a run does it: a `_fill` that lets
    one more handler run than the cap fails B7 (the test process keeps the reference code)."""
    import polyloop  # noqa: F401

    cap = _batch_replaced("len(self.running) >= self.cap", "len(self.running) > self.cap")
    assert code_patches(cap)
    work = functools_partial(_batch_kit_verdict, cap, ["B7"], live_functions())
    found = _judge(_Job(("m", "kit"), work, 120, tmp_path / "kit.log"))
    assert found["status"] == "killed" and found["clause"] == "B7", found
    assert "len(self.running) >= self.cap" in (ROOT / "polyloop/batch.py").read_text()


def test_a_mutant_that_hangs_the_scheduler_is_ended_by_the_job_timeout(tmp_path: Path) -> None:
    """`_wait` returning at once when nothing changed spins the scheduler without yielding to
    the event loop, so no handler ever runs: the job's timeout kills the child and counts it
    `timeout`, a detection, as for the executor subject."""
    import asyncio

    import polyloop

    spin = _batch_replaced(
        "        if self.dirty:\n            self.dirty = False\n            return",
        "        if not self.dirty:\n            self.dirty = False\n            return",
    )

    def hang() -> dict[str, Any]:
        from run import patch_in_place

        assert patch_in_place(spin, live_functions())

        async def handler(arguments: dict[str, Any]) -> str:
            return "ok"

        spec = polyloop.ToolSpec(
            name="t", description="t", parameters={"type": "object"}, handler=handler
        )
        executor = polyloop.RegistryBatchExecutor(polyloop.ToolRegistry([spec]))
        call = polyloop.Action(tool_call=polyloop.ToolCall(name="t", arguments={}))
        asyncio.run(executor.execute_batch([call, call]))
        return {"status": "survived"}

    found = _judge(_Job(("m", "kit"), hang, 3, tmp_path / "hang.log"))
    assert found["status"] == "timeout", found


def test_a_batch_run_writes_its_own_section_through_main_s_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run._write`, as `main` calls it, passes the run's subject on: a batch run once wrote its
    results under the executor's markers and headings, over the executor's section."""
    import argparse

    import run

    report = tmp_path / "detection.md"
    write(tmp_path, [mutant("e")], {"e": verdicts("killed", "killed")})
    executor_text = report.read_text()
    monkeypatch.setattr(run, "SUBJECT", SUBJECTS["batch"])
    args = argparse.Namespace(report=str(report), jobs=2)
    meta = {"wall": 60.0, "reference_seconds": 1.0, "jobs": 2, "load": [[0.0], [0.0]]}
    code = run._write(
        args, [batch_mutant("b")], 1, {"b": b_verdicts("killed", "killed")}, {}, [], meta
    )
    both = report.read_text()
    assert code == 0
    assert section(both, "executor") == section(executor_text, "executor")
    assert "polyloop/batch.py" in section(both, "batch")
    assert "polyloop/batch.py" not in section(both, "executor")


# ---- the recovery subject (issue 34) ---------------------------------------------------------


def test_recovery_path_functions_classify_every_durable_function() -> None:
    """Every function of polyloop/durable/_run.py and _store.py is on the recovery path or off
    it (a renamed or new function fails this test), and the subject mutates exactly those."""
    recovery = SUBJECTS["recovery"]
    assert recovery.population is not None and recovery.path is RECOVERY_PATH_FUNCTIONS
    for module in recovery.modules:
        source = (ROOT / module).read_text(encoding="utf-8")
        functions = {name for _, _, name in _scopes(source)[0]} | {"<module>"}
        on_path, off_path = RECOVERY_PATH_FUNCTIONS[module], RECOVERY_OFF_PATH[module]
        assert not on_path & off_path
        assert on_path | off_path == functions, sorted(functions ^ (on_path | off_path))
        assert set(recovery.population[module]) == functions
    assert {"run_durable", "_run", "BatchState.__init__"} <= RECOVERY_PATH_FUNCTIONS[
        "polyloop/durable/_run.py"
    ]
    for other in ("executor", "batch", "policy"):
        for field in ("results", "logs", "equivalent_file", "reach_prefix"):
            assert getattr(recovery, field) != getattr(SUBJECTS[other], field), (other, field)


def _durable_replaced(old: str, new: str, function: str) -> Mutant:
    module = "polyloop/durable/_run.py"
    source = (ROOT / module).read_text(encoding="utf-8")
    assert source.count(old) == 1
    return Mutant(
        id=f"{module}::{function}::{old} => {new}",
        module=module,
        operator="core/test",
        occurrence=0,
        function=function,
        lines=(1, 1),
        diff="",
        source=source.replace(old, new),
    )


def test_a_mutant_reaches_the_processes_a_judge_starts(tmp_path: Path) -> None:
    """`expose_to_children`: a child Python started after it imports the mutated module, not
    the tree's (the recovery kit's lifetimes are such children); the tree is untouched."""
    import subprocess

    marked = _durable_replaced(
        '__all__ = ["BatchState", "JournalStore", "read_batch", "run_durable"]',
        '__all__ = ["BatchState", "JournalStore", "read_batch", "run_durable"]\nMUTANT_MARK = 1',
        "<module>",
    )

    def work() -> dict[str, Any]:
        expose_to_children(marked)
        code = "import polyloop.durable._run as r; print(getattr(r, 'MUTANT_MARK', 0))"
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        return {"status": "ok", "out": done.stdout.strip(), "err": done.stderr[-500:]}

    found = _judge(_Job(("m", "probe"), work, 120, tmp_path / "probe.log"))
    assert found.get("out") == "1", found
    assert "MUTANT_MARK" not in (ROOT / "polyloop/durable/_run.py").read_text(encoding="utf-8")
    assert "POLYLOOP_MUTANT" not in os.environ  # the forked judge's, not this process's


def test_J_recovery_kit_judge_kills_a_resume_that_forgets_what_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recovery subject's kit judge, in a forked child as a run does it: a `run_durable`
    that treats every uncommitted call as not started re-enters an in-doubt NEVER call in a
    fresh lifetime, which a J clause reports (the ``fast`` profile keeps this test short)."""
    import run

    monkeypatch.setattr(run, "SUBJECT", SUBJECTS["recovery"])
    monkeypatch.setattr(run, "RECOVERY_PROFILE", "fast")
    forgets = _durable_replaced("if state.started_counts[i]]", "if False]", "run_durable")
    clauses = [f"J{n}" for n in range(1, 14) if n != 12]
    work = functools_partial(_recovery_kit_verdict, forgets, clauses, [])
    found = _judge(_Job(("m", "kit"), work, 900, tmp_path / "kit.log"))
    assert found["status"] == "killed" and found["clause"] in clauses, found


def test_executor_subject_leaves_the_policy_stages_to_the_policy_subject() -> None:
    """A policy stage of polyloop/tools.py is mutated once, by the policy subject; execute,
    on both paths, by both."""
    executor = SUBJECTS["executor"]
    assert executor.left_to is not None
    left = executor.left_to["polyloop/tools.py"]
    assert {"_decide", "_Chain.enter", "_policed", "_Track.__init__"} <= left
    assert "RegistryExecutor.execute" not in left
    assert not left & PATH_FUNCTIONS["polyloop/tools.py"]
    policy = SUBJECTS["policy"]
    assert policy.population is not None
    assert left <= policy.population["polyloop/tools.py"]


def test_executor_population_drops_the_policy_stages_and_keeps_execute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import run

    monkeypatch.setattr(run, "SUBJECT", SUBJECTS["executor"])
    stage = dataclasses.replace(mutant("stage"), function="_decide")
    entry = mutant("entry")
    json_helper = dataclasses.replace(mutant("thaw"), module="polyloop/_json.py", function="thaw")
    assert run._population([stage, entry, json_helper]) == [entry, json_helper]
    monkeypatch.setattr(run, "SUBJECT", SUBJECTS["policy"])
    assert run._population([stage, entry, json_helper]) == [stage, entry]
