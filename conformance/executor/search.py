"""One clause's Hypothesis run: the search for a counterexample, what it concluded, and the
probe that tells a black-box registry offering a clause no scenario from a clause to check."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import hypothesis
import hypothesis.errors
from hypothesis import given

from conformance._core import hypo
from conformance._core.capture import OutputCapture
from conformance._core.data import thaw
from conformance._core.outcome import ClauseOutcome, TargetError
from conformance._core.report import ClauseStatus, Counterexample
from conformance.executor.runner import Trial

if TYPE_CHECKING:
    from conformance.executor.properties import Property, Scenario, ScenarioSource, Violation

# `conformance.executor.properties` is imported when a clause runs, not with this module (see
# `conformance.engine`).


@dataclass(kw_only=True)
class _Search:
    """What one clause's Hypothesis run saw (mutable: one per run)."""

    examples: int = 0
    failure: tuple[Scenario, Violation] | None = None
    stop: BaseException | None = None
    capture: OutputCapture | None = None
    """The trial's capture of the target's logging and warnings (issue 9, defect 7)."""
    lines_before: int = 0
    output: tuple[str, ...] = ()
    """What the target logged or warned while the recorded failing example ran."""

    def check(self, prop: Property, trial: Trial, scenario: Scenario) -> None:
        """Run `prop`'s check on `scenario`; a violation is recorded as the failure, with what
        the target logged or warned meanwhile, and raised again."""
        from conformance.executor.properties import Violation

        trial.output.start_example()
        try:
            prop.check(trial, scenario)
        except Violation as violation:
            self.failure = (scenario, violation)
            self.output = trial.output.example_lines()
            raise

    def failed(self, message: str, fallback: str | None = None) -> ClauseOutcome:
        if self.failure is None:
            if fallback is not None:
                return ClauseOutcome(
                    verdict=ClauseStatus.ERROR, examples=self.examples, message=fallback
                )
            return ClauseOutcome(verdict=ClauseStatus.FAIL, examples=self.examples, message=message)
        scenario, recorded = self.failure
        total = self.capture.total - self.lines_before if self.capture is not None else 0
        return ClauseOutcome(
            verdict=ClauseStatus.FAIL,
            examples=self.examples,
            message=recorded.message + message,
            counterexample=counterexample(
                scenario, recorded, output=self.output, output_dropped=total - len(self.output)
            ),
        )


def _hypothesis_test(
    prop: Property, source: ScenarioSource, trial: Trial, search: _Search
) -> Callable[..., None]:
    from conformance.executor.properties import Violation

    def test(scenario: Scenario) -> None:
        if search.stop is not None:
            # The executor hangs or its factory fails: stop exploring. After a hang only the
            # example that hung fails again; failing every later one too would fail examples
            # Hypothesis already saw pass, which it reports as flaky (issue 9, defect 3).
            if (
                isinstance(search.stop, Violation)
                and search.failure is not None
                and scenario != search.failure[0]
            ):
                return
            raise search.stop
        if search.failure is None:
            search.examples += 1
        try:
            search.check(prop, trial, scenario)
        except Violation as violation:
            if violation.stop:
                search.stop = violation
            raise
        except TargetError as exc:
            search.stop = exc
            raise

    return test


PLAIN_SCHEMA: Mapping[str, Any] = {"type": "object"}
"""The simplest ``parameters``: any object of arguments is valid."""


def _plainer_failure(prop: Property, trial: Trial, search: _Search) -> None:
    """Make the counterexample of a dispatch clause point at the bug, not at a schema.

    Hypothesis shrinks towards the start of the schema pool, where the trap schemas are, so a
    dispatch failure often shows a draft-07 ``$ref`` schema that has nothing to do with it. If
    the same actions break the clause with every tool's ``parameters`` replaced by
    `PLAIN_SCHEMA`, that scenario becomes the counterexample."""
    import dataclasses

    if search.failure is None:
        return
    scenario, found = search.failure
    if found.stop or all(tool.parameters == PLAIN_SCHEMA for tool in scenario.tools):
        return  # a hang is not re-run (it would wait out the deadline again)
    plain = dataclasses.replace(
        scenario,
        tools=tuple(dataclasses.replace(tool, parameters=PLAIN_SCHEMA) for tool in scenario.tools),
    )
    with contextlib.suppress(Exception):  # Violation: recorded; else keep Hypothesis's one
        search.check(prop, trial, plain)


EXAMPLES_SHARE = (3, 5)
"""A V/E clause runs three fifths of the profile's examples (30 at ``ci``), its hand-picked
traps besides: the kit's verdict on every executor mutant (`tox -e mutants`) and on every zoo
entry at ``ci`` seed 0 is the same at 30 as at 50; one pinned field verdict (pydantic-ai's E2)
was kept only by giving E2 traps of its own."""


def clause_settings(settings: hypothesis.settings) -> hypothesis.settings:
    """`settings` with the share of its examples one V/E clause generates (at least one)."""
    return hypo.share_of(settings, *EXAMPLES_SHARE)


