"""The kit's layout (issues 20, 30): subjects over one core, the entry points and the command line
above them, no import circle, and no subject named outside its own package.

Layers, lowest first (an import may only go to the same layer or a lower one):

1. ``conformance._core``: what every subject shares (catalog records, report, generation of
   valid arguments, JSON Schema ground truth, deadlines, text);
2. the subjects, each its own package with the same inner shape (catalog rows -> properties ->
   checks and traps -> harness) and a ``subject`` module implementing the `Subject` protocol
   (`conformance._core.subject`): those `conformance.subjects` registers, today
   ``conformance.executor`` (V, E), ``conformance.batch`` (B) and ``conformance.tools`` (H). A
   subject imports no other subject;
3. the kit's entry points over the subjects: the package itself, ``subjects`` (the registry),
   ``catalog`` (every row in contract order), ``engine`` (`certify`), ``contract`` (the pytest
   base classes), ``docs``, ``profiles``;
4. the command line (``conformance.cli``) and the public façades ``conformance.toolcheck`` and
   ``conformance.strategies``.

Every import statement counts, at module level, inside a function or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance import subjects as registry
from conformance._core.subject import PARTS, Subject, missing_parts
from conformance._core.wording import DEFAULT_SUBJECT

KIT = Path(__file__).resolve().parents[2] / "conformance"
SUBJECTS = registry.REGISTERED


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(root: Path = KIT) -> dict[str, set[str]]:
    """Module -> the kit modules it imports (a name imported from a package counts as the
    submodule when there is one of that name)."""
    modules = _modules(root)

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                if base.split(".")[0] != root.name:
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    edges.add(full if full in modules else known(base))
            elif isinstance(node, ast.Import):
                edges.update(known(a.name) for a in node.names if a.name.split(".")[0] == root.name)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer(module: str) -> tuple[int, str]:
    """(rank, name) of a kit module's layer."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top in ("_core", "_extra"):
        return 1, "core"
    if top in SUBJECTS:
        return 2, top
    if top in ("cli", "toolcheck", "strategies", "__main__"):
        return 4, "command line"
    return 3, "entry points"


def layer_breaches(graph: Mapping[str, set[str]]) -> list[str]:
    breaches = []
    for module, imports in sorted(graph.items()):
        rank, name = layer(module)
        for imported in sorted(imports):
            other_rank, other_name = layer(imported)
            if other_rank > rank:
                breaches.append(f"{module} ({name}) imports {imported} ({other_name}), a layer up")
            elif rank == other_rank == 2 and name != other_name:
                breaches.append(f"{module} imports {imported}: subject {name} uses {other_name}")
    return breaches


def test_the_kit_has_no_import_circle() -> None:
    assert cycles(import_graph()) == []


def test_no_import_runs_up_a_layer_and_no_subject_imports_another() -> None:
    assert layer_breaches(import_graph()) == []


def test_the_checks_see_a_circle_and_a_breach() -> None:
    """The two checks above can fail: a made-up graph with each defect."""
    graph = {
        "conformance._core.text": {"conformance.cli"},  # up from the core
        "conformance.cli": {"conformance.docs"},
        "conformance.docs": {"conformance.cli"},  # docs <-> cli, the old circle
        "conformance.batch.run": {"conformance.executor.search"},  # one subject uses another
    }
    assert cycles(graph) == [["conformance.cli", "conformance.docs"]]
    assert layer_breaches(graph) == [
        "conformance._core.text (core) imports conformance.cli (command line), a layer up",
        "conformance.batch.run imports conformance.executor.search: subject batch uses executor",
        "conformance.docs (entry points) imports conformance.cli (command line), a layer up",
    ]


def test_the_graph_reads_function_level_and_relative_imports(tmp_path: Path) -> None:
    package = tmp_path / "conformance"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from conformance import cli\n")
    (package / "cli.py").write_text("import conformance.sub.b\n")
    graph = import_graph(package)
    assert graph["conformance.sub"] == {"conformance.sub.b"}
    assert graph["conformance.sub.b"] == {"conformance.cli"}
    assert graph["conformance.cli"] == {"conformance.sub.b"}
    assert cycles(graph) == [["conformance.cli", "conformance.sub.b"]]


