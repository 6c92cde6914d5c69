"""An executor that holds the GIL in one long C call: a catastrophic regex (issue 13.5)."""

from __future__ import annotations

import re

from hostile._base import Wrapped


class Regex(Wrapped):
    def hostile(self) -> None:
        re.match(r"^(a+)+$", "a" * 40 + "b")  # minutes, without releasing the GIL
