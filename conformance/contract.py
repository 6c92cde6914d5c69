"""`ExecutorContract`: the contract as a pytest base class, one test per clause.

Subclass it in a test module and provide the executor factory::

    from conformance import ExecutorContract

    class TestMyExecutor(ExecutorContract):
        level = "strict"

        @staticmethod
        def make_executor(registry):
            return MyExecutor(registry)

Every clause `certify` checks becomes its own test, ``test_<ID>_<title>``, whose docstring
starts with the clause ID, so ``pytest -k E4`` runs one clause and a failure names it. Each test
runs that clause's property with the same machinery as `certify`, so a failure shows the minimal
counterexample and a reproduction line. The pytest plugin's ``--conformance-profile``,
``--conformance-level`` and ``--conformance-seed`` options override the class attributes, and
``--conformance-db`` names a shared Hypothesis example database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

import pytest

from conformance import catalog
from conformance._core.clause_tests import add_clause_tests
from conformance._core.limits import EXECUTE_DEADLINE
from conformance._core.options import contract_options
from conformance._core.text import slug
from conformance.engine import CERTIFIED_CLAUSES, certify
from polyloop import ActionExecutor, ToolRegistry

__all__ = ["ExecutorContract"]


class ExecutorContract:
    """Base class for a pytest test class certifying an action executor (white-box)."""

    level: ClassVar[str] = "strict"
    """``core`` (design 0008's clauses) or ``strict`` (plus the [H] hardening)."""
    profile: ClassVar[str] = "ci"
    seed: ClassVar[int | None] = None
    deadline: ClassVar[float] = EXECUTE_DEADLINE
    """Seconds each ``execute`` call may take."""
    expected_failures: ClassVar[Mapping[str, str]] = {}
    """Clause ID -> why it is known to fail: reported as xfail; passing again fails the test."""

    @staticmethod
    def make_executor(registry: ToolRegistry) -> ActionExecutor:
        """Return a fresh executor serving `registry` (override this)."""
        raise NotImplementedError

    def _check_clause(self, clause_id: str, request: pytest.FixtureRequest) -> None:
        cls = type(self)
        if cls.make_executor is ExecutorContract.make_executor:
            pytest.fail(
                f"{cls.__name__} must define make_executor(registry) as a "
                "staticmethod returning the executor to certify",
                pytrace=False,
            )
        options = contract_options(request)
        level = options.level or cls.level
        profile = options.profile or cls.profile
        seed = cls.seed if options.seed is None else options.seed
        clause = catalog.get(clause_id)
        if level == "core" and clause.level != "core":
            pytest.skip(f"{clause_id} is a strict ([H]) clause and the level is core")
        reasons = {k: v for k, v in cls.expected_failures.items() if k == clause_id}
        report = certify(
            cls.make_executor,
            level=level,
            profile=profile,
            seed=seed,
            only=[clause_id],
            expected_failures=reasons or None,
            deadline=cls.deadline,
            database=options.database,
            target_name=f"{cls.__module__}:{cls.__qualname__}.make_executor",
        )
        result = report.result(clause_id)
        if result.status == "skipped":
            pytest.skip(result.message or "skipped")
        if result.status == "xfail":
            pytest.xfail(result.expected_failure or "expected failure")
        if result.status != "pass":
            pytest.fail(report.to_text(), pytrace=False)


def _clause_test(clause_id: str) -> Callable[[ExecutorContract, pytest.FixtureRequest], None]:
    def test(self: ExecutorContract, request: pytest.FixtureRequest) -> None:
        self._check_clause(clause_id, request)

    return test


add_clause_tests(
    ExecutorContract,
    CERTIFIED_CLAUSES,
    _clause_test,
    name=lambda clause: f"test_{clause.id}_{slug(clause.title)}",
    doc=lambda clause: f"{clause.id} ({clause.level}): {clause.title}.\n\n{clause.summary}",
)
