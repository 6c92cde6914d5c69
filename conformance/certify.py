"""`certify`: check an action executor against the contract, clause by clause.

Each selected clause's property (`conformance.properties`) runs under Hypothesis with the
chosen profile and seed. When a check fails, Hypothesis shrinks the scenario; the kit records
every failing run, and since Hypothesis replays the minimal example last, the last record is
the counterexample the report shows. The executor under test never runs on the kit's own
thread (see `conformance._runner`), so one that hangs, raises or even lets KeyboardInterrupt
escape is reported against the clause being checked.
"""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import hypothesis
import hypothesis.errors
from hypothesis import Verbosity, example, given
from hypothesis.database import DirectoryBasedExampleDatabase

from conformance import catalog
from conformance._runner import LoopThread, TargetError, Trial
from conformance.behaviours import plain_copy
from conformance.profiles import PROFILES, hypothesis_settings
from conformance.report import ClauseResult, Counterexample, Report
from polyloop import ToolRegistry, __version__

if TYPE_CHECKING:
    from conformance.properties import Property, Scenario, ScenarioSource, Violation

# `conformance.properties` (and with it the strategies and hypothesis-jsonschema) is imported
# when certify runs, not when this module is: the pytest plugin imports the package at pytest
# start-up, where loading Hypothesis's Unicode tables is not allowed.

__all__ = ["CERTIFIED_CLAUSES", "LEVELS", "certify", "select_clauses"]

LEVELS = ("core", "strict")
CERTIFIED_CLAUSES: tuple[str, ...] = tuple(
    clause.id for clause in catalog.CLAUSES if clause.section in ("validation", "dispatch")
)
"""The clauses `certify` checks (V1–V8, E1–E14, one property each in
`conformance.properties`); the others concern specs, registries, tool authors and the API, and
have their own checks."""

_POOL_SIZES = {"quick": 120, "ci": 300, "thorough": 2000}


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
        raise ValueError(f"unknown level {level!r}; choose core or strict")
    in_level = [c for c in CERTIFIED_CLAUSES if level == "strict" or catalog.get(c).level == "core"]
    if only is None:
        return tuple(in_level)
    wanted = _clause_list(only, "--only")
    outside = [c for c in wanted if c not in in_level]
    if outside:
        raise ValueError(
            f"{', '.join(outside)}: not checked at level {level} (strict clauses need level strict)"
        )
    return tuple(c for c in in_level if c in wanted)


def _describe_target(target: object) -> str:
    if isinstance(target, type) or (callable(target) and hasattr(target, "__qualname__")):
        return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"
    kind = type(target)
    return f"{kind.__module__}:{kind.__qualname__} instance"


def _action_json(action: Any) -> dict[str, Any]:
    call = action.tool_call
    if call is None:
        return {"code": action.code}
    return {"tool_call": {"name": call.name, "arguments": plain_copy(call.arguments)}}


def _behaviour_text(step: Any) -> str:
    if step.action.tool_call is None:
        return "none (no tool call, so no handler)"
    return step.behaviour.describe() if step.behaviour else "unknown (black-box)"


def _counterexample(scenario: Scenario, violation: Violation) -> Counterexample:
    steps = scenario.steps
    step = steps[min(violation.step, len(steps) - 1)]
    call = step.action.tool_call
    schemas = scenario.schemas
    schema: object
    if call is not None and call.name in schemas:
        schema = schemas[call.name]
    else:
        schema = {"registered tools": list(schemas)}
    if len(steps) == 1:
        action: object = _action_json(step.action)
    else:
        action = [_action_json(s.action) for s in steps]
    if len(steps) == 1:
        behaviour = _behaviour_text(step)
    else:
        behaviour = "; ".join(f"step {i + 1}: {_behaviour_text(s)}" for i, s in enumerate(steps))
    return Counterexample(
        schema=schema,
        action=action,
        behaviour=behaviour,
        expected=violation.expected,
        actual=violation.actual,
    )


@dataclass(kw_only=True)
class _Search:
    """What one clause's Hypothesis run saw."""

    examples: int = 0
    failure: tuple[Scenario, Violation] | None = None
    stop: BaseException | None = None


