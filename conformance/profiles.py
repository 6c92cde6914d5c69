"""Hypothesis settings for the kit's profiles (``fast``, ``quick``, ``ci``, ``thorough``).

The profiles themselves are frozen values in `conformance._core.hypo`; this module is their
public face: `PROFILES` maps each name to the (read-only) keyword arguments for
``hypothesis.settings``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from hypothesis import settings

from conformance._core import hypo
from conformance._core.hypo import DEFAULT_PROFILE

__all__ = ["DEFAULT_PROFILE", "PROFILES", "hypothesis_settings", "register_profiles"]

PROFILES: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {name: MappingProxyType(profile.settings_kwargs()) for name, profile in hypo.PROFILES.items()}
)
"""Profile name -> keyword arguments for ``hypothesis.settings`` (read-only)."""


def hypothesis_settings(profile: str) -> settings:
    """The ``hypothesis.settings`` for a profile name; an unknown name raises ValueError."""
    return hypo.profile_settings(profile)


def register_profiles() -> None:
    """Register the profiles with Hypothesis as ``polyloop-fast``, ``polyloop-quick``,
    ``polyloop-ci`` and ``polyloop-thorough`` (registering again is harmless)."""
    for name in PROFILES:
        settings.register_profile(f"polyloop-{name}", hypothesis_settings(name))
