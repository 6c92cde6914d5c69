"""Running the kit in a child process, the way a user's shell or CI does.

One place decides what the child sees: its own copy of the environment with ``tests/kit`` and
``tests`` (the zoo) on ``PYTHONPATH``, so a target such as ``zoo.runner:ClaimsCompletion`` or a
generated test module importing the zoo resolves there as it does here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

KIT_TESTS = Path(__file__).parent
TESTS = KIT_TESTS.parent


def env_with_tests(**extra: str) -> dict[str, str]:
    """This process's environment, ``tests/kit`` and ``tests`` first on ``PYTHONPATH``."""
    path = os.pathsep.join([str(KIT_TESTS), str(TESTS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_python(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python <args>`` with this interpreter, its output captured as text."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(env),
        timeout=timeout,
    )


def run_pytest(
    tmp_path: Path, source: str, *args: str, module: str = "test_subject.py"
) -> subprocess.CompletedProcess[str]:
    """Write `source` as `module` in `tmp_path` and run pytest on it there (no cache files)."""
    (tmp_path / module).write_text(source)
    pytest_args = ["-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", module, *args]
    return run_python(pytest_args, cwd=tmp_path, env=env_with_tests())
