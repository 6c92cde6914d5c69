"""The ``one_python`` marker (tests/conftest.py): with ``POLYLOOP_ONE_PYTHON`` naming another
interpreter a marked test is skipped with the reason; naming this one, or unset, it runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"
OTHER = "3.10" if RUNNING != "3.10" else "3.11"

SAMPLE = """
import pytest

@pytest.mark.one_python
def test_marked():
    pass

def test_plain():
    pass
"""


def _pytest(tmp_path: Path, variables: dict[str, str], *flags: str) -> str:
    """Run pytest in `tmp_path` with the real conftest and only these POLYLOOP_ variables."""
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    one_python: see conftest\n    every_python: see conftest\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLYLOOP_")}
    env.update(variables)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *flags, "-rs", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _run(tmp_path: Path, one_python: str | None) -> str:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_sample.py").write_text(SAMPLE)
    variables = {} if one_python is None else {"POLYLOOP_ONE_PYTHON": one_python}
    return _pytest(tmp_path, variables, "tests")


@pytest.mark.parametrize("one_python", [None, RUNNING])
def test_marked_test_runs_on_the_named_python_or_without_the_variable(
    tmp_path: Path, one_python: str | None
) -> None:
    assert "2 passed" in _run(tmp_path, one_python)


def test_marked_test_is_skipped_with_its_reason_on_another_python(tmp_path: Path) -> None:
    out = _run(tmp_path, OTHER)
    assert "1 passed, 1 skipped" in out
    assert f"interpreter-independent and slow; runs on {OTHER} only" in out


KIT_SAMPLE = """
import pytest

@pytest.mark.every_python
def test_marked():
    pass

def test_E6_cancellation_judged():
    pass

def test_B14_drains():
    pass

def test_a_cancel_point():
    pass

def test_E60_alone():
    pass

def test_plain():
    pass
"""


def _run_kit(tmp_path: Path, full_python: str | None) -> str:
    """A kit test folder and a library test beside it, under the real conftest."""
    tests = tmp_path / "tests"
    (tests / "kit").mkdir(parents=True, exist_ok=True)
    (tests / "kit" / "test_kit_sample.py").write_text(KIT_SAMPLE)
    (tests / "test_library.py").write_text("def test_library():\n    pass\n")
    variables = {} if full_python is None else {"POLYLOOP_FULL_PYTHON": full_python}
    return _pytest(tmp_path, variables, "-v")


@pytest.mark.parametrize("full_python", [None, RUNNING])
def test_the_kit_runs_whole_on_the_full_python_or_without_the_variable(
    tmp_path: Path, full_python: str | None
) -> None:
    assert "7 passed" in _run_kit(tmp_path, full_python)


def test_elsewhere_the_kit_runs_only_its_version_sensitive_tests(tmp_path: Path) -> None:
    """The marked test, the cancellation clauses (E6, B14, not E60) and a test about
    cancelling run; a plain kit test is skipped with the reason; the library test runs."""
    out = _run_kit(tmp_path, OTHER)
    assert "5 passed, 2 skipped" in out
    assert f"the kit's tests run whole on {OTHER}" in out
    assert "test_E60_alone SKIPPED" in out and "test_plain SKIPPED" in out
    assert "test_E6_cancellation_judged PASSED" in out and "test_library PASSED" in out
