"""Shared configuration for polyloop's own tests: Hypothesis profiles and corpus counters.

Profiles: `dev` (the default, for local runs) and `ci` (derandomized, no deadline, no
slow-generation health check, prints the reproduction blob). Choose one with the environment
variable ``HYPOTHESIS_PROFILE``.

Corpus tests report how many cases they checked through the `record_count` fixture: the counts
go into the JUnit properties and into a short block at the end of the terminal summary, so a
run that silently checked nothing is visible even before the floor assertions fail it.

`@pytest.mark.one_python`: a slow test whose subject cannot differ between interpreters (the
kit's generation over big corpora and number edges, check-tools over a corpus). With
``POLYLOOP_ONE_PYTHON=3.11`` set (tox does), it runs on that Python only and is skipped, with
that reason, on the others; without the variable it runs everywhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50)
# CI machines are shared and noisy: "input generation is slow" there says nothing about the code.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=30,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

_COUNTS = pytest.StashKey[list[tuple[str, str, int]]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_COUNTS] = []


_ONE_PYTHON = os.environ.get("POLYLOOP_ONE_PYTHON", "")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if not _ONE_PYTHON or running == _ONE_PYTHON:
        return
    skip = pytest.mark.skip(
        reason=f"one_python: interpreter-independent and slow; runs on {_ONE_PYTHON} only"
    )
    for item in items:
        if item.get_closest_marker("one_python") is not None:
            item.add_marker(skip)


@pytest.fixture
def record_count(
    request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> Callable[[str, int], None]:
    """Return `record(label, n)`, which records how many corpus cases a test checked."""

    def record(label: str, n: int) -> None:
        record_property(label, n)
        request.config.stash[_COUNTS].append((request.node.name, label, n))
        print(f"{label}: {n}")

    return record


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = terminalreporter.config.stash.get(_COUNTS, [])
    if not counts:
        return
    terminalreporter.section("corpus cases checked")
    for test, label, n in counts:
        terminalreporter.write_line(f"{test}: {label} = {n}")
