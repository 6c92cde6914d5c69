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

`BatchExecutorContract` does the same for a batch executor::

    from conformance import BatchExecutorContract

    class TestMyScheduler(BatchExecutorContract):
        level = "strict"

        @staticmethod
        def make_executor(registry, *, max_concurrency):
            return MyScheduler(registry, max_concurrency=max_concurrency)

The kit calls ``make_executor(registry, max_concurrency=N)`` with the cap each schedule is
played with. Every clause a batch certification checks becomes its own test: B1–B18, and the
V and E clauses through one-call batches (B4), named and run as in `ExecutorContract`.

`PolicyContract` does the same for a runtime's tool-call policy (P1-P12)::

    class TestMyPolicy(PolicyContract):
        @staticmethod
        def make_executor(registry, policy):
            return MyRuntime(registry, hooks=hooks_from(policy))

These base classes sit above the subjects (they call `conformance.engine.certify`), beside the
command line.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import pytest

from conformance import catalog
from conformance._core.clause_tests import add_clause_tests
from conformance._core.limits import EXECUTE_DEADLINE
from conformance._core.options import contract_options
from conformance._core.report import ClauseResult, Report
from conformance._core.text import slug
from conformance.batch import BATCH_CLAUSES
from conformance.catalog import LEVELS
from conformance.engine import CERTIFIED_CLAUSES, SetUpError, certify
from conformance.policy import POLICY_CLAUSES
from conformance.recovery import RECOVERY_CLAUSES
from polyloop import ActionExecutor, BatchExecutor, ToolRegistry

__all__ = ["BatchExecutorContract", "ExecutorContract", "PolicyContract", "RecoveryContract"]


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
    _CLAUSES: ClassVar[tuple[str, ...]] = CERTIFIED_CLAUSES
    """The clauses this base class has a test for."""

    @staticmethod
    def make_executor(registry: ToolRegistry) -> ActionExecutor:
        """Return a fresh executor serving `registry` (override this)."""
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the class attributes when the class is created, so a wrong set-up is one
        error at collection instead of a failure per clause; and on a ``core`` class, leave
        out the tests of strict clauses (rather than collect and skip them)."""
        super().__init_subclass__(**kwargs)
        _check_set_up(cls)
        for clause_id in cls._CLAUSES:
            clause = catalog.get(clause_id)
            if clause.level != "core":
                name = _test_name(clause)
                base = next((k for k in cls.__mro__ if k.__dict__.get(name)), None)
                if base is None:
                    continue  # a base class whose clause tests are added after it is made
                # None: pytest collects nothing; a strict subclass of a core class gets them back.
                setattr(cls, name, None if cls.level == "core" else base.__dict__[name])

    def _check_clause(self, clause_id: str, request: pytest.FixtureRequest) -> None:
        cls = type(self)
        if any(cls.make_executor is k.make_executor for k in _BASES):
            pytest.fail(
                f"{cls.__name__} must define make_executor({_SIGNATURE[cls._CLAUSES]}) as a "
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
        try:
            report = self._certify(clause_id, level, profile, seed, options.database)
        except SetUpError as exc:
            pytest.fail(f"{cls.__name__}: {exc}", pytrace=False)
        self._judge(report, clause_id, request, profile, options.level)

    def _certify(
        self, clause_id: str, level: str, profile: str, seed: int | None, database: str | None
    ) -> Report:
        cls = type(self)
        reasons = {k: v for k, v in cls.expected_failures.items() if k == clause_id}
        return certify(
            cls.make_executor,
            level=level,
            profile=profile,
            seed=seed,
            only=[clause_id],
            expected_failures=reasons or None,
            deadline=cls.deadline,
            database=database,
            target_name=f"{cls.__module__}:{cls.__qualname__}.make_executor",
        )

    def _judge(
        self,
        report: Report,
        clause_id: str,
        request: pytest.FixtureRequest,
        profile: str,
        level_option: str | None,
    ) -> None:
        result = report.result(clause_id)
        if result.status == "skipped":
            pytest.skip(result.message or "skipped")
        if result.status == "xfail":
            pytest.xfail(result.expected_failure or "expected failure")
        if result.status != "pass":
            rerun = pytest_reproduce_line(request.node.nodeid, report.seed, profile, level_option)
            pytest.fail(
                failure_text(report, dataclasses.replace(result, reproduce=rerun)), pytrace=False
            )


def pytest_reproduce_line(nodeid: str, seed: int, profile: str, level: str | None) -> str:
    """The pytest command that reruns one generated test with the same seed and profile."""
    line = f"pytest '{nodeid}' --conformance-seed {seed} --conformance-profile {profile}"
    return line if level is None else f"{line} --conformance-level {level}"


def failure_text(report: Report, result: ClauseResult) -> str:
    """A failed test's message: first the clause and its one-line verdict (what a JUnit page
    shows), then the report with `result` in it."""
    lines = (result.message or "").strip().splitlines()
    first = lines[0] if lines else result.status
    head = f"{result.id} {result.status}: {result.title}: {first}"
    return head + "\n\n" + dataclasses.replace(report, results=(result,)).to_text()


def _check_set_up(cls: type[ExecutorContract]) -> None:
    """TypeError/ValueError naming what is wrong with a contract class's attributes."""
    name = cls.__qualname__
    if cls.level not in LEVELS:
        raise ValueError(
            f"{name}.level is {cls.level!r}; choose one of {', '.join(repr(x) for x in LEVELS)}"
        )
    reasons = cls.expected_failures
    if not isinstance(reasons, Mapping):
        raise TypeError(f"{name}.expected_failures must be a dict of clause ID -> reason")
    for clause_id, reason in reasons.items():
        if clause_id not in cls._CLAUSES:
            raise ValueError(
                f"{name}.expected_failures names {clause_id!r}, which is not a clause the "
                f"contract tests check; they check {', '.join(cls._CLAUSES)}"
            )
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{name}.expected_failures[{clause_id!r}] needs a reason (a string)")
    declared = cls.__dict__.get("make_executor")
    if inspect.isfunction(declared) and _takes_self(declared, cls._CLAUSES != CERTIFIED_CLAUSES):
        raise TypeError(
            f"{name}.make_executor is a plain method; declare it with @staticmethod "
            f"(it receives {_RECEIVES[cls._CLAUSES]}: `def make_executor("
            f"{_SIGNATURE[cls._CLAUSES]})`)"
        )


