"""One property per contract clause, all of one shape.

A `Property` pairs a strategy for scenarios (tools, the actions sent to them, what their
handlers do) with a check that runs a scenario through a `Trial` and raises `Violation` when
the executor breaks *that* clause — and only that clause, so a report points at the rule that
was broken. `PROPERTIES` maps each clause ID to its property, like a keyword table: the
catalog row, the report line, the `ExecutorContract` test and the check are found by one ID.

Every check judges the executor through the oracle and the scripted handlers' call log, never
through the executor's own account of what it did.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from conformance import strategies as gen
from conformance._runner import Step, Trial
from conformance.behaviours import (
    Behaviour,
    MutateArguments,
    RaiseBaseException,
    RaiseError,
    RaiseUnprintable,
    ReturnText,
    Suspend,
    YieldFirst,
    plain_copy,
)
from conformance.oracle import (
    STR_FAILED,
    Expectation,
    Expected,
    Observed,
    expect,
    mentions,
    mismatch,
)
from conformance.strategies import ToolDef
from polyloop import Action, ActionOutcome, ActionStatus, ToolCall, ToolRegistry

__all__ = ["PROPERTIES", "Property", "Scenario", "ScenarioSource", "Violation"]


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """Tools, and the actions sent to an executor serving them."""

    tools: tuple[ToolDef, ...]
    steps: tuple[Step, ...]

    @property
    def schemas(self) -> dict[str, Mapping[str, Any]]:
        return {tool.name: tool.parameters for tool in self.tools}


class Violation(Exception):
    """The executor broke the clause being checked, on step `step` of the scenario."""

    def __init__(
        self,
        message: str,
        *,
        step: int = 0,
        expected: str = "",
        actual: str = "",
        stop: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.step = step
        self.expected = expected
        self.actual = actual
        self.stop = stop
        """No point in searching further (the executor hangs): report this example as is."""


@dataclass(frozen=True, kw_only=True)
class ScenarioSource:
    """Where scenarios get their tools: generated per example (white-box), or the fixed
    registry a black-box executor serves."""

    white_box: bool
    tools: st.SearchStrategy[tuple[ToolDef, ...]]
    fixed: tuple[ToolDef, ...] = ()
    pool: tuple[dict[str, Any], ...] = ()

    @classmethod
    def generated(cls, seed: int, pool_size: int) -> ScenarioSource:
        pool = gen.schema_pool(seed, pool_size)
        schemas = st.integers(0, len(pool) - 1).map(pool.__getitem__)
        return cls(
            white_box=True, pool=pool, tools=gen.tool_definition_sets(max_size=3, schemas=schemas)
        )

    @classmethod
    def from_registry(cls, registry: ToolRegistry) -> ScenarioSource:
        tools = tuple(
            ToolDef(
                name=spec.name,
                description=spec.description,
                parameters=plain_copy(spec.parameters),
                replay_policy=spec.replay_policy,
                completes_run=spec.completes_run,
            )
            for spec in registry.specs
        )
        return cls(white_box=False, tools=st.just(tools), fixed=tools)

    def tools_for(self, aim: str) -> st.SearchStrategy[tuple[ToolDef, ...]]:
        """Tool sets with at least one tool an `invalid_calls` aim can target."""
        if not self.white_box or aim in ("V2", "V3"):
            return self.tools
        eligible = [schema for schema in self.pool if gen.aim_possible(aim, schema)]
        return st.tuples(
            self.tools, st.sampled_from(eligible), gen.tool_names(allow_long=False)
        ).map(lambda parts: _with_tool(*parts, aim=aim))

    def padded(self) -> st.SearchStrategy[tuple[ToolDef, ...]]:
        """Tool sets that now and then hold more than 20 tools (V2 names up to 20 of them;
        V8 keeps the message short anyway)."""
        if not self.white_box:
            return self.tools
        return st.tuples(self.tools, st.integers(0, 4)).map(
            lambda parts: parts[0] if parts[1] < 4 else _padded(parts[0])
        )

    def inapplicable(self, aim: str) -> str | None:
        """Why a black-box registry offers nothing to aim at, or None."""
        if self.white_box or aim in ("V2",):
            return None
        if not self.fixed:
            return "the registry has no tools"
        if not any(gen.aim_possible(aim, tool.parameters) for tool in self.fixed):
            return {
                "V4": "no tool in the registry has required keys",
                "V5": "no tool in the registry has additionalProperties: false",
                "V6": "no tool in the registry declares a top-level property type",
            }.get(aim, "the registry offers nothing to check")
        return None


def _padded(tools: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
    taken = {tool.name for tool in tools}
    extra = [
        ToolDef(name=f"extra_tool_{index:02d}", description="", parameters={"type": "object"})
        for index in range(24)
    ]
    return (*tools, *(tool for tool in extra if tool.name not in taken))


def _with_tool(
    tools: tuple[ToolDef, ...], schema: dict[str, Any], name: str, *, aim: str
) -> tuple[ToolDef, ...]:
    if any(gen.aim_possible(aim, tool.parameters) for tool in tools):
        return tools
    taken = {tool.name for tool in tools}
    while name in taken:
        name += "_"
    return (*tools, ToolDef(name=name, description="", parameters=schema))


@dataclass(frozen=True, kw_only=True)
class Property:
    """How one clause is checked: scenarios to try, and the check for one scenario."""

    clause: str
    scenarios: Callable[[ScenarioSource], st.SearchStrategy[Scenario]]
    check: Callable[[Trial, Scenario], None]
    black_box: bool
    """Whether the check needs nothing from the handlers (so it also runs black-box)."""
    aim: str | None = None
    """The invalid-call aim whose absence from a black-box registry skips this clause."""
    examples: Callable[[], Sequence[Scenario]] = field(default=lambda: ())
    """Hand-picked white-box scenarios tried before the generated ones."""
    inconclusive: Callable[[Trial], str | None] = field(default=lambda _trial: None)
    """After a run in which every check passed: why that pass proves nothing (the clause is then
    reported skipped), or None."""


# ---------------------------------------------------------------------------------------------
# Scenario strategies


def _calls(
    kind: str, aims: Sequence[str] = gen.INVALID_AIMS
) -> Callable[[tuple[ToolDef, ...]], st.SearchStrategy[Action]]:
    def actions(tools: tuple[ToolDef, ...]) -> st.SearchStrategy[Action]:
        if kind == "code":
            return gen.code_actions()
        calls: st.SearchStrategy[ToolCall] = {
            "valid": lambda: gen.valid_calls(tools),
            "invalid": lambda: gen.invalid_calls(tools, aims),
            "beyond": lambda: gen.beyond_subset_calls(tools),
        }[kind]()
        return calls.map(lambda call: Action(tool_call=call))

    return actions


def _single(
    kinds: Sequence[str],
    behaviours: Sequence[str] = ("text",),
    *,
    aims: Sequence[str] = gen.INVALID_AIMS,
    tools_aim: str | None = None,
    padded: bool = False,
) -> Callable[[ScenarioSource], st.SearchStrategy[Scenario]]:
    """Scenarios of one action of one of `kinds` (valid, invalid, beyond, code)."""

    def scenarios(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
        tools_strategy = (
            source.tools_for(tools_aim)
            if tools_aim
            else source.padded()
            if padded
            else source.tools
        )
        handler = gen.handler_behaviours(behaviours)

        @st.composite
        def build(draw: st.DrawFn) -> Scenario:
            tools = draw(tools_strategy)
            kind = draw(st.sampled_from(list(kinds)))
            action = draw(_calls(kind, aims)(tools))
            behaviour = draw(handler) if source.white_box else None
            return Scenario(tools=tools, steps=(Step(action=action, behaviour=behaviour),))

        return build()

    return scenarios


def _many(
    kinds: Sequence[str], behaviours: Sequence[str], *, low: int = 2, high: int = 5
) -> Callable[[ScenarioSource], st.SearchStrategy[Scenario]]:
    """Scenarios of several actions, each with its own (yielding) behaviour."""

    def scenarios(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
        handler = gen.handler_behaviours(behaviours)

        @st.composite
        def build(draw: st.DrawFn) -> Scenario:
            tools = draw(source.tools)
            steps = []
            for _ in range(draw(st.integers(low, high))):
                action = draw(_calls(draw(st.sampled_from(list(kinds))))(tools))
                behaviour = YieldFirst(times=draw(st.integers(0, 4)), then=draw(handler))
                steps.append(Step(action=action, behaviour=behaviour))
            return Scenario(tools=tools, steps=tuple(steps))

        return build()

    return scenarios


def _repeated(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
    """One valid call sent twice to a handler that mutates what it receives (E13)."""

    @st.composite
    def build(draw: st.DrawFn) -> Scenario:
        tools = draw(source.tools)
        action = Action(tool_call=draw(gen.valid_calls(tools)))
        behaviour = MutateArguments(then=ReturnText(text=draw(st.text(max_size=10))))
        step = Step(action=action, behaviour=behaviour)
        return Scenario(tools=tools, steps=(step, step))

    return build()


# ---------------------------------------------------------------------------------------------
# Shared pieces of the checks


def _only(trial: Trial, scenario: Scenario) -> tuple[Step, Expectation, Observed]:
    step = scenario.steps[0]
    observed = trial.run(scenario.tools, scenario.steps)[0]
    expectation = expect(scenario.schemas, step.action, step.behaviour, white_box=trial.white_box)
    _stop_if_hung(observed, expectation)
    return step, expectation, observed


def _stop_if_hung(observed: Observed, expectation: Expectation, index: int = 0) -> None:
    if observed.timed_out is not None:
        raise Violation(
            f"execute did not finish within the {observed.timed_out:g}s deadline",
            step=index,
            expected=expectation.describe(),
            actual=observed.describe(),
            stop=True,
        )


def _dispatched(observed: Observed) -> bool:
    """Whether the call reached its handler (white-box only)."""
    return bool(observed.calls)


def _rejected_instead(trial: Trial, observed: Observed) -> bool:
    """A valid call was rejected and never reached its handler: that is V1's failure, and
    leaves nothing for the dispatch clauses to judge. (Raising, or an outcome that is not a
    rejection, without running the handler still fails them: the outcome is not the
    handler's.)"""
    return trial.white_box and not observed.calls and _rejected_outcome(observed)


def _rejected_outcome(observed: Observed) -> bool:
    return (
        isinstance(observed.outcome, ActionOutcome)
        and observed.outcome.status is ActionStatus.NOT_EXECUTED
    )


def _violation(
    message: str, expectation: Expectation | Expected, observed: Observed, index: int = 0
) -> Violation:
    return Violation(
        message, step=index, expected=expectation.describe(), actual=observed.describe()
    )


def _require(expected: Expected, observed: Observed, clause_words: str) -> None:
    problem = mismatch(expected, observed)
    if problem is not None:
        raise _violation(f"{clause_words}: {problem}", expected, observed)


def _handler_outcome(trial: Trial, scenario: Scenario, words: str) -> None:
    """E3/E4/E5/E9: once a valid call reached its handler, the outcome is exactly the one the
    handler's behaviour calls for. (Being rejected instead is V1's concern.)"""
    _, expectation, observed = _only(trial, scenario)
    if _rejected_instead(trial, observed):
        return
    _require(replace(expectation.dispatched()[0], handler_calls=None), observed, words)


# ---------------------------------------------------------------------------------------------
# The checks, one per clause


def check_V1(trial: Trial, scenario: Scenario) -> None:
    """A call full JSON Schema accepts is never rejected."""
    _, expectation, observed = _only(trial, scenario)
    if trial.white_box and not _dispatched(observed):
        raise _violation(
            "a call that JSON Schema accepts never reached its handler", expectation, observed
        )
    if _rejected_outcome(observed):
        raise _violation(
            "a call that JSON Schema accepts was rejected (NOT_EXECUTED)", expectation, observed
        )


def _rejected(
    trial: Trial, scenario: Scenario, clause: str, words: str
) -> tuple[Expectation, Observed]:
    """V2–V6: the call must be rejected (NOT_EXECUTED), and the rejection must name what
    `clause` says it names. Whether the handler ran anyway is E8's concern, so a handler run
    before a correct rejection fails E8 alone."""
    _, expectation, observed = _only(trial, scenario)
    if not _rejected_outcome(observed):
        reached = " (the call reached the handler)" if _dispatched(observed) else ""
        raise _violation(
            f"{words}, but the outcome is not NOT_EXECUTED{reached}", expectation, observed
        )
    names = tuple(
        name for reason in expectation.reasons if reason.clause == clause for name in reason.names
    )
    outcome = observed.outcome
    if names and isinstance(outcome, ActionOutcome) and isinstance(outcome.observation, str):
        unnamed = [name for name in names if not mentions(outcome.observation, name)]
        if unnamed:
            raise _violation(
                f"the rejection does not name {', '.join(map(repr, unnamed))}",
                expectation,
                observed,
            )
    return expectation, observed


def _must_reject(clause: str, words: str) -> Callable[[Trial, Scenario], None]:
    def check(trial: Trial, scenario: Scenario) -> None:
        _rejected(trial, scenario, clause, words)

    check.__doc__ = f"{words}: the call is rejected."
    return check


def _occurrences(text: str, part: str) -> list[int]:
    found, start = [], text.find(part)
    while start != -1:
        found.append(start)
        start = text.find(part, start + 1)
    return found


def _forms(name: str) -> set[str]:
    forms = {name, repr(name)[1:-1], json.dumps(name)[1:-1], ascii(name)[1:-1]}
    return {f for f in forms | {f[:16] for f in forms if len(f) > 32} if f}


def check_V2(trial: Trial, scenario: Scenario) -> None:
    """An unknown tool name is rejected, naming the tool and (up to 20 of) the visible tools."""
    expectation, observed = _rejected(trial, scenario, "V2", "the tool name is unknown")
    outcome = observed.outcome
    call = scenario.steps[0].action.tool_call
    if (
        not isinstance(outcome, ActionOutcome)
        or not isinstance(outcome.observation, str)
        or call is None
    ):
        return
    text = outcome.observation
    # A near-miss name contains the real one ("read_file " and "read_file"): a visible name
    # counts only where it is not just part of the unknown name.
    quoted = {repr(call.name), json.dumps(call.name), ascii(call.name)}
    quoted |= {form[:16] for form in quoted if len(form) > 32}
    forms = quoted if any(form in text for form in quoted) else _forms(call.name)
    unknown = [(start, start + len(form)) for form in forms for start in _occurrences(text, form)]
    visible = list(scenario.schemas)
    named = [
        name
        for name in visible
        if any(
            not any(low <= start and start + len(form) <= high for low, high in unknown)
            for form in _forms(name)
            for start in _occurrences(text, form)
        )
    ]
    if len(named) < min(len(visible), 20):
        raise _violation(
            f"the rejection names {len(named)} of the {len(visible)} visible "
            f"tools; it must name {min(len(visible), 20)}",
            expectation,
            observed,
        )


check_V3 = _must_reject("V3", "the arguments are not a mapping")
check_V4 = _must_reject("V4", "required keys are missing")
check_V5 = _must_reject("V5", "keys outside a closed schema are present")
check_V6 = _must_reject("V6", "a top-level property has the wrong JSON type")


def _either_way(trial: Trial, scenario: Scenario, words: str) -> None:
    """V7/E14: a call only full JSON Schema rejects is either rejected (NOT_EXECUTED) or
    dispatched (the handler runs and an outcome, or the exception its behaviour calls for,
    comes back). Only that kind is judged here: how often the handler ran is E8's, the status
    and wording of a dispatched call E3–E5/E10's, the wording of a rejection E2's — so a bug
    in one of those fails that clause alone."""
    _, expectation, observed = _only(trial, scenario)
    if _rejected_outcome(observed):
        return
    if trial.white_box and not observed.calls:
        raise _violation(words, expectation, observed)
    if isinstance(observed.outcome, ActionOutcome):
        return
    for alternative in expectation.dispatched():
        if alternative.raises is not None and isinstance(observed.raised, alternative.raises):
            return
    raise _violation(words, expectation, observed)


def check_V7(trial: Trial, scenario: Scenario) -> None:
    """A call that breaks only constraints the subset never checks (nested schemas, enum,
    ranges, ...) is rejected, or reaches the handler and comes back as its kind of result."""
    _either_way(
        trial,
        scenario,
        "a call only full JSON Schema rejects was neither rejected nor handed to its handler",
    )


def check_V8(trial: Trial, scenario: Scenario) -> None:
    """A rejection stays under 2,000 characters and echoes no argument value."""
    _, expectation, observed = _only(trial, scenario)
    if not _rejected_outcome(observed):
        return
    assert isinstance(observed.outcome, ActionOutcome)
    text = observed.outcome.observation
    if not isinstance(text, str):
        return
    if len(text) >= 2000:
        raise _violation(
            f"the rejection message is {len(text)} characters long", expectation, observed
        )
    if gen.has_sentinel(text):
        raise _violation(
            f"the rejection message echoes an argument value (it contains {gen.SENTINEL_MARK!r})",
            expectation,
            observed,
        )


def check_E1(trial: Trial, scenario: Scenario) -> None:
    """An action without a tool call is NOT_EXECUTED, synthetic, and runs no handler."""
    _, expectation, observed = _only(trial, scenario)
    _require(expectation.alternatives[0], observed, "an action without a tool call")


def check_E2(trial: Trial, scenario: Scenario) -> None:
    """A rejected call is NOT_EXECUTED with a synthetic, non-empty observation."""
    _, expectation, observed = _only(trial, scenario)
    rejection = expectation.rejection()
    assert rejection is not None
    outcome = observed.outcome
    if _dispatched(observed) or (
        not trial.white_box
        and isinstance(outcome, ActionOutcome)
        and outcome.status is not ActionStatus.NOT_EXECUTED
    ):
        return  # not rejected at all: the V clauses report that
    _require(replace(rejection, must_name=()), observed, "a call validation must reject")


def check_E3(trial: Trial, scenario: Scenario) -> None:
    """ToolEnvironmentError becomes ENV_ERROR with str(exc)."""
    _handler_outcome(trial, scenario, "the handler raised ToolEnvironmentError")


def check_E4(trial: Trial, scenario: Scenario) -> None:
    """Another exception becomes EXECUTED "<ClassName>: <str(exc)>"."""
    _handler_outcome(trial, scenario, "the handler raised an ordinary exception")


def check_E5(trial: Trial, scenario: Scenario) -> None:
    """A returned str is the observation, exactly."""
    _handler_outcome(trial, scenario, "the handler returned a str")


def check_E6(trial: Trial, scenario: Scenario) -> None:
    """Cancellation and non-Exception BaseExceptions propagate unchanged."""
    step = scenario.steps[0]
    expectation = expect(scenario.schemas, step.action, step.behaviour, white_box=trial.white_box)
    if step.behaviour is None or isinstance(step.behaviour.final, Suspend):
        observed = trial.run_cancelled(scenario.tools, step)
        if observed is None:
            return  # finished before it could be cancelled: nothing to check
        _stop_if_hung(observed, expectation)
        if not isinstance(observed.raised, asyncio.CancelledError):
            raise _violation(
                "cancelling execute while the handler waited did not raise CancelledError",
                expectation,
                observed,
            )
        return
    observed = trial.run(scenario.tools, scenario.steps)[0]
    _stop_if_hung(observed, expectation)
    if _rejected_instead(trial, observed):
        return
    _require(
        replace(expectation.dispatched()[0], handler_calls=None),
        observed,
        "the handler raised a BaseException that is not an Exception",
    )


def check_E7(trial: Trial, scenario: Scenario) -> None:
    """No outcome claims completion or truncation."""
    _, _, observed = _only(trial, scenario)
    outcome = observed.outcome
    if not isinstance(outcome, ActionOutcome):
        return
    wanted = "env_reported_completion=False and observation_truncated_chars=0"
    if outcome.env_reported_completion is not False:
        raise Violation(
            f"env_reported_completion is {outcome.env_reported_completion!r}",
            expected=wanted,
            actual=observed.describe(),
        )
    truncated = outcome.observation_truncated_chars
    if type(truncated) is not int or truncated != 0:
        raise Violation(
            f"observation_truncated_chars is {truncated!r}",
            expected=wanted,
            actual=observed.describe(),
        )


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of argument structures by JSON type: ``True`` is not ``1``, but ``3 == 3.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (Mapping, list, tuple)) or isinstance(b, (Mapping, list, tuple)):
        return False
    return (type(a) is type(b) and a == b) or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    )


