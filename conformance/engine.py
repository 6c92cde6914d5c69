"""`certify`: check an action executor against the contract, clause by clause.

Each selected clause's property (`conformance.executor.properties`) runs under Hypothesis with the
chosen profile and seed. When a check fails, Hypothesis shrinks the scenario; the kit records
every failing run, and since Hypothesis replays the minimal example last, the last record is
the counterexample the report shows. The executor under test never runs on the kit's own
thread (see `conformance._core.deadline`), so one that hangs, raises or even lets
KeyboardInterrupt escape is reported against the clause being checked.

`certify` is four steps, each its own function: `_checked_arguments`, `_subject` (which
registered subject, `conformance.subjects`, claims the target), `_make_run` (each subject of its
chain builds its trial) and the per-clause loop (`_clause_result`: the owning subject searches
the clause and writes its reproduce line). The engine names no subject.
"""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance import catalog, subjects
from conformance._core import hypo
from conformance._core.deadline import DeadlineRunner, LoopThread
from conformance._core.limits import EXECUTE_DEADLINE
from conformance._core.outcome import ClauseOutcome
from conformance._core.outside import needs_earlier as _needs_earlier
from conformance._core.outside import state_outside as _state_outside
from conformance._core.report import ClauseResult, ClauseStatus, Report
from conformance._core.runs import campaign_seed as _campaign_seed
from conformance._core.runs import run_settings as _run_settings
from conformance._core.subject import RunSpec, Subject, Watched, clause_ids
from conformance._core.text import describe_exception
from conformance._core.wording import DEFAULT_SUBJECT
from conformance.catalog import LEVELS
from polyloop import ToolRegistry, __version__

# The engine knows subjects only through the registry (`conformance.subjects`): it names none.

