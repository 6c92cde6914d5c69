"""polyloop's pytest plugin (entry point ``pytest11``): the conformance kit's options and marker.

pytest loads this module in every run of every project where polyloop is installed, with or
without the ``conformance`` extra, and a downstream project may have its own top-level
``conformance`` package. So at start-up it imports nothing but pytest and the standard library,
and never imports the name ``conformance``; it only registers:

- ``--conformance-profile quick|ci|thorough``: the kit profile whose Hypothesis settings the
  contract tests use;
- ``--conformance-level core|strict``: the clauses ``ExecutorContract`` checks;
- ``--conformance-seed N``: reproduce a run;
- ``--conformance-db PATH``: a shared Hypothesis example database (a directory), so every
  counterexample any worker finds is replayed by all of them next time;
- the ``conformance`` marker (``-m "not conformance"`` deselects the contract tests);
- the ``conformance_options`` fixture;
- a hint on a failed import of the kit when a project's own module (a ``tests/conformance.py``)
  has taken its name, naming that file.

The kit loads lazily: a contract test module imports it itself (``from conformance import
ExecutorContract``), and once it is loaded the plugin registers the kit's profiles with
Hypothesis as ``polyloop-quick``, ``polyloop-ci`` and ``polyloop-thorough``, so a project's own
Hypothesis tests can use them. ``--hypothesis-profile polyloop-<name>`` loads the kit before
Hypothesis's own plugin reads that option. Nothing here changes a global setting: the options
reach only the contract classes, which read them through ``request.config.getoption``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["LEVELS", "PROFILES", "ConformanceOptions", "conformance_options"]

PROFILES = ("fast", "quick", "ci", "thorough")
"""The kit's profile names (`conformance.profiles.PROFILES`; a test keeps the two equal)."""
LEVELS = ("core", "strict", "hardened")
"""The kit's levels (`conformance.catalog.LEVELS`; a test keeps the two equal)."""

_PROFILE_PREFIX = "polyloop-"
# The kit is installed next to this package, from the same distribution.
_KIT_DIR = Path(__file__).resolve().parent.parent / "conformance"


@dataclass(frozen=True, kw_only=True)
class ConformanceOptions:
    """The plugin's command-line options; `None` where the option was not given."""

    profile: str | None
    level: str | None
    seed: int | None
    database: str | None
    """The `--conformance-db` directory."""

    @classmethod
    def from_config(cls, config: pytest.Config) -> ConformanceOptions:
        return cls(
            profile=config.getoption("conformance_profile"),
            level=config.getoption("conformance_level"),
            seed=config.getoption("conformance_seed"),
            database=config.getoption("conformance_db"),
        )


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("polyloop-conformance", "polyloop conformance kit")
    group.addoption(
        "--conformance-profile",
        choices=PROFILES,
        default=None,
        help="Hypothesis profile for the contract tests (default: the class's, normally ci)",
    )
    group.addoption(
        "--conformance-level",
        choices=LEVELS,
        default=None,
        help="clauses ExecutorContract checks: core, or strict = core + hardening [H]",
    )
    group.addoption(
        "--conformance-seed",
        type=int,
        default=None,
        metavar="N",
        help="Hypothesis seed for the contract tests, to reproduce a run",
    )
    group.addoption(
        "--conformance-db",
        default=None,
        metavar="PATH",
        help="directory of a shared Hypothesis example database for the contract tests",
    )


def _is_the_kit(origin: str | None) -> bool:
    return origin is not None and Path(origin).resolve().parent == _KIT_DIR


def _loaded_kit_profiles() -> types.ModuleType | None:
    """`conformance.profiles` if this process has imported polyloop's kit, else None."""
    module = sys.modules.get("conformance.profiles")
    if module is None or not _is_the_kit(getattr(module, "__file__", None)):
        return None
    return module


def _load_kit_profiles(why: str) -> types.ModuleType:
    """Import polyloop's `conformance.profiles`, or raise a one-line `pytest.UsageError`."""
    from polyloop._launch import missing_extra_message, missing_requirements, shadowing_message

    missing = missing_requirements()
    if missing:
        raise pytest.UsageError(missing_extra_message(why, missing))
    try:
        spec = importlib.util.find_spec("conformance")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not _is_the_kit(spec.origin):
        where = (spec.origin if spec is not None else None) or "nothing"
        raise pytest.UsageError(
            f"{why} needs polyloop's conformance kit, but {shadowing_message('conformance', where)}"
        )
    return importlib.import_module("conformance.profiles")


