"""An executor whose first call starts a detached helper (``start_new_session=True``: outside
the child's process group) that sleeps for ten minutes (issue 22, item 3).

The helper writes its pid to the file named by ``HOSTILE_PIDFILE``, so a test can check that it
did not outlive the run."""

from __future__ import annotations

import os
import subprocess
import sys

from hostile._base import Wrapped

_SLEEPER = "import os, time; print(os.getpid(), flush=True); time.sleep(600)"


class StartsDaemon(Wrapped):
    started = False

    def hostile(self) -> None:
        if StartsDaemon.started:
            return
        StartsDaemon.started = True
        helper = subprocess.Popen(
            [sys.executable, "-c", _SLEEPER],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert helper.stdout is not None
        pid = helper.stdout.readline().strip()  # it runs: the test may now look for it
        pidfile = os.environ.get("HOSTILE_PIDFILE")
        if pidfile:
            with open(pidfile, "w", encoding="utf-8") as file:
                file.write(pid)
