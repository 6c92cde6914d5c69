"""pytest plugin of the conformance kit (entry point `pytest11`, active once the kit is installed).

Options (all optional; `ExecutorContract` and `ToolContract` fall back to their class
attributes):

- `--conformance-profile quick|ci|thorough`: the kit profile whose Hypothesis settings the
  contract tests use.
- `--conformance-level core|strict`: the clauses `ExecutorContract` checks.
- `--conformance-seed N`: reproduce a run.
- `--conformance-db PATH`: a shared Hypothesis example database (a directory, e.g. on shared
  storage), so every counterexample any worker finds is replayed by all of them next time.

It also registers the kit's profiles with Hypothesis as `polyloop-quick`, `polyloop-ci` and
`polyloop-thorough`, so `--hypothesis-profile polyloop-thorough` works for a project's own
Hypothesis tests. It changes no global setting: the options reach only the contract classes,
which read them through `request.config.getoption`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.profiles import PROFILES, register_profiles

__all__ = ["ConformanceOptions", "conformance_options"]

_LEVELS = ("core", "strict")


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
        choices=tuple(PROFILES),
        default=None,
        help="Hypothesis profile for the contract tests (default: the class's, normally ci)",
    )
    group.addoption(
        "--conformance-level",
        choices=_LEVELS,
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


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # tryfirst: Hypothesis's own plugin loads --hypothesis-profile in its pytest_configure, so
    # the polyloop-* profiles must exist before it runs.
    register_profiles()


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
