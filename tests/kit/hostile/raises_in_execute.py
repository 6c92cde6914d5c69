"""An executor whose ``execute`` raises SystemExit before returning an awaitable (13.4)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from typing import NoReturn

from hostile._base import Wrapped
from polyloop import Action, ActionOutcome


class SysExit(Wrapped):
    def execute(self, action: Action) -> Awaitable[ActionOutcome]:  # type: ignore[override]
        return self._exit()

    @staticmethod
    def _exit() -> NoReturn:
        sys.exit(0)
