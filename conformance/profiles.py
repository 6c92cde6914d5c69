"""Hypothesis settings for the kit's three profiles.

``quick`` is for a local edit-run loop, ``ci`` (the default) is derandomized and sized so that
``certify --level strict`` on polyloop's own executor finishes well under a minute on two cores,
and ``thorough`` is for nightly campaigns (it keeps Hypothesis's example database, so every
counterexample found is replayed next time).

The kit itself never relies on Hypothesis's per-example ``deadline``: it puts its own deadline on
each ``execute`` call, because a slow example is not a failure but a hung executor is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, settings

__all__ = ["DEFAULT_PROFILE", "PROFILES", "hypothesis_settings", "register_profiles"]

DEFAULT_PROFILE = "ci"

# The kit's strategies filter generated arguments through jsonschema and build registries per
# example, so Hypothesis's "too slow"/"filters too much" health checks describe the kit, not the
# executor under test.
_QUIET = [
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
]
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)

PROFILES: dict[str, dict[str, Any]] = {
    "quick": {
        "max_examples": 15,
        "deadline": None,
        "database": None,
        "phases": _PHASES,
        "suppress_health_check": _QUIET,
        "report_multiple_bugs": False,
        "print_blob": False,
    },
    "ci": {
        "max_examples": 50,
        "derandomize": True,
        "deadline": None,
        "database": None,
        "phases": _PHASES,
        "suppress_health_check": _QUIET,
        "report_multiple_bugs": False,
        "print_blob": False,
    },
    "thorough": {
        "max_examples": 1000,
        "deadline": None,
        "phases": _PHASES,
        "suppress_health_check": _QUIET,
        "report_multiple_bugs": False,
    },
}
"""Profile name -> keyword arguments for ``hypothesis.settings``."""


def hypothesis_settings(profile: str) -> settings:
    """The ``hypothesis.settings`` for a profile name; an unknown name raises ValueError."""
    try:
        kwargs = PROFILES[profile]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(
            f"unknown conformance profile {profile!r}; choose one of: {known}"
        ) from None
    return settings(**kwargs)


def register_profiles() -> None:
    """Register the profiles with Hypothesis as ``polyloop-quick``, ``polyloop-ci`` and
    ``polyloop-thorough`` (registering again is harmless)."""
    for name in PROFILES:
        settings.register_profile(f"polyloop-{name}", hypothesis_settings(name))
