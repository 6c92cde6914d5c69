"""tox inline plugin: let tox find every Python installed under pyenv.

pyenv's shims only answer for the active version, so `python3.12` is "not found" even when
pyenv has 3.12 installed. Before tox looks for interpreters, put each installed CPython 3.x
`bin` directory on PATH (newest patch release of each minor version). Machines without pyenv
are left alone; tox then skips the versions it cannot find.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        default = Path.home() / ".pyenv"
        return default if default.is_dir() else None
    try:
        result = subprocess.run(
            [pyenv, "root"], capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(result.stdout.strip())


def _interpreter_dirs(root: Path) -> list[str]:
    newest: dict[tuple[int, int], tuple[int, Path]] = {}
    for version_dir in (root / "versions").glob("3.*"):
        match = re.fullmatch(r"3\.(\d+)\.(\d+)", version_dir.name)
        if match is None or not (version_dir / "bin").is_dir():
            continue
        minor, patch = int(match.group(1)), int(match.group(2))
        if (3, minor) not in newest or newest[(3, minor)][0] < patch:
            newest[(3, minor)] = (patch, version_dir / "bin")
    return [str(path) for _, (_, path) in sorted(newest.items())]


def _extend_path() -> None:
    root = _pyenv_root()
    if root is None:
        return
    extra = [entry for entry in _interpreter_dirs(root) if entry not in os.environ["PATH"]]
    if extra:
        os.environ["PATH"] = os.pathsep.join([*os.environ["PATH"].split(os.pathsep), *extra])


_extend_path()
