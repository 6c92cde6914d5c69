"""Factories that raise BaseExceptions other than Exception (issue 13.4)."""

from __future__ import annotations

import sys
from typing import NoReturn

from polyloop import ToolRegistry


def sys_exit_0(registry: ToolRegistry) -> NoReturn:
    sys.exit(0)


def sys_exit_3(registry: ToolRegistry) -> NoReturn:
    sys.exit(3)


def generator_exit(registry: ToolRegistry) -> NoReturn:
    raise GeneratorExit


def bare_base_exception(registry: ToolRegistry) -> NoReturn:
    raise BaseException("from the factory")