__all__ = [
    "CERTIFIABLE",
    "CERTIFIED_CLAUSES",
    "LEVELS",
    "ClauseStatus",
    "SetUpError",
    "certify",
    "select_clauses",
]


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
            again = f"; reproduce: {r.reproduce}" if r.reproduce else ""
            return (
                f"the kit failed while checking {r.id} (a bug in the kit, please report it "
                f"with this line): {detail}{again}"
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


CERTIFIED_CLAUSES: tuple[str, ...] = subjects.DEFAULT.clauses
"""The clauses `certify` checks for the default subject, an action executor (V1–V8, E1–E15,
one property each in `conformance.executor.properties`); the others concern specs,
registries, tool authors and the API, and have their own checks."""


CERTIFIABLE: tuple[str, ...] = clause_ids(
    subject for subject in subjects.SUBJECTS if subject.certified
)
"""Every clause ID certify can check: each certified subject's own clauses (V/E for any
executor, B1–B18 for a batch executor)."""

ANY = "any"
"""The `select_clauses` subject that stands for every certified subject (the command line
selects before it knows the target's kind)."""


def _pool(subject: str) -> tuple[str, ...]:
    """The clauses a target of `subject` is certified on (`ANY`: every certifiable clause)."""
    certified = subjects.certified()
    if subject == ANY:
        return clause_ids(certified)
    found = next((s for s in certified if s.name == subject), None)
    if found is None:
        choose = ", ".join([*(s.name for s in certified), ANY])
        raise ValueError(f"unknown subject {subject!r}; choose {choose}")
    return clause_ids(subjects.chain(found))


def _clause_list(
    ids: Iterable[str], what: str, allowed: tuple[str, ...] = CERTIFIABLE
) -> list[str]:
    if isinstance(ids, str):
        ids = [part for part in ids.replace(",", " ").split() if part]
    chosen = []
    for clause_id in ids:
        catalog.get(clause_id)  # ValueError listing the known clauses
        owner = subjects.owner(clause_id)
        if owner is not None and owner.certified and clause_id not in allowed:
            raise ValueError(f"{what} names {clause_id}, {owner.wrong_target}")
        if clause_id not in allowed:
            raise ValueError(
                f"{what} names {clause_id}, which certify does not check; it "
                f"checks {', '.join(allowed)}"
            )
        chosen.append(clause_id)
    return chosen


def select_clauses(
    level: str, only: Iterable[str] | None = None, subject: str = DEFAULT_SUBJECT
) -> tuple[str, ...]:
    """The clause IDs a run at `level` checks, in contract order, narrowed to `only`.

    `subject` names a registered subject (`conformance.subjects`): ``executor`` (the default)
    is V1–V8 and E1–E15; ``batch`` adds B1–B18 (a batch executor: V/E through one-call
    batches); ``any`` selects every certifiable clause, what the command line uses before it
    knows the target's kind."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose {', '.join(LEVELS)}")
    pool = _pool(subject)
    in_level = [c for c in pool if level != "core" or catalog.get(c).level == "core"]
    if only is None:
        return tuple(in_level)
    wanted = _clause_list(only, "--only", pool)
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
class _View:
    """One subject of a run's chain: the target as that subject checks it, and its trial."""

    subject: Subject
    spec: RunSpec
    trial: Any


@dataclass(frozen=True, kw_only=True)
class _Run:
    """One certification's checked arguments and the machinery they set up."""

    spec: RunSpec
    """The run's settings, with the target as given (each view has its own, adapted)."""
    reasons: Mapping[str, str]
    subject: Subject
    views: Mapping[str, _View]
    """Each subject of the chain (`conformance.subjects.chain`) by name."""
    watched: Watched
    """The trial of the chain's innermost subject, which the engine watches between clauses."""

    def view(self, clause_id: str) -> _View:
        owner = subjects.owner(clause_id)
        if owner is None or owner.name not in self.views:
            raise ValueError(f"{clause_id} is not a clause of subject {self.subject.name}")
        return self.views[owner.name]


def _subject_for(target: Any, registry: ToolRegistry | None) -> Subject:
    """The certified subject that claims `target` most specifically (`Subject.claims`); the
    default subject when none does (its `mode` then says what the target should be)."""
    claims = [(subject.claims(target, registry), subject) for subject in subjects.certified()]
    best, found = max(claims, key=lambda pair: pair[0])
    return found if best > 0 else subjects.DEFAULT


def _subject(target: Any, registry: ToolRegistry | None) -> str:
    """The name of the subject `target` is certified as; a target that subject cannot call
    as its factory signature says (a batch factory without ``max_concurrency=``) is a
    `SetUpError` in one line."""
    subject = _subject_for(target, registry)
    problem = subject.set_up_problem(target, registry)
    if problem is not None:
        raise SetUpError(problem)
    return subject.name


def is_instance(found: object) -> bool:
    """An executor instance of any subject `certify` takes (`Subject.is_instance`)."""
    return any(subject.is_instance(found) for subject in subjects.certified())


def only_for(only: Sequence[str] | None, subject: str, given: bool) -> list[str] | None:
    """The command line selects for the default subject (or, with ``--only``, for any)
    before it knows the target's kind. For the subject the child found: None when the
    selection was the default one and the subject is another (everything its level selects);
    else the selection narrowed to the subject's clauses, unless the user named some it does
    not check (then the selection reports that they do not apply)."""
    found = subjects.by_name(subject)
    if only is None or (not given and found is not subjects.DEFAULT):
        return None
    wanted = list(only)
    pool = _pool(subject)
    kept = [c for c in wanted if c in pool]
    return wanted if given and len(kept) != len(wanted) else kept


def through_clauses(subject: str, ids: Iterable[str]) -> tuple[str, ...]:
    """Of `ids`, those a target of `subject` answered through another subject's view of it
    (a batch executor's V/E clauses, through one-call batches); () for a subject checked
    through none."""
    found = subjects.by_name(subject)
    if found.through is None:
        return ()
    return tuple(clause_id for clause_id in ids if clause_id not in found.clauses)


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


def _search_clause(view: _View, clause_id: str) -> ClauseOutcome:
    """One clause's search by the subject that checks it (patched by tests)."""
    return view.subject.search(view.spec, view.trial, clause_id)


def _outcome(view: _View, clause_id: str) -> ClauseOutcome:
    try:
        return _search_clause(view, clause_id)
    except Exception as exc:  # a defect in the kit itself: report, don't crash
        message = f"the kit failed while checking this clause: {describe_exception(exc)}"
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)


def _clause_result(run: _Run, clause_id: str) -> ClauseResult:
    clause = catalog.get(clause_id)
    view = run.view(clause_id)
    started = time.perf_counter()
    stuck_before = run.watched.stuck
    outcome = _outcome(view, clause_id)
    verdict, message = outcome.verdict, outcome.message
    if _went_silent(run, outcome):
        run.watched.silent_since = clause_id
        message = (message + "\n" if message else "") + (
            f"note: the executor stopped answering during {clause_id} (afterwards a fresh "
            "executor did not answer one plain call); later clauses not judged"
        )
    if run.watched.stuck > stuck_before:
        message = (message + "\n" if message else "") + _stuck_note(run, clause_id)
        if run.watched.stuck_since is None:
            run.watched.stuck_since = clause_id
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
        reproduce=view.subject.reproduce(view.spec, clause_id),
        expected_failure=reason,
    )