def check_E8(trial: Trial, scenario: Scenario) -> None:
    """The handler is awaited once for an accepted call, with only a mapping equal to the
    arguments, and never for a rejected call or an action without a tool call."""
    step, expectation, observed = _only(trial, scenario)
    calls = observed.calls or ()
    if expectation.verdict == "must accept" and not calls and _rejected_outcome(observed):
        return  # a valid call rejected outright is V1's failure, not this one's
    if expectation.verdict == "must accept" and len(calls) != 1:
        raise _violation(
            f"the handler of an accepted call ran {len(calls)}x, not once", expectation, observed
        )
    # A call the executor should have rejected but dispatched breaks V2–V6, not this clause;
    # running the handler for an action without a tool call, or for a call the executor then
    # reports as rejected, breaks it.
    if calls and (expectation.verdict == "no tool call" or _rejected_outcome(observed)):
        raise _violation(
            f"the handler ran {len(calls)}x for an action that was not executed",
            expectation,
            observed,
        )
    if len(calls) > 1:
        raise _violation(f"the handler ran {len(calls)}x for one call", expectation, observed)
    if expectation.verdict == "must reject":
        return  # dispatching a call V2–V6 reject is those clauses' failure, not this one's
    for call in calls:
        if len(call.args) != 1 or call.kwargs:
            raise _violation(
                f"the handler got {len(call.args)} positional and "
                f"{len(call.kwargs)} keyword arguments, not just the arguments",
                expectation,
                observed,
            )
        if not isinstance(call.received, Mapping):
            raise _violation(
                f"the handler got a {type(call.received).__name__}, not a mapping",
                expectation,
                observed,
            )
        assert step.action.tool_call is not None
        if not _json_equal(call.snapshot, plain_copy(step.action.tool_call.arguments)):
            raise Violation(
                "the handler got arguments that differ from the call's",
                expected=_clip(plain_copy(step.action.tool_call.arguments)),
                actual=f"the handler received {_clip(call.snapshot)}",
            )