@pytest.mark.parametrize("subject", SUBJECTS)
def test_each_subject_has_the_same_inner_shape(subject: str) -> None:
    """Catalog rows, then one property (or check) per clause, then the harness."""
    package = KIT / subject
    assert (package / "rows.py").is_file()
    assert (
        (package / "properties").exists()
        or (package / "properties.py").exists()
        or (package / "clauses.py").is_file()
    )
    rows = importlib.import_module(f"conformance.{subject}.rows").ROWS
    assert {row.section for row in rows} == set(registry.by_name(subject).headings)


def test_the_catalog_is_the_subjects_rows_in_contract_order() -> None:
    from conformance import catalog
    from conformance._core.catalog import LIBRARY_ROWS

    rows = {name: importlib.import_module(f"conformance.{name}.rows").ROWS for name in SUBJECTS}
    assert all(registry.by_name(name).rows == rows[name] for name in SUBJECTS)
    assert sorted(catalog.CLAUSES, key=lambda c: c.id) == sorted(
        LIBRARY_ROWS + tuple(row for name in SUBJECTS for row in rows[name]), key=lambda c: c.id
    )
    order = [catalog.SECTIONS.index(clause.section) for clause in catalog.CLAUSES]
    assert order == sorted(order)
    assert [c.id for c in catalog.CLAUSES[:2]] == ["S1", "S2"]
    assert catalog.CLAUSES[-1].section == catalog.SECTIONS[-1]  # today B18, section 10


def test_documented_import_paths_keep_working() -> None:
    """The public names the README and docs/ show, at the paths they show them."""
    import conformance
    from conformance.catalog import LEVELS
    from conformance.cli import main
    from conformance.contract import BatchExecutorContract, ExecutorContract
    from conformance.docs import contract_markdown
    from conformance.profiles import hypothesis_settings
    from conformance.toolcheck import (
        ToolContract,
        ToolDraft,
        add_check_tools_command,
        check_registry,
        check_tool,
        load_tool_file,
        tool_property,
    )

    assert conformance.ToolContract is ToolContract
    assert conformance.check_tool is check_tool and conformance.check_registry is check_registry
    assert conformance.ExecutorContract is ExecutorContract
    assert conformance.BatchExecutorContract is BatchExecutorContract
    assert LEVELS == ("core", "strict", "hardened")
    for value in (
        main,
        contract_markdown,
        hypothesis_settings,
        ToolDraft,
        add_check_tools_command,
        load_tool_file,
        tool_property,
    ):
        assert callable(value)


def test_the_public_strategies_keep_their_documented_import_path() -> None:
    """`conformance.strategies` (documented as public) names the executor subject's strategies."""
    import conformance.executor.strategies as subject
    import conformance.strategies as facade

    assert facade.__all__ == subject.__all__ and "tool_schemas" in facade.__all__
    for name in facade.__all__:
        assert getattr(facade, name) is getattr(subject, name), name


# --- issue 30, item 1: one Subject protocol, subjects known only through the registry -----------

GENERIC = (
    KIT / "engine.py",
    KIT / "_core" / "report.py",
    KIT / "docs.py",
    KIT / "catalog.py",
    *sorted((KIT / "cli").glob("*.py")),
    KIT.parent / "polyloop" / "_pytest_plugin.py",
)
"""The engine, the report, the docs generator, the catalog, the command line and the pytest
plugin: they loop over `conformance.subjects` and name no subject."""