def _run_property(
    prop: Property,
    source: ScenarioSource,
    trial: Trial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
) -> tuple[str, int, str | None, Counterexample | None]:
    from conformance.properties import Violation

    search = _Search()

    def test(scenario: Scenario) -> None:
        if search.stop is not None:
            raise search.stop  # the executor hangs or its factory fails: stop exploring
        if search.failure is None:
            search.examples += 1
        try:
            prop.check(trial, scenario)
        except Violation as violation:
            search.failure = (scenario, violation)
            if violation.stop:
                search.stop = violation
            raise
        except TargetError as exc:
            search.stop = exc
            raise

    # Distinct database keys per clause and target, since every clause runs this same function.
    test._hypothesis_internal_add_digest = f"{prop.clause}:{label}".encode()  # type: ignore[attr-defined]
    wrapped: Any = test
    if source.white_box:
        for scenario in reversed(prop.examples()):
            wrapped = example(scenario)(wrapped)
    wrapped = given(prop.scenarios(source))(wrapped)
    # seed() switches the example database off; settings applied after it switch it back on
    # when one was asked for.
    wrapped = settings(hypothesis.seed(seed)(wrapped))
    try:
        wrapped()
    except TargetError as exc:
        return "error", search.examples, str(exc), None
    except Violation as violation:
        if search.failure is None:
            return "fail", search.examples, violation.message, None
        scenario, recorded = search.failure
        return "fail", search.examples, recorded.message, _counterexample(scenario, recorded)
    except hypothesis.errors.Flaky:
        if search.failure is None:
            return "error", search.examples, "Hypothesis reported a flaky test", None
        scenario, recorded = search.failure
        return (
            "fail",
            search.examples,
            recorded.message + " (flaky: replaying this example "
            "did not fail the same way; the executor is nondeterministic)",
            _counterexample(scenario, recorded),
        )
    except hypothesis.errors.Unsatisfiable as exc:
        if source.white_box:
            return "error", search.examples, f"the kit could not generate scenarios: {exc}", None
        return (
            "skipped",
            search.examples,
            "no scenario could be generated from the registry's schemas",
            None,
        )
    except hypothesis.errors.FailedHealthCheck as exc:
        return "error", search.examples, f"Hypothesis health check failed: {exc}", None
    return "pass", search.examples, None, None