def search_clause(
    prop: Property,
    source: ScenarioSource,
    trial: Trial,
    settings: hypothesis.settings,
    seed: int,
    label: str,
) -> ClauseOutcome:
    """Run one clause's property under Hypothesis and say what it concluded."""
    from conformance.executor.properties import Violation

    search = _Search(capture=trial.output, lines_before=trial.output.total)
    test = _hypothesis_test(prop, source, trial, search)
    # Distinct database keys per clause and target, since every clause runs this same function.
    hypo.add_digest(test, f"{prop.clause}:{label}".encode())
    traps = [*prop.examples(), *(prop.hostile() if source.hardened else ())]
    # seed() switches the example database off; settings applied after it switch it back on
    # when one was asked for.
    wrapped: Any = settings(hypothesis.seed(seed)(given(prop.scenarios(source))(test)))
    try:
        hypo.run_traps(test, traps if source.white_box else (), settings)
        wrapped()
    except TargetError as exc:
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=search.examples, message=str(exc))
    except Violation as violation:
        if source.white_box and prop.clause.startswith("E"):
            _plainer_failure(prop, trial, search)
        return search.failed("" if search.failure else violation.message)
    except hypothesis.errors.Flaky:
        if isinstance(search.stop, Violation):
            return search.failed("")  # the deadline stop, not a flaky executor
        return search.failed(
            " (flaky: replaying this example did not fail the same way; the executor keeps "
            "state between calls or executors, or is nondeterministic)",
            fallback="Hypothesis reported a flaky test",
        )
    except hypothesis.errors.Unsatisfiable as exc:
        if source.white_box:
            message = f"the kit could not generate scenarios: {exc}"
            return ClauseOutcome(
                verdict=ClauseStatus.ERROR, examples=search.examples, message=message
            )
        message = "no scenario could be generated from the registry's schemas"
        return ClauseOutcome(
            verdict=ClauseStatus.SKIPPED, examples=search.examples, message=message
        )
    except hypothesis.errors.FailedHealthCheck as exc:
        message = f"Hypothesis health check failed: {exc}"
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=search.examples, message=message)
    reason = prop.inconclusive(trial)
    if reason is not None:
        return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=search.examples, message=reason)
    return ClauseOutcome(verdict=ClauseStatus.PASS, examples=search.examples)


_PROBE_ATTEMPTS = 40
"""How many scenario draws `_no_scenario` tries before deciding a registry offers none."""


class _ProbeDone(Exception):
    def __init__(self, found: bool) -> None:
        super().__init__("found" if found else "gave up")
        self.found = found


def no_scenario(prop: Property, source: ScenarioSource, seed: int) -> str | None:
    """Why `prop` can have no scenario on this black-box registry, or None.

    Hypothesis only gives up on a strategy that rejects every draw after hundreds of draws
    (seconds for V7 and E14 on a registry whose schemas allow no call beyond the subset), so
    this counts draws itself and stops after `_PROBE_ATTEMPTS`: a scenario that appears less
    often than that on a registry is skipped rather than checked."""
    inner = prop.scenarios(source)
    misses = [0]

    @hypothesis.strategies.composite
    def attempt(draw: hypothesis.strategies.DrawFn) -> Scenario | None:
        # A rejected draw becomes None here, so the test below sees (and counts) it.
        try:
            return draw(inner)
        except hypothesis.errors.UnsatisfiedAssumption:
            return None

    def found(scenario: Scenario | None) -> None:
        if scenario is not None:
            raise _ProbeDone(found=True)
        misses[0] += 1
        if misses[0] >= _PROBE_ATTEMPTS:
            raise _ProbeDone(found=False)

    probe = hypothesis.settings(
        max_examples=_PROBE_ATTEMPTS,
        phases=[hypothesis.Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        report_multiple_bugs=False,
    )(hypothesis.seed(seed)(given(attempt())(found)))
    try:
        probe()
    except _ProbeDone as done:
        return None if done.found else "no scenario could be generated from the registry's schemas"
    except hypothesis.errors.Unsatisfiable:
        return "no scenario could be generated from the registry's schemas"
    except Exception:
        # Generation itself failed (e.g. a schema the kit refuses to resolve): not "no
        # scenario" — the clause's own run meets the same error and reports it as `error`.
        return None
    return None


def _action_json(action: Any) -> dict[str, Any]:
    call = action.tool_call
    if call is None:
        return {"code": action.code}
    return {"tool_call": {"name": call.name, "arguments": thaw(call.arguments)}}


def _behaviour_text(step: Any) -> str:
    if step.action.tool_call is None:
        return "none (no tool call, so no handler)"
    return step.behaviour.describe() if step.behaviour else "unknown (black-box)"


def counterexample(
    scenario: Scenario,
    violation: Violation,
    *,
    output: tuple[str, ...] = (),
    output_dropped: int = 0,
) -> Counterexample:
    """The report's form of a failing scenario and what the check saw, with what the target
    logged or warned while it ran (`output`) and how many other lines were not kept."""
    steps = scenario.steps
    step = steps[min(violation.step, len(steps) - 1)]
    call = step.action.tool_call
    schemas = scenario.schemas
    schema: object = None
    tools = None
    if call is not None and call.name in schemas:
        schema = schemas[call.name]
    else:
        tools = tuple(schemas)
    if len(steps) == 1:
        return Counterexample(
            schema=schema,
            tools=tools,
            action=_action_json(step.action),
            behaviour=_behaviour_text(step),
            expected=violation.expected,
            actual=violation.actual,
            output=output,
            output_dropped=output_dropped,
        )
    return Counterexample(
        schema=schema,
        tools=tools,
        action=[_action_json(s.action) for s in steps],
        behaviour="; ".join(f"step {i + 1}: {_behaviour_text(s)}" for i, s in enumerate(steps)),
        expected=violation.expected,
        actual=violation.actual,
        output=output,
        output_dropped=output_dropped,
    )
