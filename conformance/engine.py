"""`certify`: check an action executor against the contract, clause by clause.

Each selected clause's property (`conformance.properties`) runs under Hypothesis with the
chosen profile and seed. When a check fails, Hypothesis shrinks the scenario; the kit records
every failing run, and since Hypothesis replays the minimal example last, the last record is
the counterexample the report shows. The executor under test never runs on the kit's own
thread (see `conformance._core.deadline`), so one that hangs, raises or even lets
KeyboardInterrupt escape is reported against the clause being checked.

`certify` is four steps, each its own function: `_checked_arguments`, `_run_settings`, the
per-clause loop (`_clause_result`) and `_reproduce_line`.
"""

from __future__ import annotations

import collections
import platform
import random
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import hypothesis
import hypothesis.errors
from hypothesis.database import DirectoryBasedExampleDatabase

from conformance import catalog
from conformance._core import hypo
from conformance._core.deadline import DeadlineRunner, LoopThread
from conformance._core.limits import EXECUTE_DEADLINE
from conformance._core.text import describe_exception
from conformance._runner import Trial
from conformance._search import ClauseOutcome, no_scenario
from conformance._search import search_clause as _search_clause  # patched by tests
from conformance.catalog import LEVELS
from conformance.oracle import UnresolvedReference
from conformance.report import ClauseResult, ClauseStatus, Report
from polyloop import ToolRegistry, __version__

if TYPE_CHECKING:
    from conformance.properties import Property, ScenarioSource

# `conformance.properties` (and with it the strategies and hypothesis-jsonschema) is imported
# when certify runs, not when this module is: the pytest plugin imports the package at pytest
# start-up, where loading Hypothesis's Unicode tables is not allowed.

__all__ = ["CERTIFIED_CLAUSES", "LEVELS", "ClauseStatus", "SetUpError", "certify", "select_clauses"]


class SetUpError(ValueError):
    """The run could not check anything because of how it was set up (a factory that fails on
    every call) or a defect in the kit: one message, not an error per clause. A ValueError, so
    the CLI reports it in one line with exit status 2."""


_FACTORY_FAILED = ("the factory raised ", "the factory returned ")
_KIT_FAILED = "the kit failed while checking this clause: "


def _set_up_problem(results: Iterable[ClauseResult]) -> str | None:
    """What made the whole run meaningless, if anything: a kit defect in any clause, or a
    factory that failed in every clause that ran."""
    ran = [r for r in results if r.status != "skipped"]
    for r in ran:
        if r.message and r.message.startswith(_KIT_FAILED):
            detail = r.message.removeprefix(_KIT_FAILED)
            return (
                f"the kit failed while checking {r.id} (a bug in the kit, please report it "
                f"with this line and the reproduce command): {detail}"
            )
    factory = [r for r in ran if r.message and r.message.startswith(_FACTORY_FAILED)]
    if ran and len(factory) == len(ran) and all(r.status in ("error", "xfail") for r in ran):
        first = (factory[0].message or "").splitlines()[0]
        return (
            f"{first}, in every clause ({', '.join(r.id for r in ran)}): nothing was checked. "
            "The target must be a factory that returns an executor for any ToolRegistry "
            "(try calling it once yourself with a ToolRegistry)"
        )
    return None


CERTIFIED_CLAUSES: tuple[str, ...] = tuple(
    clause.id for clause in catalog.CLAUSES if clause.section in ("validation", "dispatch")
)
"""The clauses `certify` checks (V1–V8, E1–E15, one property each in
`conformance.properties`); the others concern specs, registries, tool authors and the API, and
have their own checks."""


def _clause_list(ids: Iterable[str], what: str) -> list[str]:
    if isinstance(ids, str):
        ids = [part for part in ids.replace(",", " ").split() if part]
    chosen = []
    for clause_id in ids:
        catalog.get(clause_id)  # ValueError listing the known clauses
        if clause_id not in CERTIFIED_CLAUSES:
            raise ValueError(
                f"{what} names {clause_id}, which certify does not check; it "
                f"checks {', '.join(CERTIFIED_CLAUSES)}"
            )
        chosen.append(clause_id)
    return chosen


