"""Exceptions whose ``str()`` raises: whatever builds a message about them must survive (E12).

Shared by polyloop's own tests and the zoo's witnesses, so both judge the same objects.
"""

from __future__ import annotations

from polyloop import ToolEnvironmentError


class _StrFails:
    def __str__(self) -> str:
        raise RuntimeError("str() is broken")


class UnprintableError(_StrFails, Exception):
    """An exception whose ``str()`` raises: messages about it must still be built (E12)."""


class UnprintableEnvError(_StrFails, ToolEnvironmentError):
    """The same for an environment error (E12 with E3's status)."""