def certify(
    target: Any,
    *,
    registry: ToolRegistry | None = None,
    level: str = "strict",
    profile: str = "ci",
    seed: int | None = None,
    only: Iterable[str] | None = None,
    expected_failures: Mapping[str, str] | None = None,
    deadline: float = 5.0,
    progress: Callable[[str], None] | None = None,
    target_name: str | None = None,
    database: str | None = None,
) -> Report:
    """Certify an action executor against the contract and return the `Report`.

    White-box (``registry=None``): `target` is a factory ``Callable[[ToolRegistry],
    ActionExecutor]`` (a class such as ``RegistryExecutor`` will do). The kit builds
    registries whose handlers it scripts, asks the factory for a fresh executor per example,
    and checks every V and E clause through the oracle and the handlers' call log.

    Black-box: `target` is an executor and `registry` the registry it serves. Only what needs
    no knowledge of the handlers is checked (E1, E2, E6 when some call can be caught
    suspended, E7, V1–V8); the other clauses are reported ``skipped``. Valid calls (V1, E6,
    E7) really reach the executor's handlers: point it at a test backend.

    `level` ``core`` checks design 0008's clauses, ``strict`` adds the [H] hardening.
    `profile` picks Hypothesis settings (`conformance.profiles`); a run is reproducible from
    `seed` (default: 0 for ``ci``, random otherwise; the report records it). `only` narrows
    the run to some clause IDs. `expected_failures` maps clause IDs to the reason they are
    known to fail: such a failure is reported ``xfail``, and such a clause that passes is a
    ``fail`` (remove the entry). `deadline` bounds each ``execute`` call in seconds. `progress`
    receives one line per clause as it finishes. `target_name` is how reproduction lines
    name the target (default: derived from `target`). `database` is a directory for a
    Hypothesis example database shared between runs and workers (every counterexample found is
    replayed first next time); by default only ``thorough`` keeps one, in ``.hypothesis/``.

    Raises ValueError/TypeError for bad arguments (unknown level, profile or clause ID, a
    target that is neither a factory nor an executor); never for what the executor does.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of: {', '.join(PROFILES)}")
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)) or not deadline > 0:
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    selected = select_clauses(level, only)
    reasons = dict(expected_failures or {})
    _clause_list(reasons, "the expected-failures list")
    blank = [
        clause
        for clause, reason in reasons.items()
        if not isinstance(reason, str) or not reason.strip()
    ]
    if blank:
        raise ValueError(f"expected failures need a reason; none given for {', '.join(blank)}")
    if registry is None:
        if not callable(target):
            raise TypeError(
                f"certify(target) needs a factory Callable[[ToolRegistry], "
                f"ActionExecutor], got {type(target).__name__}; to certify an "
                "executor instance (black-box), pass registry= too"
            )
        mode = "white-box"
    else:
        if not isinstance(registry, ToolRegistry):
            raise TypeError(f"registry must be a ToolRegistry, got {type(registry).__name__}")
        if not callable(getattr(target, "execute", None)):
            raise TypeError(
                f"black-box certify needs an executor with an execute method, got "
                f"{type(target).__name__}"
            )
        mode = "black-box"
    if seed is None:
        seed = 0 if profile == "ci" else random.SystemRandom().randrange(2**32)
    elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    from conformance.properties import PROPERTIES, ScenarioSource

    name = target_name or _describe_target(target)
    settings = hypothesis.settings(hypothesis_settings(profile), verbosity=Verbosity.quiet)
    if database is not None:
        # Every run is seeded explicitly, so dropping derandomize (which forbids a database)
        # changes nothing else.
        settings = hypothesis.settings(
            settings, derandomize=False, database=DirectoryBasedExampleDatabase(database)
        )
    source = (
        ScenarioSource.generated(seed, _POOL_SIZES[profile])
        if registry is None
        else ScenarioSource.from_registry(registry)
    )
    loop = LoopThread()
    trial = Trial(
        factory=target if mode == "white-box" else None,
        executor=target if mode == "black-box" else None,
        deadline=float(deadline),
        loop=loop,
    )
    results = []
    try:
        for index, clause_id in enumerate(selected, start=1):
            clause = catalog.get(clause_id)
            prop = PROPERTIES[clause_id]
            started = time.perf_counter()
            counterexample: Counterexample | None = None
            message: str | None
            if mode == "black-box" and not prop.black_box:
                status, examples, message = (
                    "skipped",
                    0,
                    "needs the kit's scripted handlers: certify a factory (white-box) to check it",
                )
            elif mode == "black-box" and prop.aim and source.inapplicable(prop.aim):
                status, examples = "skipped", 0
                message = source.inapplicable(prop.aim)
            else:
                trial.cancellations = 0
                try:
                    status, examples, message, counterexample = _run_property(
                        prop, source, trial, settings, seed, name
                    )
                    if (
                        clause_id == "E6"
                        and mode == "black-box"
                        and status == "pass"
                        and not trial.cancellations
                    ):
                        status = "skipped"
                        message = (
                            "no call was still running when the kit cancelled it, so "
                            "cancellation could not be observed"
                        )
                except Exception as exc:  # a defect in the kit itself: report, don't crash
                    status, examples = "error", 0
                    message = (
                        f"the kit failed while checking this clause: {type(exc).__name__}: {exc}"
                    )
            seconds = time.perf_counter() - started
            reproduce = (
                f"polyloop-conformance certify {name} --level {level} --profile "
                f"{profile} --seed {seed} --only {clause_id}"
                + (f" --deadline {deadline:g}" if deadline != 5.0 else "")
            )
            reason = reasons.get(clause_id)
            if reason is not None and status in ("fail", "error"):
                status = "xfail"
            elif reason is not None and status == "pass":
                status = "fail"
                message = (
                    f"expected to fail ({reason}), but it passed: remove {clause_id} "
                    "from the expected-failures list"
                )
            result = ClauseResult(
                id=clause_id,
                title=clause.title,
                level=clause.level,
                status=status,
                examples=examples,
                seconds=seconds,
                message=message,
                counterexample=counterexample,
                reproduce=reproduce,
                expected_failure=reason,
            )
            results.append(result)
            if progress is not None:
                progress(
                    f"[{index:>2}/{len(selected)}] {clause_id:<4} ... {status} "
                    f"({examples} examples, {seconds:.1f}s)"
                )
    finally:
        loop.close()
    return Report(
        kit_version=__version__,
        contract_version=catalog.CONTRACT_VERSION,
        target=name,
        level=level,
        profile=profile,
        seed=seed,
        python=platform.python_version(),
        results=tuple(results),
        mode=mode,
    )
