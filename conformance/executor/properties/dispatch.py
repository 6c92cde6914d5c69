"""The checks of the dispatch clauses (E1-E15), each with its hand-picked scenarios."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from conformance._core.data import json_equal as _json_equal
from conformance._core.text import clip, exception_text, json_text
from conformance.executor.behaviours import (
    CANCEL_MESSAGE,
    ENVIRONMENT_LIKE_ERROR_KINDS,
    ERROR_KINDS,
    STR_RAISES_KINDS,
    EchoArguments,
    RaiseBaseException,
    RaiseEnvironmentError,
    RaiseError,
    RaiseUnprintable,
    ReturnNonStr,
    ReturnText,
    Suspend,
    YieldFirst,
    plain_copy,
)
from conformance.executor.oracle import STR_FAILED, CallVerdict, Observed, expect, mismatch
from conformance.executor.properties import edges
from conformance.executor.properties.scenarios import (
    Scenario,
    Violation,
    object_tool,
    sequence,
    trap,
    twice,
)
from conformance.executor.properties.scenarios import call as _call
from conformance.executor.properties.shape import executor_problem as _executor_problem
from conformance.executor.properties.shape import parameters_of as _parameters_of
from conformance.executor.properties.shared import (
    handler_exception_escaped,
    handler_outcome,
    not_reached,
    reached_handler,
    rejected_instead,
    rejected_outcome,
    require,
    result_of_dispatch,
    single_step,
    stop_if_hung,
    violation,
)
from conformance.executor.runner import Trial
from conformance.executor.strategies import SPECIAL_NAMES_TOOL, SPECIAL_PROPERTY_NAMES
from polyloop import Action, ActionOutcome, ActionStatus, ReplayPolicy


def check_E1(trial: Trial, scenario: Scenario) -> None:
    """An action without a tool call is NOT_EXECUTED, synthetic, and runs no handler."""
    _, expectation, observed = single_step(trial, scenario)
    require(expectation.alternatives[0], observed, "an action without a tool call")


def check_E2(trial: Trial, scenario: Scenario) -> None:
    """A rejected call is NOT_EXECUTED with a synthetic, non-empty observation."""
    _, expectation, observed = single_step(trial, scenario)
    rejection = expectation.rejection()
    assert rejection is not None
    outcome = observed.outcome
    if reached_handler(observed) or (
        not trial.white_box
        and isinstance(outcome, ActionOutcome)
        and outcome.status is not ActionStatus.NOT_EXECUTED
    ):
        return  # not rejected at all: the V clauses report that
    require(replace(rejection, must_name=()), observed, "a call validation must reject")


def check_E3(trial: Trial, scenario: Scenario) -> None:
    """ToolEnvironmentError becomes ENV_ERROR with str(exc)."""
    handler_outcome(trial, scenario, "the handler raised ToolEnvironmentError")


def check_E4(trial: Trial, scenario: Scenario) -> None:
    """Another exception becomes EXECUTED "<ClassName>: <str(exc)>". For the exceptions an
    executor may mistake for environment errors (ValueError, OSError, ...), only letting one
    escape execute is judged here; turning one into ENV_ERROR is E10's."""
    step = scenario.steps[0]
    behaviour = step.behaviour.final if step.behaviour is not None else None
    if isinstance(behaviour, RaiseError) and behaviour.kind in ENVIRONMENT_LIKE_ERROR_KINDS:
        _, expectation, observed = single_step(trial, scenario)
        if handler_exception_escaped(observed):
            raise violation(
                "the handler raised an ordinary exception and execute let it escape",
                replace(expectation.dispatched()[0], handler_calls=None),
                observed,
            )
        return
    handler_outcome(trial, scenario, "the handler raised an ordinary exception")


def check_E5(trial: Trial, scenario: Scenario) -> None:
    """A returned str is the observation, exactly."""
    handler_outcome(trial, scenario, "the handler returned a str")


