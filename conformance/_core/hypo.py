"""The Hypothesis wiring of both halves: the profiles as frozen values, one settings builder,
and the private hook that keys the example database per clause and target.

The kit never relies on Hypothesis's per-example ``deadline``: it puts its own deadline on each
call (`conformance._core.deadline`), because a slow example is not a failure but a hung target is.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "KitSettings",
    "Profile",
    "add_digest",
    "profile",
    "profile_settings",
    "run_settings",
    "share_of",
]

DEFAULT_PROFILE = "ci"

# The kit's strategies filter generated arguments through jsonschema and build registries per
# example, so Hypothesis's "too slow"/"filters too much" health checks describe the kit, not the
# target under test.
QUIET = (
    HealthCheck.too_slow,
    HealthCheck.filter_too_much,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One of the kit's profiles: how many examples, and whether runs are derandomized and keep
    Hypothesis's example database."""

    name: str
    max_examples: int
    derandomize: bool
    keeps_database: bool
    pool_size: int
    """How many schemas certify draws its generated registries from."""

    def settings_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``hypothesis.settings``."""
        kwargs: dict[str, Any] = {
            "max_examples": self.max_examples,
            "deadline": None,
            "phases": PHASES,
            "suppress_health_check": list(QUIET),
            "report_multiple_bugs": False,
        }
        if self.derandomize:
            kwargs["derandomize"] = True
        if not self.keeps_database:
            kwargs["database"] = None
            kwargs["print_blob"] = False
        return kwargs


PROFILES: Mapping[str, Profile] = MappingProxyType(
    {
        "fast": Profile(
            name="fast", max_examples=5, derandomize=True, keeps_database=False, pool_size=40
        ),
        "quick": Profile(
            name="quick", max_examples=15, derandomize=False, keeps_database=False, pool_size=120
        ),
        "ci": Profile(
            name="ci", max_examples=50, derandomize=True, keeps_database=False, pool_size=300
        ),
        "thorough": Profile(
            name="thorough",
            max_examples=1000,
            derandomize=False,
            keeps_database=True,
            pool_size=2000,
        ),
    }
)
"""``fast`` for a pre-commit hook: few examples, derandomized, seed 0, the same verdict every
run; ``quick`` for a local edit-run loop (a fresh random seed each run); ``ci`` (the default)
derandomized and sized so that
``certify --level strict`` on polyloop's own executor finishes well under a minute on two cores;
``thorough`` for nightly campaigns (it keeps the example database, so every counterexample found
is replayed next time)."""


def profile(name: str) -> Profile:
    """The profile called `name`; ValueError naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown conformance profile {name!r}; choose one of: {known}") from None


def profile_settings(name: str) -> settings:
    """The ``hypothesis.settings`` of a profile; an unknown name raises ValueError."""
    return settings(**profile(name).settings_kwargs())


class KitSettings(settings):
    """The settings of the kit's own runs (built only by `run_settings`). Hypothesis sees them
    as ordinary settings; the kit's constants hook (`_without_local_constants`) recognises them
    while they are active."""


def run_settings(parent: settings | None, **overrides: Any) -> settings:
    """`parent` (None: the active Hypothesis profile) with the kit's quiet output and the given
    overrides: the one place both halves build the settings a run uses."""
    _without_local_constants()
    return KitSettings(
        parent, verbosity=Verbosity.quiet, report_multiple_bugs=False, deadline=None, **overrides
    )


