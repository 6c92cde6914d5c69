"""An executor that blocks its event loop for a while on every call (issue 9 defects 4, 5)."""

from __future__ import annotations

import time

from hostile._base import REGISTRY, Wrapped

BLOCK = 1.2
"""Seconds each call blocks: longer than the tests' deadline plus grace, shorter than the
runner's close wait, so the loop thread it leaves behind can still end."""


class Blocks(Wrapped):
    def hostile(self) -> None:
        time.sleep(BLOCK)


blocking_executor = Blocks(REGISTRY)