def check_E9(trial: Trial, scenario: Scenario) -> None:
    """A non-str return makes execute raise TypeError naming the tool."""
    _handler_outcome(trial, scenario, "the handler returned a non-str")


def check_E10(trial: Trial, scenario: Scenario) -> None:
    """Only ToolEnvironmentError is ENV_ERROR: a ValueError, the handler's own
    ToolValidationError or an OSError is an ordinary exception, EXECUTED and not synthetic.
    (How its observation is worded is E4's concern.)"""
    _, expectation, observed = _only(trial, scenario)
    if _rejected_instead(trial, observed):
        return
    alternative = replace(expectation.dispatched()[0], handler_calls=None, observation=None)
    outcome = observed.outcome
    if (
        isinstance(outcome, ActionOutcome)
        and outcome.status is ActionStatus.EXECUTED
        and outcome.observation_is_synthetic is False
    ):
        return
    problem = mismatch(alternative, observed) or "an empty observation"
    raise _violation(
        "the handler raised an exception that is not a ToolEnvironmentError: " + problem,
        alternative,
        observed,
    )


def _comparable(observed: Observed) -> object:
    if observed.timed_out is not None:
        return ("timed out",)
    if observed.raised is not None:
        try:
            text = str(observed.raised)
        except Exception:
            text = "<str failed>"
        return ("raised", type(observed.raised), text)
    outcome = observed.outcome
    if isinstance(outcome, ActionOutcome):
        return (
            "outcome",
            outcome.status,
            outcome.observation,
            outcome.observation_is_synthetic,
            outcome.env_reported_completion,
            outcome.observation_truncated_chars,
        )
    return ("returned", repr(outcome))


