"""The Hypothesis settings and seed of one certification run, for every certified subject."""

from __future__ import annotations

import random

import hypothesis
from hypothesis.database import DirectoryBasedExampleDatabase

from conformance._core import hypo

__all__ = ["campaign_seed", "run_settings"]


def run_settings(
    profile: str, database: str | None, replay: bool = True, examples: int | None = None
) -> hypothesis.settings:
    settings = hypo.run_settings(hypo.profile_settings(profile))
    if examples is not None:  # ``--examples N``: the profile's count, overridden
        settings = type(settings)(settings, max_examples=examples)
    if database is not None:
        # Every run is seeded explicitly, so dropping derandomize (which forbids a database)
        # changes nothing else. A run given --seed must reproduce exactly, so it does not
        # replay what the database holds first (`replay=False`); it still saves what it finds.
        phases = settings.phases if replay else [p for p in settings.phases if p.name != "reuse"]
        settings = type(settings)(  # stays `KitSettings` (`hypo`: no target constants)
            settings,
            derandomize=False,
            database=DirectoryBasedExampleDatabase(database),
            phases=phases,
        )
    return settings


def campaign_seed(seed: int | None, database: str | None) -> int | None:
    """With an example database and no seed, a fresh random seed: a campaign explores new
    examples on every run (and replays the database's counterexamples first) instead of
    repeating the profile's fixed seed."""
    if seed is None and database is not None:
        return random.SystemRandom().randrange(2**32)
    return seed
