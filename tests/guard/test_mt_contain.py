"""M4's isolation contains the whole tree (issue 22, item 3): a daemon a scanned module detaches
(``start_new_session=True``, orphaned by a double fork) dies with the scan, and SIGTERM to
``polyloop-metatests`` kills the scan child and removes its ``metatests-scan-*`` directory.

The CLI runs as a program (``python -m metatests``) in a subprocess: only then does it make
itself a subreaper and handle SIGTERM, and this test process stays as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import metatests

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="containment beyond the process group is Linux's"
)

# The intermediate starts the daemon in a session of its own and exits: the daemon is orphaned
# before the scan ends, outside the scan child's process group and parent chain.
DAEMON = """\
import os, subprocess, sys
PIDS = {pids!r}
starter = (
    "import subprocess, sys\\n"
    "d = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
    " start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL)\\n"
    "print(d.pid)\\n"
)
daemon = subprocess.run([sys.executable, "-c", starter], capture_output=True, text=True).stdout
with open(PIDS, "w") as f:
    f.write(f"{{os.getpid()}} {{daemon.strip()}}\\n")
{tail}
"""

MODEL = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass P:\n    a: int\n"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    return text[text.rfind(b")") + 2 :].split()[0] != b"Z"


def _wait_for(path: Path, process: subprocess.Popen[str]) -> str:
    """The pid file's text once written (a deadline guards the test, never decides it)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"the scanned module never wrote {path}")


def _cli(packages, name: str, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    root = Path(metatests.__file__).parent.parent
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), packages.root(name)]),
        "TMPDIR": str(tmp),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "metatests", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_M4_a_detached_daemon_started_at_import_dies_with_the_scan(
    packages, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    name = packages.write({"models.py": MODEL, "spawn.py": DAEMON.format(pids=str(pids), tail="")})
    process = _cli(packages, name, tmp_path, "update", name, "--baseline", str(tmp_path / "a.json"))
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, out + err
    child, daemon = map(int, pids.read_text().split())
    assert not _alive(daemon), "the detached daemon outlived polyloop-metatests"
    assert not _alive(child)


def test_M4_sigterm_kills_the_scan_tree_and_removes_the_temporary_directory(
    packages, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    hang = "import time\ntime.sleep(600)\n"
    name = packages.write(
        {"models.py": MODEL, "spawn.py": DAEMON.format(pids=str(pids), tail=hang)}
    )
    process = _cli(packages, name, tmp_path, "update", name, "--baseline", str(tmp_path / "a.json"))
    child, daemon = map(int, _wait_for(pids, process).split())
    assert list((tmp_path / "tmp").glob("metatests-scan-*"))  # the scan is under way

    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 143, out + err
    assert err == "polyloop-metatests: terminated (SIGTERM)\n"
    assert not _alive(child), "the scan child outlived SIGTERM"
    assert not _alive(daemon), "the scan's detached daemon outlived SIGTERM"
    assert list((tmp_path / "tmp").glob("metatests-scan-*")) == []