def check_E11(trial: Trial, scenario: Scenario) -> None:
    """Concurrent calls on one executor give the outcomes of the same calls run in turn."""
    sequential = trial.run(scenario.tools, scenario.steps)
    concurrent = trial.run_concurrently(scenario.tools, scenario.steps)
    for index, (alone, together) in enumerate(zip(sequential, concurrent, strict=True)):
        if together.timed_out is not None or alone.timed_out is not None:
            raise Violation(
                "execute did not finish within the deadline",
                step=index,
                expected=alone.describe(),
                actual=together.describe(),
                stop=True,
            )
        if _comparable(alone) != _comparable(together):
            raise Violation(
                f"step {index + 1} of {len(scenario.steps)} has another outcome when "
                "the calls run concurrently",
                step=index,
                expected=f"(run one at a time) {alone.describe()}",
                actual=f"(run concurrently) {together.describe()}",
            )


def check_E12(trial: Trial, scenario: Scenario) -> None:
    """An exception whose str() raises still gives an outcome, whose observation says
    "<exception str() failed>" (the "<ClassName>: " before it is E3's and E4's concern)."""
    _, expectation, observed = _only(trial, scenario)
    if _rejected_instead(trial, observed):
        return
    outcome = observed.outcome
    if (
        isinstance(outcome, ActionOutcome)
        and isinstance(outcome.observation, str)
        and STR_FAILED in outcome.observation
    ):
        return
    alternative = replace(expectation.dispatched()[0], handler_calls=None)
    raise _violation(
        "the handler raised an exception whose str() raises, and the outcome "
        f"does not say {STR_FAILED!r}",
        alternative,
        observed,
    )