def select_clauses(level: str, only: Iterable[str] | None = None) -> tuple[str, ...]:
    """The clause IDs a run at `level` checks, in contract order, narrowed to `only`."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose {', '.join(LEVELS)}")
    in_level = [c for c in CERTIFIED_CLAUSES if level != "core" or catalog.get(c).level == "core"]
    if only is None:
        return tuple(in_level)
    wanted = _clause_list(only, "--only")
    outside = [c for c in wanted if c not in in_level]
    if outside:
        raise ValueError(
            f"{', '.join(outside)}: not checked at level {level} (strict clauses need level strict)"
        )
    return tuple(c for c in in_level if c in wanted)


def _target_name(target: object) -> str:
    if isinstance(target, type) or (callable(target) and hasattr(target, "__qualname__")):
        return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"
    kind = type(target)
    return f"{kind.__module__}:{kind.__qualname__} instance"


@dataclass(frozen=True, kw_only=True)
class _Run:
    """One certification's checked arguments and the machinery they set up."""

    name: str
    mode: str
    level: str
    profile: str
    seed: int
    deadline: float
    reasons: Mapping[str, str]
    settings: hypothesis.settings
    source: ScenarioSource
    trial: Trial


def _check_target(target: Any, registry: ToolRegistry | None) -> str:
    """The mode (`white-box`/`black-box`) for this target; TypeError when it fits neither."""
    if registry is None:
        if not callable(target):
            raise TypeError(
                f"certify(target) needs a factory Callable[[ToolRegistry], "
                f"ActionExecutor], got {type(target).__name__}; to certify an "
                "executor instance (black-box), pass registry= too"
            )
        return "white-box"
    if not isinstance(registry, ToolRegistry):
        raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
    if not callable(getattr(target, "execute", None)):
        raise TypeError(
            f"black-box certify needs an executor with an execute method, got "
            f"{type(target).__name__}"
        )
    return "black-box"


def _checked_arguments(
    profile: str, deadline: float, seed: int | None, expected_failures: Mapping[str, str] | None
) -> tuple[int, dict[str, str]]:
    """The seed to use and the expected-failure reasons; ValueError for a bad argument."""
    hypo.profile(profile)  # ValueError naming the profiles
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not deadline > 0:
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    reasons = dict(expected_failures or {})
    _clause_list(reasons, "the expected-failures list")
    blank = [c for c, why in reasons.items() if not isinstance(why, str) or not why.strip()]
    if blank:
        raise ValueError(f"expected failures need a reason; none given for {', '.join(blank)}")
    if seed is None:
        fixed = hypo.profile(profile).derandomize  # ci, fast: the same run every time
        return (0 if fixed else random.SystemRandom().randrange(2**32)), reasons
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return seed, reasons


def _run_settings(
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


def _campaign_seed(seed: int | None, database: str | None) -> int | None:
    """With an example database and no seed, a fresh random seed: a campaign explores new
    examples on every run (and replays the database's counterexamples first) instead of
    repeating the profile's fixed seed."""
    if seed is None and database is not None:
        return random.SystemRandom().randrange(2**32)
    return seed


def _reproduce_line(run: _Run, clause_id: str) -> str:
    line = (
        f"polyloop-conformance certify {run.name} --level {run.level} --profile "
        f"{run.profile} --seed {run.seed} --only {clause_id}"
    )
    if run.deadline != EXECUTE_DEADLINE:
        line += f" --deadline {run.deadline:g}"
    if run.settings.max_examples != hypo.profile(run.profile).max_examples:
        line += f" --examples {run.settings.max_examples}"
    return line


def _outcome(run: _Run, prop: Property) -> ClauseOutcome:
    if run.mode == "black-box" and not prop.black_box:
        message = "needs the kit's scripted handlers: certify a factory (white-box) to check it"
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=message)
    inapplicable = prop.inapplicable(run.source)
    if inapplicable is not None:
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=inapplicable)
    stuck_since = run.trial.stuck_since
    if run.mode == "black-box" and stuck_since is not None:
        message = (
            f"not run: the executor has been stuck since {stuck_since} (a call never gave its "
            "event loop back, and a black-box executor cannot be rebuilt); certify again with "
            f"--only {prop.clause} to check this clause on a fresh executor"
        )
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)
    silent_since = run.trial.silent_since
    if silent_since is not None:
        message = (
            f"not judged: the executor stopped answering during {silent_since} (a fresh "
            "executor did not answer one plain call); certify again with "
            f"--only {prop.clause} to judge this clause on its own"
        )
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=message)
    if run.mode == "black-box":
        missing = no_scenario(prop, run.source, run.seed)
        if missing is not None:
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=missing)
    run.trial.cancellations = run.trial.judged = 0
    try:
        return _search_clause(prop, run.source, run.trial, run.settings, run.seed, run.name)
    except UnresolvedReference as exc:  # a schema the kit refuses to resolve: not a kit bug
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=str(exc))
    except Exception as exc:  # a defect in the kit itself: report, don't crash
        message = f"the kit failed while checking this clause: {describe_exception(exc)}"
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)


