"""``module:attr`` target resolution, shared by every command, with one ``sys.path`` policy.

The current directory is importable, as under ``python -m`` and pytest: ``certify
localmod:factory`` and ``check-tools localmod:tools`` find ``./localmod.py`` alike.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from conformance._core.text import describe_exception

__all__ = ["UsageError", "resolve"]


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit status 2."""


def _importable_cwd() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def resolve(spec: str, *, what: str = "module:attr") -> Any:
    """The object named by ``module:attr`` (attr may be dotted); `UsageError` otherwise.

    `what` describes the expected target in the message for a malformed `spec`."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise UsageError(f"{spec!r} is not module:attr; expected {what}")
    _importable_cwd()
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(f"cannot import {module_name!r}: {describe_exception(exc)}") from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise UsageError(f"{module_name!r} has no attribute {attribute!r}") from None
    return found
