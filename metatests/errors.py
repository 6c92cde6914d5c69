"""The guard's error classes: each is a usage or input error (exit status 2), never a verdict."""

from __future__ import annotations

__all__ = ["BaselineError", "MetatestsError", "PackageNotFoundError"]


class MetatestsError(Exception):
    """A usage or input error (exit status 2): the check could not be run at all."""


class PackageNotFoundError(MetatestsError):
    """The package to scan cannot be found at all: a usage error, not a failed check."""


class BaselineError(MetatestsError):
    """The baseline file is missing, malformed, read-only, or belongs to another package."""