def share_of(run: settings, times: int, parts: int = 1) -> settings:
    """`run` with `times`/`parts` of its examples (at least one), in its own settings class:
    how a subject scales the profile's count (``--examples`` included) to its clauses."""
    examples = max(1, run.max_examples * times // parts)
    return type(run)(run, max_examples=examples)


def _without_local_constants() -> None:
    """Make the kit's runs draw no constants from the target's modules (issue 9, defect 10).

    Now and then (p = 0.05 per choice) Hypothesis draws a constant instead of a random value,
    half the time from the literals of every loaded "local" module (neither stdlib nor
    site-packages, nor a test file) — the target's own module, the caller's scripts, whatever
    the process has imported. A verdict would then depend on the target's source text. While
    `KitSettings` are active, this hook draws such constants from the loaded modules of the kit
    itself (``conformance``, ``polyloop``) only, besides Hypothesis's global pool: a function of
    the kit version. Any other test gets Hypothesis's own behaviour. Idempotent; a Hypothesis
    without the mechanism is left alone."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.conjecture.choice import (
            choice_constraints_key,
            choice_permitted,
        )
        from hypothesis.internal.constants_ast import _constants_from_source  # noqa: F401
    except ImportError:  # pragma: no cover - a Hypothesis without local constants
        return
    provider = getattr(providers, "HypothesisProvider", None)
    original = getattr(provider, "_maybe_draw_constant", None)
    pool = getattr(providers, "GLOBAL_CONSTANTS", None)
    if provider is None or original is None or pool is None:  # pragma: no cover
        return
    if getattr(original, "_polyloop_kit_hook", False):
        return
    # Memos of pure functions of (the kit's source files, the choice's constraints).
    kit_pool: list[tuple[tuple[str, ...], Any]] = []
    allowed: dict[Any, tuple[tuple[Any, ...], ...]] = {}

    def kit_constants() -> tuple[tuple[str, ...], Any]:
        if not kit_pool:
            kit_pool.append(_kit_constants(providers))
        return kit_pool[0]

    def maybe_draw_constant(
        self: Any, choice_type: Any, constraints: Any, *, p: float = 0.05
    ) -> Any:
        if not isinstance(settings.default, KitSettings):
            return original(self, choice_type, constraints, p=p)
        if self._random.random() > p:
            return None
        names, local = kit_constants()
        key = (names, choice_type, choice_constraints_key(choice_type, constraints))
        if key not in allowed:
            permitted = (
                tuple(
                    c for c in source.set_for_type(choice_type) if choice_permitted(c, constraints)
                )
                for source in (pool, local)
            )
            allowed[key] = tuple(choices for choices in permitted if choices)
        lists = allowed[key]
        if not lists:
            return None
        return self._random.choice(self._random.choice(lists))

    maybe_draw_constant._polyloop_kit_hook = True  # type: ignore[attr-defined]
    provider._maybe_draw_constant = maybe_draw_constant


def _kit_constants(providers: Any) -> tuple[tuple[str, ...], Any]:
    """The constants of every source file of the kit's packages, read from disk, not whichever
    of their modules this process happens to have imported: the pool is a function of the kit
    version alone (a whole test suite and a lone `certify` draw the same constants)."""
    found = copy.deepcopy(providers._local_constants)
    for attr in ("integers", "floats", "bytes", "strings"):
        getattr(found, attr).clear()
    files = _kit_source_files()
    for path in files:
        try:
            found |= _constants_from_file(path)
        except Exception:  # pragma: no cover - unreadable or unparsable source
            continue
    return tuple(str(path) for path in files), found


_KIT_PACKAGES = ("conformance", "polyloop")


def _kit_source_files() -> tuple[Path, ...]:
    """The kit's and the library's own source files, in a fixed order."""
    roots = [Path(__file__).resolve().parents[1], Path(__file__).resolve().parents[2] / "polyloop"]
    return tuple(path for root in roots for path in sorted(root.rglob("*.py")))


def _constants_from_file(path: Path) -> Any:
    from hypothesis.internal.constants_ast import _constants_from_source

    source = path.read_bytes()
    try:
        return _constants_from_source(source, limit=True)
    except TypeError:  # older Hypothesis: no `limit`
        return _constants_from_source(source)  # type: ignore[call-arg]


def add_digest(test: Any, key: bytes) -> None:
    """Key `test`'s example-database entries by `key` as well as by its source.

    Every clause (and every tool) runs the same test function, so without this they would share
    database entries. This is the private hook Hypothesis itself uses for parametrized tests;
    it is set in this one place."""
    test._hypothesis_internal_add_digest = key


def run_traps(test: Callable[[Any], None], traps: Sequence[Any], run: settings) -> None:
    """Call `test` on each trap in order, as Hypothesis's explicit phase would (when `run`'s
    phases include it), with the global `random` seeded to 0 during each call and restored
    after, as Hypothesis seeds it for every example; the first exception propagates.

    The kit runs its traps itself rather than as ``@example``s: Hypothesis pretty-prints every
    explicit example's arguments before running it (for the report of a failure), which for
    the kit's scenarios cost more than running them."""
    if Phase.explicit not in run.phases:
        return
    for trap in traps:
        state = random.getstate()
        random.seed(0)
        try:
            test(trap)
        finally:
            random.setstate(state)
