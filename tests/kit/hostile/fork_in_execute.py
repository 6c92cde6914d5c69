"""An executor that forks a child which outlives the call and keeps stdout open (13.6)."""

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
                time.sleep(60)
                os._exit(0)
