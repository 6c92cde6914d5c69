"""An executor that closes stdout and file descriptor 1 (issue 13.7)."""

from __future__ import annotations

import contextlib
import os
import sys

from hostile._base import Wrapped


class ClosesStdout(Wrapped):
    def hostile(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.close()
        with contextlib.suppress(OSError):
            os.close(1)
