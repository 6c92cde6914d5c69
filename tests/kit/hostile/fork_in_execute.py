"""An executor that forks a child which outlives the call and keeps stdout open (13.6).

The orphan writes its pid to the file named by ``HOSTILE_PIDFILE`` (when set), so a test can
check that it did not outlive the run."""

from __future__ import annotations

import os
import time

from hostile._base import Wrapped


class Forks(Wrapped):
    forked = False

    def hostile(self) -> None:
        if not Forks.forked:
            Forks.forked = True
            if os.fork() == 0:  # the orphan: holds every inherited fd for a minute
                pidfile = os.environ.get("HOSTILE_PIDFILE")
                if pidfile:
                    with open(pidfile, "w", encoding="utf-8") as file:
                        file.write(str(os.getpid()))
                time.sleep(60)
                os._exit(0)