_OWN_PACKAGES = ("conformance", "metatests")


def _shadowing_hint(failure: str) -> str | None:
    """Why an import of the kit failed, when a project's own module took its name.

    ``tests/conformance.py`` next to a test module is first on ``sys.path`` under pytest's
    default import mode, and ``from conformance import ExecutorContract`` then fails with a
    bare "cannot import name" that does not say the file shadows the kit.
    """
    from polyloop._launch import shadowing_file, shadowing_message

    for package in _OWN_PACKAGES:
        mentioned = (
            f"from '{package}'" in failure
            or f"No module named '{package}." in failure
            or f"'{package}' is not a package" in failure
        )
        where = shadowing_file(package) if mentioned else None
        if where is not None:
            return "polyloop: " + shadowing_message(package, where)
    return None


def _explain_shadowing(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.failed and report.longrepr is not None:
        hint = _shadowing_hint(str(report.longrepr))
        if hint is not None:
            report.longrepr = f"{report.longrepr}\n\n{hint}"


@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report: pytest.CollectReport) -> None:
    # tryfirst: the terminal and JUnit reporters read longrepr when they get the report.
    _explain_shadowing(report)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _explain_shadowing(report)


def _register_profiles(profiles: types.ModuleType) -> None:
    profiles.register_profiles()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "conformance: a test generated by the polyloop conformance kit "
        '(deselect them with -m "not conformance")',
    )
    # tryfirst: Hypothesis's own plugin loads --hypothesis-profile in its pytest_configure, so a
    # polyloop-* profile must be registered before it runs. Only then is the kit loaded here.
    wanted = config.getoption("hypothesis_profile", default=None)
    if isinstance(wanted, str) and wanted.startswith(_PROFILE_PREFIX):
        _register_profiles(_load_kit_profiles(f"--hypothesis-profile {wanted}"))


def pytest_collection_finish(session: pytest.Session) -> None:
    # The kit loads when a test module imports it; from then on its profiles are available
    # to the project's own Hypothesis tests too.
    profiles = _loaded_kit_profiles()
    if profiles is not None:
        _register_profiles(profiles)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Report each contract test at the user's ``ExecutorContract`` subclass rather than at
    the kit's file it inherits the test from (issue 24, item 4): a CI annotation plugin,
    which takes the file and line from the report's location, then points into the user's
    project, not into ``site-packages``."""
    for item in items:
        location = _user_location(item)
        if location is not None:
            item.reportinfo = functools.partial(_reportinfo, location)  # type: ignore[method-assign]
            item.__dict__.pop("location", None)  # a cached value from before


def _contract_classes() -> frozenset[str]:
    """The kit's pytest base classes, from each registered subject (`conformance.subjects`,
    read only once the kit is loaded: a test the kit defined means it is)."""
    registry = sys.modules.get("conformance.subjects")
    if registry is None or not _is_the_kit(getattr(registry, "__file__", None)):
        return frozenset()
    return frozenset(name for subject in registry.SUBJECTS for name in subject.contract_classes)


def _reportinfo(location: tuple[str, int, str]) -> tuple[str, int, str]:
    return location


def _user_location(item: pytest.Item) -> tuple[str, int, str] | None:
    """(file, 0-based line, domain) of the user's class for a test the kit defined."""
    cls = getattr(item, "cls", None)
    function = getattr(item, "function", None)
    code = getattr(function, "__code__", None)
    if cls is None or code is None or not _is_the_kit(code.co_filename):
        return None
    classes = _contract_classes()
    if not any(
        base.__name__ in classes and base.__module__ == "conformance.contract"
        for base in cls.__mro__[1:]
    ):
        return None
    try:
        path = inspect.getsourcefile(cls)
        line = inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return None
    if path is None:
        return None
    return path, line - 1, item.reportinfo()[2]


def pytest_report_header(config: pytest.Config) -> str | None:
    options = ConformanceOptions.from_config(config)
    given = {name: value for name, value in vars(options).items() if value is not None}
    if not given:
        return None
    return "polyloop-conformance: " + ", ".join(f"{k}={v}" for k, v in given.items())


@pytest.fixture(scope="session")
def conformance_options(request: pytest.FixtureRequest) -> ConformanceOptions:
    """The `--conformance-*` options of this run."""
    return ConformanceOptions.from_config(request.config)
