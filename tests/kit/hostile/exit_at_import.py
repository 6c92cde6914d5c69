"""A target module that ends the process while it is imported (issue 13.4)."""

from __future__ import annotations

import sys

from polyloop import RegistryExecutor

sys.exit(0)

factory = RegistryExecutor