def _takes_self(function: Callable[..., Any], batch: bool = False) -> bool:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if batch:  # make_executor(registry, max_concurrency=10) is a fine batch factory
        return bool(positional) and positional[0].name in ("self", "cls")
    return bool(positional) and (positional[0].name in ("self", "cls") or len(positional) >= 2)


def _test_name(clause: catalog.Clause) -> str:
    return f"test_{clause.id}_{slug(clause.title)}"


def _clause_test(clause_id: str) -> Callable[[ExecutorContract, pytest.FixtureRequest], None]:
    def test(self: ExecutorContract, request: pytest.FixtureRequest) -> None:
        self._check_clause(clause_id, request)

    return test


_BASES: list[type[ExecutorContract]] = []
"""The base classes (a subclass that defines no make_executor of its own is not set up)."""
_SIGNATURE: dict[tuple[str, ...], str] = {}
_RECEIVES: dict[tuple[str, ...], str] = {}


def _register(
    base: type[ExecutorContract],
    tested: tuple[str, ...],
    signature: str,
    receives: str,
    *,
    executor_clauses: bool = True,
) -> None:
    """Make `base` a contract base class: one test per clause of `tested` (its own clauses,
    beyond those it inherits), `make_executor`'s expected `signature` and what it `receives`
    for the set-up error; without `executor_clauses` the inherited V/E tests are switched off
    (a policy factory or a durable runtime is certified on its own clauses only)."""
    if not executor_clauses:
        for clause_id in CERTIFIED_CLAUSES:
            setattr(base, _test_name(catalog.get(clause_id)), None)
    _BASES.append(base)
    _SIGNATURE[base._CLAUSES] = signature
    _RECEIVES[base._CLAUSES] = receives
    add_clause_tests(
        base,
        [catalog.get(clause_id) for clause_id in tested],
        _clause_test,
        name=_test_name,
        doc=lambda clause: f"{clause.id} ({clause.level}): {clause.title}.\n\n{clause.summary}",
    )


_register(ExecutorContract, CERTIFIED_CLAUSES, "registry", "only the registry")


_ALL = CERTIFIED_CLAUSES + BATCH_CLAUSES


class BatchExecutorContract(ExecutorContract):
    """Base class for a pytest test class certifying a batch executor (white-box)."""

    _CLAUSES: ClassVar[tuple[str, ...]] = _ALL

    @staticmethod
    def make_executor(registry: ToolRegistry, **kwargs: Any) -> BatchExecutor:  # type: ignore[override]
        """Return a fresh batch executor serving `registry` with ``max_concurrency`` (a
        keyword argument) as its cap (override this)."""
        raise NotImplementedError


_register(
    BatchExecutorContract,
    BATCH_CLAUSES,
    "registry, *, max_concurrency",
    "the registry and max_concurrency=",
)


class PolicyContract(ExecutorContract):
    """Base class for a pytest test class certifying a tool-call policy runtime (P1-P12)."""

    _CLAUSES: ClassVar[tuple[str, ...]] = POLICY_CLAUSES

    @staticmethod
    def make_executor(registry: ToolRegistry, policy: Any) -> ActionExecutor:  # type: ignore[override]
        """Return a fresh executor serving `registry` under `policy`, a `ToolPolicy` mapped
        onto the runtime's own hooks (override this)."""
        raise NotImplementedError


_register(
    PolicyContract,
    POLICY_CLAUSES,
    "registry, policy",
    "the registry and the policy",
    executor_clauses=False,  # a policy factory is certified on P1-P12 only
)


class RecoveryContract(ExecutorContract):
    """Base class for a pytest test class certifying a durable runtime (section 12, J1-J13).

    ``make_executor(registry, directory)`` returns the runtime (an object with ``async
    run(batch_id, actions)``); declare it with ``@staticmethod`` in a module a fresh process can
    import: the kit runs every lifetime in a child process that imports it. The clauses share
    their lifetimes, so the first test pays for all of them."""

    _CLAUSES: ClassVar[tuple[str, ...]] = RECOVERY_CLAUSES

    @staticmethod
    def make_executor(registry: ToolRegistry, directory: str) -> Any:  # type: ignore[override]
        """Return the durable runtime serving `registry`, keeping its journal in `directory`
        (override this)."""
        raise NotImplementedError


_register(
    RecoveryContract,
    RECOVERY_CLAUSES,
    "registry, directory",
    "the registry and the directory",
    executor_clauses=False,  # a durable runtime is not an action executor
)
