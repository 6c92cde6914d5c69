"""An executor that freezes ``time.monotonic`` and then blocks (issue 13.5): the kit's own
in-process deadline can no longer see time pass."""

from __future__ import annotations

import time

from hostile._base import Wrapped

_real_sleep = time.sleep


class FreezesClock(Wrapped):
    def hostile(self) -> None:
        frozen = time.monotonic()
        time.monotonic = lambda: frozen
        _real_sleep(600)
