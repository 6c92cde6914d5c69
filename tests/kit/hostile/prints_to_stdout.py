"""An executor that prints, logs and warns on every call (issue 13.7, issue 9 defect 7)."""

from __future__ import annotations

import logging
import warnings

from hostile._base import Wrapped


class Prints(Wrapped):
    def hostile(self) -> None:
        print("HOSTILE-PRINT {not json")
        logging.getLogger("hostile").error("HOSTILE-LOG something went wrong")
        warnings.warn("HOSTILE-WARNING coroutine was never awaited", RuntimeWarning, stacklevel=1)