def _clause_result(run: _Run, clause_id: str) -> ClauseResult:
    from conformance.properties import PROPERTIES

    clause = catalog.get(clause_id)
    started = time.perf_counter()
    stuck_before = run.trial.stuck
    outcome = _outcome(run, PROPERTIES[clause_id])
    verdict, message = outcome.verdict, outcome.message
    if _went_silent(run, outcome):
        run.trial.silent_since = clause_id
        message = (message + "\n" if message else "") + (
            f"note: the executor stopped answering during {clause_id} (afterwards a fresh "
            "executor did not answer one plain call); later clauses not judged"
        )
    if run.trial.stuck > stuck_before:
        message = (message + "\n" if message else "") + _stuck_note(run, clause_id)
        if run.trial.stuck_since is None:
            run.trial.stuck_since = clause_id
    reason = run.reasons.get(clause_id)
    if reason is not None and verdict in (ClauseStatus.FAIL, ClauseStatus.ERROR):
        verdict = ClauseStatus.XFAIL
    elif reason is not None and verdict is ClauseStatus.PASS:
        verdict = ClauseStatus.FAIL
        message = (
            f"expected to fail ({reason}), but it passed: remove {clause_id} "
            "from the expected-failures list"
        )
    return ClauseResult(
        id=clause_id,
        title=clause.title,
        level=clause.level,
        status=verdict.value,
        examples=outcome.examples,
        seconds=time.perf_counter() - started,
        message=message,
        counterexample=outcome.counterexample,
        reproduce=_reproduce_line(run, clause_id),
        expected_failure=reason,
    )


def _went_silent(run: _Run, outcome: ClauseOutcome) -> bool:
    """A clause failed on a call that did not finish, and the executor no longer answers
    even a plain call: it is stuck, and what follows would fail for that reason alone."""
    if outcome.verdict not in (ClauseStatus.FAIL, ClauseStatus.ERROR):
        return False
    example = outcome.counterexample
    seen = f"{outcome.message or ''} {example.actual if example is not None else ''}"
    return "did not finish within" in seen and not run.trial.answers()


def _stuck_note(run: _Run, clause_id: str) -> str:
    """Defect 9.4: say that the kit changed event loops, and what that means for the rest."""
    what = (
        "the factory builds a fresh executor for each later example"
        if run.mode == "white-box"
        else "later clauses are not charged to this executor (reported error)"
    )
    return (
        f"note: a call in {clause_id} never gave its event loop back, so the kit abandoned "
        f"that loop and moved to a new one; {what}"
    )


_MUTABLE = (dict, list, set, bytearray, collections.deque)


def _state_outside(target: Any, white_box: bool) -> dict[str, str]:
    """Fingerprints of the mutable containers an executor could keep state in outside itself:
    its classes' attributes, its module's globals and (white-box) the factory object's own
    attributes. A change between clauses means state one clause left can decide another's
    verdict, so a failure may not reproduce with ``--only`` (issue 9, defect 11)."""
    kind = target if isinstance(target, type) else type(target)
    namespaces: list[tuple[str, Mapping[str, Any]]] = [
        (klass.__qualname__, vars(klass))
        for klass in kind.__mro__
        if klass.__module__ not in ("builtins", "abc", "typing")
    ]
    if white_box and not isinstance(target, type) and hasattr(target, "__dict__"):
        namespaces.append((f"the factory {kind.__qualname__}", vars(target)))
    module = sys.modules.get(getattr(target, "__module__", None) or kind.__module__)
    if module is not None and module.__name__ != "builtins":
        namespaces.append((module.__name__, vars(module)))
    found: dict[str, str] = {}
    for owner, namespace in namespaces:
        for name, value in list(namespace.items()):
            if name.startswith("__") or not isinstance(value, _MUTABLE):
                continue
            try:
                size = len(value)
                shown = repr(value) if size <= 1000 else ""
            except Exception:
                continue
            found[f"{owner}.{name}"] = f"{size}:{hash(shown)}"
    return found