def check_E6(trial: Trial, scenario: Scenario) -> None:
    """Cancellation and non-Exception BaseExceptions propagate unchanged."""
    step = scenario.steps[0]
    expectation = expect(scenario.schemas, step.action, step.behaviour, white_box=trial.white_box)
    if step.behaviour is None or isinstance(step.behaviour.final, Suspend):
        observed = trial.run_cancelled(scenario.tools, step)
        if observed is None:
            return  # finished before it could be cancelled: nothing to check
        stop_if_hung(observed, expectation)
        if not isinstance(observed.raised, asyncio.CancelledError):
            late = isinstance(step.behaviour, Suspend) and step.behaviour.finish
            raise violation(
                "cancelling execute in the loop iteration its handler returned did not raise "
                "CancelledError: the cancellation was lost (asyncio.wait_for on Python 3.10/3.11 "
                "does this; asyncio.timeout or awaiting the handler directly does not)"
                if late
                else "cancelling execute while the handler waited did not raise CancelledError",
                expectation,
                observed,
            )
        # A target that declares it (one-call batches: B4, B14) raises a CancelledError of
        # its own when cancelled from outside: the class is what counts.
        by_class = getattr(trial.factory or trial.executor, "cancelled_by_class", False)
        if trial.white_box and not by_class:
            require(
                replace(expectation.dispatched()[0], handler_calls=None),
                observed,
                "cancelling execute while the handler waited",
            )
        elif by_class:
            return
        elif CANCEL_MESSAGE not in observed.raised.args and sys.version_info >= (3, 11):
            # 3.10: awaiting a cancelled task raises a fresh CancelledError without the
            # message, so a correct task-per-call executor cannot keep it (the oracle's
            # same_exception makes the same allowance white-box).
            raise violation(
                "cancelling execute with a message raised a CancelledError without it "
                f"(args {observed.raised.args!r}): not the kit's cancellation, unchanged",
                expectation,
                observed,
            )
        return
    observed = trial.run(scenario.tools, scenario.steps)[0]
    stop_if_hung(observed, expectation)
    if rejected_instead(trial, observed) or not_reached(trial, observed):
        return
    require(
        replace(expectation.dispatched()[0], handler_calls=None),
        observed,
        "the handler raised a BaseException that is not an Exception",
    )


def check_E7(trial: Trial, scenario: Scenario) -> None:
    """No outcome claims completion or truncation."""
    _, _, observed = single_step(trial, scenario)
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