def check_E13(trial: Trial, scenario: Scenario) -> None:
    """The handler gets its own plain dict; its mutations reach neither the recorded call nor
    a later call."""
    call = scenario.steps[0].action.tool_call
    assert call is not None
    original = plain_copy(call.arguments)
    observed = trial.run(scenario.tools, scenario.steps)
    expectation = expect(scenario.schemas, scenario.steps[0].action, scenario.steps[0].behaviour)
    for index, item in enumerate(observed):
        _stop_if_hung(item, expectation, index)
    calls = [c for item in observed for c in (item.calls or ())]
    if calls and not _json_equal(calls[0].snapshot, original):
        return  # the very first call got other arguments: E8 reports that
    for index, handler_call in enumerate(calls):
        if not isinstance(handler_call.received, Mapping):
            return  # not even a mapping: E8 reports that
        if not handler_call.plain:
            raise Violation(
                f"call {index + 1}: the handler got a "
                f"{type(handler_call.received).__name__} that is not a plain dict "
                "of dicts, lists and JSON values",
                step=index,
                expected="a plain dict equal to the arguments",
                actual=_clip(handler_call.received),
            )
        if not _json_equal(handler_call.snapshot, original):
            raise Violation(
                f"call {index + 1}: the handler got arguments changed by an earlier "
                "call's mutation",
                step=index,
                expected=_clip(original),
                actual=_clip(handler_call.snapshot),
            )
    if len(calls) == 2 and calls[0].received is calls[1].received:
        raise Violation(
            "both calls handed the handler the same dict object",
            step=1,
            expected="a fresh dict per call",
            actual="the same dict object twice",
        )
    if not _json_equal(plain_copy(call.arguments), original):
        raise Violation(
            "the handler's mutation reached the recorded ToolCall",
            expected=_clip(original),
            actual=_clip(plain_copy(call.arguments)),
        )