def _keys(tree: ast.AST) -> set[int]:
    """ids of the constants used as a mapping key (``data["tools"]``, ``{"tools": ...}``): a
    JSON field that happens to share a subject's name, not the subject."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif isinstance(node, ast.Dict):
            keys.update(id(key) for key in node.keys if key is not None)
    return keys


def subjects_named(
    source: str, names: Iterable[str], certified: Iterable[str], where: str = "<source>"
) -> list[str]:
    """Where `source` names a subject: a string equal to a subject's name (``subject ==
    "batch"``, a default ``"executor"``), or an import of a subject's package. A subject that
    ``certify`` does not take (tools) has its own command, which the command line may import;
    no subject ``certify`` takes may be imported."""
    names, certified = set(names), set(certified)
    tree = ast.parse(source)
    keys = _keys(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in keys:
            found.append(f"{where}:{node.lineno} names subject {node.value!r}")
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if len(parts) > 1 and parts[0] == "conformance" and parts[1] in certified:
                found.append(
                    f"{where}:{getattr(node, 'lineno', 0)} imports subject {parts[1]} ({module})"
                )
                break
    return found


def test_30_no_subject_is_named_in_the_engine_cli_report_docs_or_plugin() -> None:
    names = [subject.name for subject in registry.SUBJECTS]
    certified = [subject.name for subject in registry.certified()]
    found = [
        line
        for path in GENERIC
        for line in subjects_named(
            path.read_text(encoding="utf-8"), names, certified, str(path.relative_to(KIT.parent))
        )
    ]
    assert found == []


def test_30_the_name_check_sees_a_comparison_a_default_and_an_import() -> None:
    """The check above can fail: the shapes the engine, CLI and report had before issue 30."""
    source = """
from conformance.batch.subject import is_batch_target
def f(subject: str = "executor", data: dict = {}):
    if subject == "batch":
        return data["tools"], {"tools": 1}
    import conformance.tools.report
"""
    assert subjects_named(source, ["executor", "batch", "tools"], ["executor", "batch"]) == [
        "<source>:2 imports subject batch (conformance.batch.subject)",
        "<source>:3 names subject 'executor'",
        "<source>:4 names subject 'batch'",
    ]
    # a subject certify takes may not be imported either
    assert subjects_named(source, ["tools"], ["tools"]) == [
        "<source>:6 imports subject tools (conformance.tools.report)"
    ]


@pytest.mark.parametrize("name", SUBJECTS)
def test_30_every_registered_subject_has_every_part_of_the_protocol(name: str) -> None:
    subject = registry.by_name(name)
    assert missing_parts(subject) == []
    assert isinstance(subject, Subject)
    assert (KIT / name / "subject.py").is_file()
    assert subject.clauses and set(subject.clauses) <= {row.id for row in subject.rows}
    assert {row.section for row in subject.rows} == set(subject.headings)
    assert set(subject.checked_by) <= set(subject.entry_points) | {
        n for s in registry.SUBJECTS for n in s.entry_points
    }
    assert registry.chain(subject)[-1] is subject
    if subject.through is not None:
        assert registry.by_name(subject.through).certified


def test_30_the_protocol_check_sees_a_missing_part() -> None:
    """`missing_parts` and the registry's loader fail for a subject lacking any part."""
    whole = registry.DEFAULT
    for part in PARTS:
        fake = types.SimpleNamespace(**{p: getattr(whole, p) for p in PARTS if p != part})
        assert missing_parts(fake) == [part], part
    not_callable = types.SimpleNamespace(**{p: getattr(whole, p) for p in PARTS})
    not_callable.search = "search"
    assert missing_parts(not_callable) == ["search"]


def test_30_the_registry_refuses_a_subject_lacking_a_part(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = registry.DEFAULT
    fake: Any = types.SimpleNamespace(**{p: getattr(whole, p) for p in PARTS if p != "reproduce"})
    fake.name = "fake"
    module = types.ModuleType("conformance.fake.subject")
    module.SUBJECT = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "conformance.fake", types.ModuleType("conformance.fake"))
    monkeypatch.setitem(sys.modules, "conformance.fake.subject", module)
    with pytest.raises(TypeError, match=r"conformance\.fake\.subject\.SUBJECT lacks reproduce"):
        registry._load("fake")
    fake.reproduce = whole.reproduce
    assert registry._load("fake") is fake


def test_30_the_default_subject_is_the_first_registered() -> None:
    assert registry.DEFAULT.name == DEFAULT_SUBJECT == SUBJECTS[0]
    assert registry.DEFAULT.through is None and registry.DEFAULT.certified