def check_E8(trial: Trial, scenario: Scenario) -> None:
    """The handler is awaited once for an accepted call, with only a mapping equal to the
    arguments, and never for a rejected call or an action without a tool call."""
    if len(scenario.steps) > 1:
        _check_each_call_runs(trial, scenario)
        return
    step, expectation, observed = single_step(trial, scenario)
    calls = observed.calls or ()
    if expectation.verdict is CallVerdict.MUST_ACCEPT and not calls and rejected_outcome(observed):
        return  # a valid call rejected outright is V1's failure, not this one's
    if expectation.verdict is CallVerdict.MUST_ACCEPT and len(calls) != 1:
        raise violation(
            f"the handler of an accepted call ran {len(calls)}x, not once", expectation, observed
        )
    # A call the executor should have rejected but dispatched breaks V2–V6, not this clause;
    # running the handler for an action without a tool call, or for a call the executor then
    # reports as rejected, breaks it.
    # (An accepted call whose handler ran once and whose outcome then says NOT_EXECUTED breaks
    # what the outcome must be — V1, E3–E5 — not how often the handler ran. So does a call
    # that may go either way (E14): dispatched once, its outcome is E3–E5's and E12's, as E14
    # judges; only a call the subset rejects may never reach its handler.)
    if calls and (
        expectation.verdict is CallVerdict.NO_TOOL_CALL
        or (expectation.verdict is CallVerdict.MUST_REJECT and rejected_outcome(observed))
    ):
        raise violation(
            f"the handler ran {len(calls)}x for an action that was not executed",
            expectation,
            observed,
        )
    if len(calls) > 1:
        raise violation(f"the handler ran {len(calls)}x for one call", expectation, observed)
    if expectation.verdict is CallVerdict.MUST_REJECT:
        return  # dispatching a call V2–V6 reject is those clauses' failure, not this one's
    for call in calls:
        if len(call.args) != 1 or call.kwargs:
            raise violation(
                f"the handler got {len(call.args)} positional and "
                f"{len(call.kwargs)} keyword arguments, not just the arguments",
                expectation,
                observed,
            )
        if not isinstance(call.received, Mapping):
            raise violation(
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


def _check_each_call_runs(trial: Trial, scenario: Scenario) -> None:
    """Identical accepted calls, one after another and then concurrently: each awaits its
    handler (no memoising, not even of a SAFE tool, and no joining of an in-flight call)."""
    expectations = [
        expect(scenario.schemas, step.action, step.behaviour, white_box=True)
        for step in scenario.steps
    ]
    if any(e.verdict is not CallVerdict.MUST_ACCEPT for e in expectations):
        return
    for index, observed in enumerate(trial.run(scenario.tools, scenario.steps)):
        stop_if_hung(observed, expectations[index], index)
        if rejected_outcome(observed):
            return  # a valid call rejected: V1's failure
        ran = len(observed.calls or ())
        if ran != 1:
            raise violation(
                f"step {index + 1} of {len(scenario.steps)} identical accepted calls run one "
                f"after another: the handler ran {ran}x, not once",
                expectations[index],
                observed,
                index,
            )
    together = trial.run_concurrently(scenario.tools, scenario.steps)
    for index, observed in enumerate(together):
        stop_if_hung(observed, expectations[index], index)
        if rejected_outcome(observed):
            return  # refusing a duplicate in flight is E11's failure, not this one's
    ran = len(together[0].concurrent_calls or ())
    if ran != len(scenario.steps):
        raise Violation(
            f"{len(scenario.steps)} identical accepted calls run concurrently ran the handler "
            f"{ran}x in all, not once each",
            expected=f"the handler called {len(scenario.steps)}x",
            actual="; ".join(observed.describe() for observed in together),
        )


def check_E9(trial: Trial, scenario: Scenario) -> None:
    """A non-str return makes execute raise TypeError naming the tool."""
    handler_outcome(trial, scenario, "the handler returned a non-str")


def check_E10(trial: Trial, scenario: Scenario) -> None:
    """Only ToolEnvironmentError is ENV_ERROR: a ValueError, the handler's own
    ToolValidationError or an OSError is an ordinary exception, EXECUTED and not synthetic.
    (How its observation is worded is E4's concern.)"""
    _, expectation, observed = single_step(trial, scenario)
    if rejected_instead(trial, observed) or not_reached(trial, observed):
        return
    if handler_exception_escaped(observed):
        # The handler's own exception came out of execute: ordinary exceptions are not turned
        # into outcomes at all, which E4 reports (its traps include these kinds); this clause
        # is about calling one ENV_ERROR.
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
    raise violation(
        "the handler raised an exception that is not a ToolEnvironmentError: " + problem,
        alternative,
        observed,
    )


def _comparable(observed: Observed) -> object:
    if observed.timed_out is not None:
        return ("timed out",)
    if observed.raised is not None:
        return ("raised", type(observed.raised), exception_text(observed.raised))
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
    """Concurrent calls on one executor give the outcomes of the same calls run in turn, in
    the kit's event loop and (white-box, for half the scenarios: `Scenario.elsewhere`) in a
    fresh one: an asyncio primitive an executor keeps across calls (a module-level
    ``asyncio.Lock``) binds to the first loop that contends for it and fails in any later
    one."""
    sequential = trial.run(scenario.tools, scenario.steps)
    _compare_concurrent(trial, scenario, sequential, "")
    if trial.white_box and scenario.elsewhere:
        _compare_concurrent(trial, scenario, sequential, " in another event loop")


def _compare_concurrent(
    trial: Trial, scenario: Scenario, sequential: list[Observed], where: str
) -> None:
    concurrent = trial.run_concurrently(scenario.tools, scenario.steps, fresh_loop=bool(where))
    for index, (alone, together) in enumerate(zip(sequential, concurrent, strict=True)):
        if together.timed_out is not None or alone.timed_out is not None:
            # A timed-out run is never the expectation: say which run hung.
            hung = [
                f"(run {how}) {run.describe()}"
                for how, run in (("one at a time", alone), ("concurrently" + where, together))
                if run.timed_out is not None
            ]
            raise Violation(
                f"step {index + 1} of {len(scenario.steps)}: execute did not finish within the "
                "deadline",
                step=index,
                expected=f"an outcome within {trial.deadline:g}s, run one at a time and "
                "concurrently",
                actual="; ".join(hung),
                stop=True,
            )
        if _comparable(alone) != _comparable(together):
            raise Violation(
                f"step {index + 1} of {len(scenario.steps)} has another outcome when "
                f"the calls run concurrently{where}",
                step=index,
                expected=f"(run one at a time) {alone.describe()}",
                actual=f"(run concurrently{where}) {together.describe()}",
            )


def check_E12(trial: Trial, scenario: Scenario) -> None:
    """An exception whose str() raises still gives an outcome whose whole observation is
    "<ClassName>: <exception str() failed>". For a ToolEnvironmentError, whose observation is
    ``str(exc)`` with no class name (E3), the bare "<exception str() failed>" conforms too.
    (The status is E3's and E4's concern.)"""
    _, expectation, observed = single_step(trial, scenario)
    if rejected_instead(trial, observed) or not_reached(trial, observed):
        return
    alternative = replace(expectation.dispatched()[0], handler_calls=None)
    wanted = alternative.observation
    assert wanted is not None
    environment = ActionStatus.ENV_ERROR in alternative.statuses
    allowed = (wanted, STR_FAILED) if environment else (wanted,)
    outcome = observed.outcome
    if isinstance(outcome, ActionOutcome) and outcome.observation in allowed:
        return
    shown = " or ".join(repr(text) for text in allowed)
    if isinstance(outcome, ActionOutcome):
        problem = f"the observation is {clip(repr(outcome.observation), 120)}, not {shown}"
    else:
        problem = f"there was no outcome ({observed.describe()})"
    raise Violation(
        f"the handler raised an exception whose str() raises, and {problem}",
        expected=f"[E12] an outcome whose observation is exactly {shown}",
        actual=observed.describe(),
    )


def check_E14(trial: Trial, scenario: Scenario) -> None:
    """A call only full JSON Schema rejects is either rejected (E2) or dispatched (E3–E5): what
    comes back is a rejection, or an outcome or the exception its handler's behaviour calls
    for. (Whether the handler really ran is V7's.)"""
    _, expectation, observed = single_step(trial, scenario)
    if rejected_outcome(observed) or result_of_dispatch(expectation, observed):
        return
    raise violation(
        "a call only full JSON Schema rejects got neither a rejection nor the outcome of its "
        "handler",
        expectation,
        observed,
    )


def check_E15(trial: Trial, scenario: Scenario) -> None:
    """The executor is an ActionExecutor: ``execute`` is a coroutine function, ``parameters()``
    a stable mapping of str to str (exactly ``{"tools": "a,b,c"}`` for a RegistryExecutor), and
    every outcome an ActionOutcome instance, not a look-alike."""
    names = tuple(tool.name for tool in scenario.tools) if trial.white_box else None
    problem = trial.inspect(scenario.tools, lambda executor: _executor_problem(executor, names))
    if problem is not None:
        raise Violation(problem, expected="an ActionExecutor (E15)", actual=problem)
    seen = trial.inspect(scenario.tools, _parameters_of, around=scenario.steps[0])
    if isinstance(seen, tuple) and None not in seen and seen[0] != seen[1]:
        raise Violation(
            f"parameters() returned {_clip(seen[0], 120)} before execute ran and "
            f"{_clip(seen[1], 120)} after: it must be the same on every call",
            expected=f"parameters() == {_clip(seen[0], 120)} on every call",
            actual=f"parameters() == {_clip(seen[1], 120)} after one execute",
        )
    _, expectation, observed = single_step(trial, scenario)
    if observed.lookalike is not None:
        raise violation(
            f"execute returned an instance of {observed.lookalike}, which has ActionOutcome's "
            f"fields but is not polyloop's ActionOutcome ({ActionOutcome.__module__}."
            f"{ActionOutcome.__qualname__})",
            expectation,
            observed,
        )
    if observed.raised is None and not isinstance(observed.outcome, ActionOutcome):
        raise violation(
            f"execute returned a {type(observed.outcome).__name__}, not an ActionOutcome",
            expectation,
            observed,
        )


def _clip(value: Any, limit: int = 300) -> str:
    return clip(json_text(value, sort_keys=False), limit)


# ---------------------------------------------------------------------------------------------
# Hand-picked scenarios every run tries first, whatever the profile


_DEFAULTS_TOOL = object_tool(
    "list_items",
    {"limit": {"type": "integer", "default": 10}, "order": {"type": "string", "default": "asc"}},
    description="List items.",
)
_SPECIAL = (SPECIAL_NAMES_TOOL,)
_GUARDED_SELF = object_tool(
    "guarded", {"self": {"type": "string", "minLength": 3}}, description="A guarded note."
)
"""E14: a call only full JSON Schema rejects (`minLength`) under a property runtimes treat
specially (LangChain refuses ``self``): it must be rejected or dispatched, never crash."""
_REJECTED = (
    _call("count", None),
    _call("read_file", {}),
    _call("read_file", {"path": "a", "zz_extra": None}),
    _call("count", {"n": "7"}),
)
"""Calls to the trap tools validation must reject: not a mapping (V3), a required key
missing (V4), an undeclared key under ``additionalProperties: false`` (V5), a wrong type
(V6)."""
_SAFE_TOOL = object_tool(
    "lookup",
    {"key": {"type": "string"}},
    description="A read-only lookup.",
    replay_policy=ReplayPolicy.SAFE,
)


def traps() -> dict[str, list[Scenario]]:
    """Clause ID -> the dispatch traps: exceptions and observations at the edges of E1-E15."""
    e8_behaviours = [
        ReturnText(text="ok"),
        RaiseEnvironmentError(message="down"),
        RaiseError(kind="KeyError", message="x"),
        ReturnNonStr(kind="None"),
    ]
    return {
        "E1": [trap(Action(code=code)) for code in edges.CODE_LIKE_CALLS],
        "E2": _e2_traps(),
        "E4": [
            trap(_call("search", {"q": "x"}), RaiseError(kind=kind, message="x"))
            for kind in (
                "KeyError",
                *sorted(set(ERROR_KINDS) - {"KeyError"}),
                "ValueError",
                "ToolValidationError",
                "OSError",
            )
        ],
        "E5": [
            trap(_call("search", {"q": "x"}), ReturnText(text=text))
            for text in (*edges.EXACT_TEXTS, edges.STR_SUBCLASS_TEXT)
        ],
        "E6": [
            trap(_call("search", {}), RaiseBaseException(kind="KeyboardInterrupt")),
            trap(_call("search", {}), RaiseBaseException(kind="SystemExit")),
            trap(_call("search", {}), Suspend()),
            trap(_call("search", {}), Suspend(finish=True)),
        ],
        "E7": [
            trap(Action(code="print(1)")),
            trap(_call("nope", {})),
            trap(_call("search", {"q": "x"}), ReturnText(text="line\n" * 30_000)),
        ],
        "E8": [
            *(trap(_call("search", {"q": "x"}), b) for b in e8_behaviours),
            trap(_call("list_items", {}), among=(_DEFAULTS_TOOL,)),
            trap(_call("list_items", {"limit": 3}), among=(_DEFAULTS_TOOL,)),
            trap(_call("count", {"n": 2**64 + 1})),
            trap(_call("count", {"n": -(2**63) - 1, "tag": None})),
            # Rejected calls whose handler scripts an answer or an exception: an executor
            # that "probes" the handler of a call validation rejected, whatever it then makes
            # of what happened, runs it (one call per kind of rejection, V3 to V6).
            *(trap(action, RaiseError(kind="KeyError", message="probe")) for action in _REJECTED),
            twice(_SAFE_TOOL, {"key": "a"}, ReturnText(text="ok")),
            twice(_SAFE_TOOL, {"key": "a"}, YieldFirst(times=3, then=ReturnText(text="ok"))),
            # One special property name per call, so a counterexample names the one a runtime
            # dropped, renamed or refused (LangChain drops config/run_manager, refuses self).
            *(
                trap(_call("special", {name: f"value of {name}"}), among=_SPECIAL)
                for name in SPECIAL_PROPERTY_NAMES
            ),
        ],
        "E9": [
            trap(_call("search", {"q": "x"}), ReturnNonStr(kind=kind))
            for kind in ("None", "dict", "object", "bytes")
        ],
        "E11": _e11_traps(),
        "E10": [
            trap(_call("search", {}), RaiseError(kind=kind, message="down"))
            for kind in ("ValueError", *sorted(set(ENVIRONMENT_LIKE_ERROR_KINDS) - {"ValueError"}))
        ],
        "E12": [
            trap(_call("search", {}), RaiseUnprintable(non_str_message=True)),
            *(
                trap(_call("search", {}), RaiseUnprintable(environment=environment, raises=raises))
                for raises in STR_RAISES_KINDS
                for environment in (False, True)
            ),
        ],
        "E13": edges.json_leaves(),
        "E14": [trap(_call("guarded", {"self": "x"}), among=(_GUARDED_SELF,))],
        "E15": [
            trap(_call("search", {"q": "x"})),
            trap(_call("nope", {})),
            trap(Action(code="print(1)")),
        ],
    }


def _e2_traps() -> list[Scenario]:
    """One call per kind of rejection: first those only their schema rejects (a counterexample
    then keeps its schema), then arguments that are not an object, null and a list (pydantic-ai
    raises TypeError out of its tool call on a list)."""
    required, closed, typed, not_a_mapping = (*_REJECTED[1:], _REJECTED[0])
    listed = _call("count", ["n", 7])
    return [trap(action) for action in (required, closed, typed, not_a_mapping, listed)]


def _e11_traps() -> list[Scenario]:
    """E11: two calls in flight at once, the same call twice, handlers that read their
    arguments after yielding."""
    in_flight = (_call("search", {"q": "a"}), YieldFirst(times=2, then=ReturnText(text="same")))
    return [
        sequence(
            (_call("search", {"q": "a"}), ReturnText(text="first")),
            (_call("search", {"q": "b"}), ReturnText(text="second")),
        ),
        # The same call twice, both in flight at once (no coalescing, no "duplicate" refusal),
        # in the kit's loop and in a fresh one (a lock shared across loops fails there).
        replace(sequence(in_flight, in_flight), elsewhere=True),
        # Handlers that read their arguments after yielding: one argument buffer shared
        # between concurrent calls shows as the other call's arguments.
        sequence(
            (_call("search", {"q": "a"}), EchoArguments(times=2)),
            (_call("search", {"q": "b"}), EchoArguments(times=2)),
        ),
    ]
