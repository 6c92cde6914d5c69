"""`ToolContract`: the tool checks as a pytest base class, one test per H clause per tool.

Its tests are generated from the catalog's rows for the tool clauses, the way `ExecutorContract`'s
are from the executor clauses: a new clause in the catalog (and in `clauses.CHECKS`) gets its test
here without an edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase

from conformance._core.catalog import index, lookup
from conformance._core.clause_tests import add_clause_tests
from conformance._core.limits import HANDLER_DEADLINE
from conformance._core.options import contract_options
from conformance._core.text import slug
from conformance.tools.clauses import check_one
from conformance.tools.engine import INHERIT, run_settings
from conformance.tools.inputs import Tool, as_items, normalise
from conformance.tools.report import ToolReport
from conformance.tools.rows import ROWS

_ROWS = index(ROWS)

__all__ = ["ToolContract", "failure_text", "test_name"]


class ToolContract:
    """Subclass in a test module to check your tools: one test per H clause per tool.

    ```python
    class TestMyTools(ToolContract):
        replay = True                       # opt into H6 for SAFE tools
        fail_on_raise = True                # a handler raising on valid arguments fails H4

        def make_registry(self):
            return build_registry()         # or set `tools = [spec, ...]` instead
    ```

    The tests are parametrized over the tool names (`test_H4_...[search]`), run under
    pytest-xdist like any test, and read the plugin's `--conformance-profile`,
    `--conformance-seed` and `--conformance-db` options (class attributes otherwise).
    """

    tools: Any = None
    """The tools: a ToolRegistry, or an iterable of ToolSpecs/ToolDrafts/definitions."""
    replay: bool = False
    """Run H6 (replay a SAFE tool's calls and compare)."""
    deadline: float = HANDLER_DEADLINE
    examples: int | None = None
    """Generated calls per tool for H4; None: the profile's `max_examples`."""
    profile: str = "ci"
    seed: int | None = None
    fail_on_raise: bool = False
    """A handler raising an `Exception` on valid generated arguments fails H4 (by default it is
    an observation the report counts), as `check_tool(..., fail_on_raise=True)`."""

    def make_registry(self) -> Any:
        """Return the tools to check; by default, the `tools` attribute."""
        if self.tools is None:
            raise NotImplementedError(
                f"{type(self).__name__} must set `tools` or override make_registry()"
            )
        return self.tools

    def _contract_tools(self) -> list[Tool]:
        items, registry = as_items(self.make_registry())
        return normalise(items, registry)

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "tool_name" in metafunc.fixturenames:
            labels = [tool.label for tool in self._contract_tools()]
            metafunc.parametrize("tool_name", labels, ids=labels)

    def _check_clause(self, clause: str, tool_name: str, request: Any) -> None:
        import pytest

        options = contract_options(request)
        database: Any = INHERIT
        if options.database is not None:
            database = DirectoryBasedExampleDatabase(options.database)
        seed = self.seed if options.seed is None else options.seed
        run = run_settings(
            self.examples,
            self.deadline,
            seed,
            database,
            options.profile or self.profile,
            fail_on_raise=self.fail_on_raise,
        )
        tools = {tool.label: tool for tool in self._contract_tools()}
        report = check_one(tools[tool_name], frozenset({clause}), run, self.replay)
        status = report.statuses[clause]
        if status == "skipped":
            pytest.skip(f"{clause}: {report.reasons[clause]}")
        if status == "fail":
            pytest.fail(failure_text(report, clause), pytrace=False)


def failure_text(report: ToolReport, clause: str) -> str:
    """A failed test's message: first the clause, the tool and the first finding (what a JUnit
    page shows), then the tool's full summary."""
    findings = report.findings_for(clause)
    verdict = f"{findings[0].message}; {findings[0].fix}" if findings else "failed"
    return f"{clause} fail for tool {report.tool!r}: {verdict}\n\n{report.summary()}"


_TEST_NAMES = {
    "H1": "handler_is_async",
    "H2": "parameters_is_a_valid_object_schema",
    "H3": "schema_is_satisfiable",
    "H4": "generated_calls_validate_and_handler_behaves",
    "H5": "model_schema_survives_json_round_trip",
    "H6": "safe_tool_replays_to_same_observation",
}
"""The test names published before the tests were generated; a new clause's test is named from
its catalog title."""


def test_name(clause_id: str) -> str:
    """``test_<ID>_<words>`` for a tool clause."""
    words = _TEST_NAMES.get(clause_id) or slug(lookup(_ROWS, clause_id).title)
    return f"test_{clause_id}_{words}"


def _clause_test(clause_id: str) -> Callable[[ToolContract, str, Any], None]:
    def test(self: ToolContract, tool_name: str, request: Any) -> None:
        self._check_clause(clause_id, tool_name, request)

    return test


add_clause_tests(
    ToolContract,
    ROWS,
    _clause_test,
    name=lambda clause: test_name(clause.id),
    doc=lambda clause: f"{clause.id}: {clause.title}.\n\n{clause.summary}",
)