def _needs_earlier(result: ClauseResult, changed: list[str], ran: list[str]) -> ClauseResult:
    """A failing clause that ran after the target's outside state changed: say so, and name
    the clauses that ran before it (its reproduce line stays ``--only`` the clause)."""
    if result.status != ClauseStatus.FAIL.value or not changed or len(ran) < 2:
        return result
    names = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    note = (
        f" (this failure may need the clauses run before it: state outside the executor "
        f"changed while earlier clauses ran — {names}; reproduce with --only {','.join(ran)})"
    )
    return replace(result, message=(result.message or "") + note)


def _not_run(clause_id: str, failed: str) -> ClauseResult:
    clause = catalog.get(clause_id)
    return ClauseResult(
        id=clause_id,
        title=clause.title,
        level=clause.level,
        status=ClauseStatus.SKIPPED.value,
        examples=0,
        seconds=0.0,
        message=f"not run: --fail-fast stopped at {failed}",
    )


def _make_run(
    target: Any,
    registry: ToolRegistry | None,
    *,
    name: str,
    level: str,
    profile: str,
    seed: int,
    deadline: float,
    reasons: Mapping[str, str],
    database: str | None,
    runner: DeadlineRunner,
    replay: bool = True,
    examples: int | None = None,
) -> _Run:
    mode = _check_target(target, registry)
    from conformance.properties import ScenarioSource

    source = replace(
        ScenarioSource.generated(seed, hypo.profile(profile).pool_size)
        if registry is None
        else ScenarioSource.from_registry(registry),
        hardened=level == "hardened",
    )
    trial = Trial(
        factory=target if mode == "white-box" else None,
        executor=target if mode == "black-box" else None,
        deadline=deadline,
        runner=runner,
    )
    return _Run(
        name=name,
        mode=mode,
        level=level,
        profile=profile,
        seed=seed,
        deadline=deadline,
        reasons=reasons,
        settings=_run_settings(profile, database, replay, examples),
        source=source,
        trial=trial,
    )


def _clause_loop(
    run: _Run,
    target: Any,
    selected: tuple[str, ...],
    fail_fast: bool,
    started: Callable[[str, int, int], None] | None,
    finished: Callable[[ClauseResult], None] | None,
    progress: Callable[[str], None] | None,
) -> list[ClauseResult]:
    """Each selected clause's result in turn, noting state the target changed outside the
    executor between clauses (`_needs_earlier`) and, with `fail_fast`, skipping the rest after
    a failure."""
    results: list[ClauseResult] = []
    initial = _state_outside(target, run.mode == "white-box")
    for index, clause_id in enumerate(selected, start=1):
        stopped = next((r.id for r in results if r.status in ("fail", "error")), None)
        if started is not None:
            started(clause_id, index, len(selected))
        now = _state_outside(target, run.mode == "white-box")
        changed = sorted(k for k in {*initial, *now} if initial.get(k) != now.get(k))
        result = (
            _not_run(clause_id, stopped)
            if fail_fast and stopped
            else _needs_earlier(
                _clause_result(run, clause_id), changed, [*(r.id for r in results), clause_id]
            )
        )
        results.append(result)
        if finished is not None:
            finished(result)
        if progress is not None:
            progress(
                f"[{index:>2}/{len(selected)}] {clause_id:<4} ... {result.status} "
                f"({result.examples} examples, {result.seconds:.1f}s)"
            )
    return results