def _went_silent(run: _Run, outcome: ClauseOutcome) -> bool:
    """A clause failed on a call that did not finish, and the executor no longer answers
    even a plain call: it is stuck, and what follows would fail for that reason alone."""
    if outcome.verdict not in (ClauseStatus.FAIL, ClauseStatus.ERROR):
        return False
    example = outcome.counterexample
    seen = f"{outcome.message or ''} {example.actual if example is not None else ''}"
    return "did not finish within" in seen and not run.watched.answers()


def _stuck_note(run: _Run, clause_id: str) -> str:
    """Defect 9.4: say that the kit changed event loops, and what that means for the rest."""
    what = (
        "the factory builds a fresh executor for each later example"
        if run.spec.mode == "white-box"
        else "later clauses are not charged to this executor (reported error)"
    )
    return (
        f"note: a call in {clause_id} never gave its event loop back, so the kit abandoned "
        f"that loop and moved to a new one; {what}"
    )


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


def _make_run(spec: RunSpec, subject: Subject, reasons: Mapping[str, str]) -> _Run:
    """The run's views, outermost subject first: each builds its trial over the target as it
    sees it, then hands the next subject its view of the target (`Subject.adapt`)."""
    views: dict[str, _View] = {}
    seen = spec.target
    for each in reversed(subjects.chain(subject)):
        view = replace(spec, target=seen)
        views[each.name] = _View(subject=each, spec=view, trial=each.trial(view))
        seen = each.adapt(seen, spec.mode)
    innermost = views[subjects.chain(subject)[0].name]
    return _Run(
        spec=spec,
        reasons=reasons,
        subject=subject,
        views=views,
        watched=innermost.subject.watch(innermost.trial),
    )


def _clause_loop(
    run: _Run,
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
    target, white_box = run.spec.target, run.spec.mode == "white-box"
    initial = _state_outside(target, white_box)
    for index, clause_id in enumerate(selected, start=1):
        stopped = next((r.id for r in results if r.status in ("fail", "error")), None)
        if started is not None:
            started(clause_id, index, len(selected))
        now = _state_outside(target, white_box)
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
    share: bool = False,
) -> Report:
    """`certify`, with the hooks the command line's child process streams its results through:
    `started(clause_id, index, total)` before a clause runs, `finished(result)` after, and the
    runner to put the target's calls through. `replay` (default: no `seed` was given) says
    whether counterexamples saved in the database are replayed first; the command line passes
    it, having chosen the seed itself. `examples` overrides the profile's example count
    (``--examples``); `share` runs the subjects' clauses in turn (``--budget``), the report
    keeping contract order."""
    replay = seed is None if replay is None else replay
    seed, reasons = _checked_arguments(
        profile, deadline, _campaign_seed(seed, database), expected_failures
    )
    subject = _subject(target, registry)
    selected = select_clauses(level, only, subject)
    found = subjects.by_name(subject)
    spec = RunSpec(
        target=target,
        registry=registry,
        mode=found.mode(target, registry),
        name=target_name or _target_name(target),
        level=level,
        profile=profile,
        seed=seed,
        deadline=float(deadline),
        settings=_run_settings(profile, database, replay, examples),
        runner=LoopThread() if runner is None else runner,
    )
    run = _make_run(spec, found, reasons)
    try:
        order = subjects.shared_order(selected) if share else selected
        results = _clause_loop(run, order, fail_fast, started, finished, progress)
        results.sort(key=lambda result: selected.index(result.id))
    finally:
        spec.runner.close()
    problem = _set_up_problem(results)
    if problem is not None:
        raise SetUpError(problem)
    return Report(
        kit_version=__version__,
        contract_version=catalog.CONTRACT_VERSION,
        target=spec.name,
        level=level,
        profile=profile,
        seed=seed,
        python=platform.python_version(),
        results=tuple(results),
        mode=spec.mode,
        subject=subject,
        through_one_call_batches=through_clauses(subject, (r.id for r in results)),
    )
