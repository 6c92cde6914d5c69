"""`ExecutorContract`: one pytest test per clause, named and documented by its ID."""

from __future__ import annotations

import re
from pathlib import Path

from _subprocesses import run_pytest

from conformance.contract import ExecutorContract
from conformance.engine import CERTIFIED_CLAUSES

HERE = Path(__file__).parent

GREEN = """
from conformance import ExecutorContract
from polyloop import RegistryExecutor


class TestReference(ExecutorContract):
    level = "strict"
    profile = "quick"
    seed = 7

    @staticmethod
    def make_executor(registry):
        return RegistryExecutor(registry)


class TestReferenceAtCore(TestReference):
    level = "core"
"""

RED = """
from conformance import ExecutorContract
from zoo.runner import ClaimsCompletion


class TestClaimsCompletion(ExecutorContract):
    profile = "quick"
    seed = 7
    expected_failures = {"E1": "stale: E1 passes"}

    @staticmethod
    def make_executor(registry):
        return ClaimsCompletion(registry)


class TestForgotTheFactory(ExecutorContract):
    pass
"""


def test_every_certified_clause_is_a_test_method_named_and_documented_by_its_id() -> None:
    tests = {
        name: getattr(ExecutorContract, name)
        for name in dir(ExecutorContract)
        if name.startswith("test_")
    }
    assert len(tests) == len(CERTIFIED_CLAUSES)
    for clause in CERTIFIED_CLAUSES:
        [name] = [n for n in tests if re.match(rf"test_{clause}_[a-z0-9_]+$", n)]
        assert tests[name].__doc__.startswith(f"{clause} ")


def test_a_subclass_for_the_reference_executor_runs_green(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, GREEN, module="test_contract_subject.py")
    assert done.returncode == 0, done.stdout + done.stderr
    # 23 clauses at strict; at core the 4 hardening clauses are not collected and 19 pass.
    assert re.search(r"\b42 passed in\b", done.stdout), done.stdout
    assert "TestReference::test_E4_any_other_handler_exception" in done.stdout


def test_a_broken_executor_fails_exactly_its_clause_with_the_report(tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path, RED, "-k", "E7 or E1 or E5 or Forgot and E2", module="test_contract_subject.py"
    )
    assert done.returncode == 1
    out = done.stdout
    assert "FAILED test_contract_subject.py::TestClaimsCompletion::test_E7_" in out
    assert "PASSED test_contract_subject.py::TestClaimsCompletion::test_E5_" in out
    # A stale expected failure fails; a missing factory is a clear failure.
    assert "FAILED test_contract_subject.py::TestClaimsCompletion::test_E1_" in out
    assert "remove E1 from the expected-failures list" in out
    assert "FAILED test_contract_subject.py::TestForgotTheFactory::test_E2_" in out
    assert "must define make_executor" in out
    assert "env_reported_completion is True" in out