def certify(
    target: Any,
    *,
    registry: ToolRegistry | None = None,
    level: str = "strict",
    profile: str = "ci",
    seed: int | None = None,
    only: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | None = None,
    deadline: float = EXECUTE_DEADLINE,
    progress: Callable[[str], None] | None = None,
    target_name: str | None = None,
    database: str | None = None,
    fail_fast: bool = False,
) -> Report:
    """Certify an action executor against the contract and return the `Report`.

    White-box (``registry=None``): `target` is a factory ``Callable[[ToolRegistry],
    ActionExecutor]`` (a class such as ``RegistryExecutor`` will do). The kit builds
    registries whose handlers it scripts, asks the factory for a fresh executor per example,
    and checks every V and E clause through the oracle and the handlers' call log.

    Black-box: `target` is an executor and `registry` the registry it serves. Only what needs
    no knowledge of the handlers is checked (E1, E2, E6 when some call can be caught
    suspended, E7, E14, E15, V1–V8); the other clauses are reported ``skipped``. Valid calls
    (V1, E6, E7) really reach the executor's handlers: point it at a test backend.

    `level` ``core`` checks design 0008's clauses, ``strict`` adds the [H] hardening; both
    judge realistic input only. ``hardened`` (opt-in) adds objects that lie about themselves,
    which polyloop's own executor survives and no third party is expected to.
    `profile` picks Hypothesis settings (`conformance.profiles`); a run is reproducible from
    `seed` (default: 0 for ``ci``, random otherwise; the report records it). `only` narrows
    the run to some clause IDs. `expected_failures` maps clause IDs to the reason they are
    known to fail: such a failure is reported ``xfail``, and such a clause that passes is a
    ``fail`` (remove the entry). `deadline` bounds each ``execute`` call in seconds. `progress`
    receives one line per clause as it finishes. `target_name` is how reproduction lines
    name the target (default: derived from `target`). `database` is a directory for a
    Hypothesis example database shared between runs and workers: every counterexample found is
    saved there and replayed first next time, and without a `seed` each run takes a fresh
    random one (reported) so a campaign keeps exploring; with a `seed` the run reproduces
    exactly (it saves to the database but does not replay from it). By default only
    ``thorough`` keeps a database, in ``.hypothesis/``.
    `fail_fast` stops at the first clause that fails or errors; the clauses after it are
    reported ``skipped`` (not run).

    Raises ValueError/TypeError for bad arguments (unknown level, profile or clause ID, a
    target that is neither a factory nor an executor); never for what the executor does.
    """
    return _certify(
        target,
        registry=registry,
        level=level,
        profile=profile,
        seed=seed,
        only=only,
        expected_failures=expected_failures,
        deadline=deadline,
        progress=progress,
        target_name=target_name,
        database=database,
        fail_fast=fail_fast,
    )


def _certify(
    target: Any,
    *,
    registry: ToolRegistry | None,
    level: str,
    profile: str,
    seed: int | None,
    only: Iterable[str] | None,
    expected_failures: Mapping[str, str] | None,
    deadline: float,
    progress: Callable[[str], None] | None,
    target_name: str | None,
    database: str | None,
    fail_fast: bool,
    started: Callable[[str, int, int], None] | None = None,
    finished: Callable[[ClauseResult], None] | None = None,
    runner: DeadlineRunner | None = None,
    replay: bool | None = None,
    examples: int | None = None,
) -> Report:
    """`certify`, with the hooks the command line's child process streams its results through:
    `started(clause_id, index, total)` before a clause runs, `finished(result)` after, and the
    runner to put the target's calls through. `replay` (default: no `seed` was given) says
    whether counterexamples saved in the database are replayed first; the command line passes
    it, having chosen the seed itself. `examples` overrides the profile's example count
    (``--examples``)."""
    replay = seed is None if replay is None else replay
    seed, reasons = _checked_arguments(
        profile, deadline, _campaign_seed(seed, database), expected_failures
    )
    selected = select_clauses(level, only)
    runner = LoopThread() if runner is None else runner
    run = _make_run(
        target,
        registry,
        name=target_name or _target_name(target),
        level=level,
        profile=profile,
        seed=seed,
        deadline=float(deadline),
        reasons=reasons,
        database=database,
        runner=runner,
        replay=replay,
        examples=examples,
    )
    try:
        results = _clause_loop(run, target, selected, fail_fast, started, finished, progress)
    finally:
        runner.close()
    problem = _set_up_problem(results)
    if problem is not None:
        raise SetUpError(problem)
    return Report(
        kit_version=__version__,
        contract_version=catalog.CONTRACT_VERSION,
        target=run.name,
        level=level,
        profile=profile,
        seed=seed,
        python=platform.python_version(),
        results=tuple(results),
        mode=run.mode,
    )
