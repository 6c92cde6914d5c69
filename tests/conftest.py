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

The kit on one Python, the library on all (``POLYLOOP_FULL_PYTHON=3.11``, set by tox): the
kit's own tests (`tests/kit`, `tests/mutants`, `tests/specificity`) are most of the suite's time
and judge through code whose behaviour does not depend on the interpreter, so on the other
Pythons only their version-sensitive part runs: a test marked `every_python`, or one whose id
names a clause where the interpreter shows (cancellation: E6, B14, B15, P9; its name says
`cancel`). polyloop's own tests (`tests/test_*.py`: asyncio cancellation, `wait_for`),
the guard's (`tests/guard`: dataclass internals, `inspect`) and the packaging tests run on every
Python. Without the variable everything runs everywhere.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

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
_FULL_PYTHON = os.environ.get("POLYLOOP_FULL_PYTHON", "")
KIT_ONLY_DIRS = ("kit", "mutants", "specificity")
"""Folders under tests/ whose tests run whole on `POLYLOOP_FULL_PYTHON` only."""
VERSION_SENSITIVE = re.compile(r"(?<![A-Za-z0-9])(E6|B14|B15|P9)(?![0-9])|cancel", re.IGNORECASE)
"""A kit test whose id matches this runs on every Python (the clauses where asyncio's
cancellation shows, which changed between 3.10 and 3.12)."""


_TESTS = Path(__file__).resolve().parent


def _kit_only(item: pytest.Item) -> bool:
    try:
        below = item.path.resolve().relative_to(_TESTS).parts
    except ValueError:
        return False
    return len(below) > 1 and below[0] in KIT_ONLY_DIRS


def _every_python(item: pytest.Item) -> bool:
    return item.get_closest_marker("every_python") is not None or bool(
        VERSION_SENSITIVE.search(item.nodeid)
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if _ONE_PYTHON and running != _ONE_PYTHON:
        skip = pytest.mark.skip(
            reason=f"one_python: interpreter-independent and slow; runs on {_ONE_PYTHON} only"
        )
        for item in items:
            if item.get_closest_marker("one_python") is not None:
                item.add_marker(skip)
    if _FULL_PYTHON and running != _FULL_PYTHON:
        kit = pytest.mark.skip(
            reason=f"full_python: the kit's tests run whole on {_FULL_PYTHON}; here only its "
            "version-sensitive ones (every_python, cancellation)"
        )
        for item in items:
            if _kit_only(item) and not _every_python(item):
                item.add_marker(kit)


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