def check_E14(trial: Trial, scenario: Scenario) -> None:
    """A call only full JSON Schema rejects is either rejected (E2) or dispatched (E3–E5)."""
    _either_way(
        trial,
        scenario,
        "a call only full JSON Schema rejects got neither a rejection "
        "nor the outcome of its handler",
    )


def _clip(value: Any, limit: int = 300) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


# ---------------------------------------------------------------------------------------------
# Hand-picked scenarios: the traps every run tries first, whatever the profile


_COUNT_SCHEMA = {
    "type": "object",
    "required": ["n"],
    "additionalProperties": False,
    "properties": {
        "n": {"type": "integer"},
        "tag": {"type": ["string", "null"]},
        "ratio": {"type": "float"},
    },
    "patternProperties": {"^x-": {"type": "string"}},
}


def _trap_scenarios() -> dict[str, list[Scenario]]:
    d7 = gen.TRAP_SCHEMAS[2]
    root_ref = gen.TRAP_SCHEMAS[3]
    tools = (
        ToolDef(name="read_file", description="Read a file.", parameters=d7),
        ToolDef(name="search", description="Search.", parameters=root_ref),
        ToolDef(name="count", description="Count.", parameters=_COUNT_SCHEMA),
    )
    crowded = tuple(
        ToolDef(
            name=f"{index:02d}_" + "long_tool_name_" * 14,
            description="",
            parameters={"type": "object"},
        )
        for index in range(25)
    )

    def one(
        action: Action, behaviour: Behaviour | None = None, among: tuple[ToolDef, ...] = tools
    ) -> Scenario:
        return Scenario(
            tools=among, steps=(Step(action=action, behaviour=behaviour or ReturnText(text="ok")),)
        )

    def call(name: str, arguments: Any) -> Action:
        return Action(tool_call=ToolCall(name=name, arguments=arguments))

    mark = gen.SENTINEL_MARK
    return {
        "V1": [
            one(call("read_file", {"path": ["a.txt", "b.txt"]})),
            one(call("search", {"q": "x", "unlisted": 1})),
            one(call("count", {"n": 3.0})),
            one(call("count", {"n": 1, "tag": None})),
            one(call("count", {"n": 1, "ratio": "0.5"})),
            one(call("count", {"n": 1, "x-trace": "abc"})),
        ],
        "V6": [
            one(call("count", {"n": True})),
            one(call("count", {"n": 2.5})),
            one(call("count", {"n": "7"})),
            one(call("count", {"n": 1, "tag": 0})),
        ],
        "V8": [
            one(call("t" * 5000, {"q": f"{mark}1"})),
            one(
                call(
                    "count", {f"key_{index}_" + "k" * 300: f"{mark}{index}" for index in range(30)}
                )
            ),
            one(call("nope", {"q": f"{mark}1"}), among=crowded),
            one(call("count", {"n": f"{mark}1" + "v" * 5000})),
        ],
        "V2": [
            one(call("Read_File", {"path": "a.txt"})),
            one(call("read_file ", {"path": "a"})),
            one(call("search_v2", {"q": "x"})),
        ],
        "V3": [one(call("read_file", json.dumps({"path": f"{gen.SENTINEL_MARK}1"})))],
        "E4": [one(call("search", {"q": "x"}), RaiseError(kind="KeyError", message="x"))],
        "E5": [one(call("search", {"q": "x"}), ReturnText(text="x" * 120_000))],
        "E7": [
            one(Action(code="print(1)")),
            one(call("nope", {})),
            one(call("search", {"q": "x"}), ReturnText(text="line\n" * 30_000)),
        ],
        "E6": [
            one(call("search", {}), RaiseBaseException(kind="KeyboardInterrupt")),
            one(call("search", {}), Suspend()),
        ],
        "E10": [
            one(call("search", {}), RaiseError(kind="ValueError", message="bad")),
            one(
                call("search", {}),
                RaiseError(kind="lookalike ToolEnvironmentError", message="down"),
            ),
        ],
        "E12": [one(call("search", {}), RaiseUnprintable())],
    }


