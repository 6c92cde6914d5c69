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
- the ``conformance_options`` fixture.

The kit loads lazily: a contract test module imports it itself (``from conformance import
ExecutorContract``), and once it is loaded the plugin registers the kit's profiles with
Hypothesis as ``polyloop-quick``, ``polyloop-ci`` and ``polyloop-thorough``, so a project's own
Hypothesis tests can use them. ``--hypothesis-profile polyloop-<name>`` loads the kit before
Hypothesis's own plugin reads that option. Nothing here changes a global setting: the options
reach only the contract classes, which read them through ``request.config.getoption``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["LEVELS", "PROFILES", "ConformanceOptions", "conformance_options"]

PROFILES = ("quick", "ci", "thorough")
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
    from polyloop._launch import missing_extra_message, missing_requirements

    missing = missing_requirements()
    if missing:
        raise pytest.UsageError(missing_extra_message(why, missing))
    try:
        spec = importlib.util.find_spec("conformance")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not _is_the_kit(spec.origin):
        where = spec.origin if spec is not None else "nothing"
        raise pytest.UsageError(
            f"{why} needs polyloop's conformance kit, but the name 'conformance' resolves to "
            f"{where}, not {_KIT_DIR}; rename the project's own 'conformance' package or take "
            "it off sys.path"
        )
    return importlib.import_module("conformance.profiles")


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
