"""An executor whose ``execute`` kills its process with status 0 (issue 13.4)."""

from __future__ import annotations

import os

from hostile._base import Wrapped


class OsExit(Wrapped):
    def hostile(self) -> None:
        os._exit(0)
