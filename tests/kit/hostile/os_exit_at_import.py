"""A target module that kills its process, uncatchably, while it is imported (issue 13.4)."""

from __future__ import annotations

import os

from polyloop import RegistryExecutor

os._exit(0)

factory = RegistryExecutor