def _nothing_cancelled(trial: Trial) -> str | None:
    """E6 black-box: a pass means something only if some call was caught still running."""
    if trial.white_box or trial.cancellations:
        return None
    return (
        "no call was still running when the kit cancelled it, so cancellation could not be observed"
    )


def _examples(clause: str) -> Callable[[], Sequence[Scenario]]:
    return lambda: _trap_scenarios().get(clause, [])


_ALL_ACTIONS = ("valid", "valid", "invalid", "beyond", "code")
# E8's commonest bug is a handler run for a rejected call, so rejected calls are drawn as often
# as accepted ones (with one draw in five, a derandomized run on some Pythons never drew one).
_E8_ACTIONS = ("valid", "valid", "invalid", "invalid", "beyond", "code")

PROPERTIES: Mapping[str, Property] = {
    p.clause: p
    for p in (
        Property(
            clause="V1",
            scenarios=_single(["valid"], ["text", "yield"]),
            check=check_V1,
            black_box=True,
            examples=_examples("V1"),
        ),
        Property(
            clause="V2",
            scenarios=_single(["invalid"], aims=["V2"], padded=True),
            check=check_V2,
            black_box=True,
            aim="V2",
            examples=_examples("V2"),
        ),
        Property(
            clause="V3",
            scenarios=_single(["invalid"], aims=["V3"]),
            check=check_V3,
            black_box=True,
            aim="V3",
            examples=_examples("V3"),
        ),
        Property(
            clause="V4",
            scenarios=_single(["invalid"], aims=["V4"], tools_aim="V4"),
            check=check_V4,
            black_box=True,
            aim="V4",
        ),
        Property(
            clause="V5",
            scenarios=_single(["invalid"], aims=["V5"], tools_aim="V5"),
            check=check_V5,
            black_box=True,
            aim="V5",
        ),
        Property(
            clause="V6",
            scenarios=_single(["invalid"], aims=["V6"], tools_aim="V6"),
            check=check_V6,
            black_box=True,
            aim="V6",
            examples=_examples("V6"),
        ),
        Property(
            clause="V7",
            scenarios=_single(["beyond"], ["text", "error"]),
            check=check_V7,
            black_box=True,
        ),
        Property(
            clause="V8",
            scenarios=_single(["invalid", "invalid", "beyond"], padded=True),
            check=check_V8,
            black_box=True,
            examples=_examples("V8"),
        ),
        Property(clause="E1", scenarios=_single(["code"]), check=check_E1, black_box=True),
        Property(clause="E2", scenarios=_single(["invalid"]), check=check_E2, black_box=True),
        Property(
            clause="E3",
            scenarios=_single(["valid"], ["environment_error"]),
            check=check_E3,
            black_box=False,
        ),
        Property(
            clause="E4",
            scenarios=_single(["valid"], ["error"]),
            check=check_E4,
            black_box=False,
            examples=_examples("E4"),
        ),
        Property(
            clause="E5",
            scenarios=_single(["valid"], ["text"]),
            check=check_E5,
            black_box=False,
            examples=_examples("E5"),
        ),
        Property(
            clause="E6",
            scenarios=_single(["valid"], ["suspend", "base_exception"]),
            check=check_E6,
            black_box=True,
            examples=_examples("E6"),
            inconclusive=_nothing_cancelled,
        ),
        Property(
            clause="E7",
            scenarios=_single(_ALL_ACTIONS, ["text", "environment_error", "error"]),
            check=check_E7,
            black_box=True,
            examples=_examples("E7"),
        ),
        Property(
            clause="E8", scenarios=_single(_E8_ACTIONS, ["text"]), check=check_E8, black_box=False
        ),
        Property(
            clause="E9", scenarios=_single(["valid"], ["non_str"]), check=check_E9, black_box=False
        ),
        Property(
            clause="E10",
            scenarios=_single(["valid"], ["error_like"]),
            check=check_E10,
            black_box=False,
            examples=_examples("E10"),
        ),
        Property(
            clause="E11",
            scenarios=_many(
                ["valid", "valid", "invalid", "code"],
                ["text", "environment_error", "error", "non_str"],
            ),
            check=check_E11,
            black_box=False,
        ),
        Property(
            clause="E12",
            scenarios=_single(["valid"], ["unprintable"]),
            check=check_E12,
            black_box=False,
            examples=_examples("E12"),
        ),
        Property(clause="E13", scenarios=_repeated, check=check_E13, black_box=False),
        Property(
            clause="E14",
            scenarios=_single(["beyond"], ["text", "environment_error", "error"]),
            check=check_E14,
            black_box=True,
        ),
    )
}
"""Clause ID -> its property, in contract order (V1–V8, then E1–E14)."""
