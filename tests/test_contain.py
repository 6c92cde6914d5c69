"""`polyloop._contain`: a child and everything it detached die together (issue 22, item 3).

Each scenario runs in a fresh interpreter (the "supervisor"), so that this test process never
becomes a subreaper itself. The supervisor starts a child that starts a daemon (a grandchild
in a session of its own, sleeping), learns the daemon's pid through a pipe, calls `kill_tree`
and prints whether the daemon is still alive.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="containment beyond the process group is Linux's"
)

SUPERVISOR = textwrap.dedent(
    r"""
    import os, subprocess, sys
    from polyloop import _contain

    scenario = sys.argv[1]
    subreaper = _contain.become_subreaper()
    mark = _contain.new_mark()
    env = _contain.contained_env(mark)
    daemon_env = "{}" if scenario == "orphan-clean-env" else "None"
    start_daemon = (
        "import subprocess, sys\n"
        "d = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        f" start_new_session=True, env={daemon_env}, stdin=subprocess.DEVNULL,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(d.pid, flush=True)\n"
    )
    if scenario == "alive":  # the child starts the daemon and stays
        code = start_daemon + "import time; time.sleep(600)\n"
    else:  # an intermediate starts it and exits: the daemon is orphaned before the kill
        code = (
            "import subprocess, sys, time\n"
            f"p = subprocess.run([sys.executable, '-c', {start_daemon!r}],"
            " capture_output=True, text=True)\n"
            "print(p.stdout.strip(), flush=True)\n"
            "time.sleep(600)\n"
        )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
        start_new_session=True, env=env,
    )
    daemon = int(child.stdout.readline())
    adopted = scenario != "orphan-no-subreaper"
    _contain.kill_tree(child.pid, mark=mark, adopted=adopted)
    child.wait()

    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            return False
        return not text[text.rfind(b")") + 2:].startswith(b"Z")

    print("subreaper" if subreaper else "no-subreaper", "alive" if alive(daemon) else "gone")
    if alive(daemon):
        os.kill(daemon, 9)
    """
)


def _supervise(tmp_path: Path, scenario: str, *, subreaper: bool = True) -> str:
    script = SUPERVISOR
    if not subreaper:
        script = script.replace("_contain.become_subreaper()", "False")
    path = tmp_path / "supervisor.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path), scenario], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_contain_kills_a_detached_daemon_of_a_live_child(tmp_path: Path) -> None:
    """The daemon (own session, so outside the child's process group) is found through its
    parent links while the intermediate still runs."""
    assert _supervise(tmp_path, "alive").endswith("gone")


def test_contain_kills_a_daemon_orphaned_before_the_kill_that_cleared_its_environment(
    tmp_path: Path,
) -> None:
    """Its parent has exited and it carries no mark: only the subreaper still sees it."""
    assert _supervise(tmp_path, "orphan-clean-env") == "subreaper gone"


def test_contain_kills_a_marked_orphan_without_a_subreaper(tmp_path: Path) -> None:
    """Where the subreaper is not set, the daemon is re-parented to init; the mark in its
    inherited environment still finds it."""
    assert _supervise(tmp_path, "orphan-no-subreaper", subreaper=False) == "no-subreaper gone"


def test_contain_process_group_kill_alone_misses_the_daemon(tmp_path: Path) -> None:
    """The control: what the kit did before (kill the child's process group) leaves the
    daemon running, so the tests above are not vacuous."""
    script = SUPERVISOR.replace(
        "_contain.kill_tree(child.pid, mark=mark, adopted=adopted)",
        "os.killpg(child.pid, 9)",
    )
    path = tmp_path / "supervisor.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path), "alive"], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().endswith("alive"), done.stderr
