"""Batch scenarios (contract section 10) on the field batch adapters, against a pinned matrix.

Each scenario is one example check of a B clause, written against the contract's words only
(never against polyloop's own sentences: a "not run" or "interrupted" outcome is judged by its
status and ``observation_is_synthetic``). It drives gated handlers (`_batch_harness`): the test
opens gates in the order it wants, settles the event loop (no wall-clock time), and judges the
trace of enter/exit/started/committed events. Every scenario also runs on polyloop's
`RegistryBatchExecutor`, which must pass all of them: a scenario that failed correct code
would be a false verdict.

``expected.json`` (``batch_scenarios``) pins, per adapter, the scenarios that fail and why
(the runtime file and function); a change either way fails `test_B_scenario_verdict`. Until the
kit certifies batch executors (branch wp-batchkit), this is the B evidence of
`docs/field-report.md`. Runs with ``POLYLOOP_FIELD=1`` (``tox -e field``); without the runtimes
the adapter cases skip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import json
import os
import signal
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from _batch_harness import LIVE, Harness, act, bad, code, unknown
from _batch_harness import settle as settle_loop

from conformance._core.data import thaw
from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    RegistryBatchExecutor,
    ToolCall,
    ToolRegistry,
)

EXPECTED: dict[str, Any] = json.loads(
    Path(__file__).with_name("expected.json").read_text(encoding="utf-8")
)["batch_scenarios"]
ENABLED = os.environ.get("POLYLOOP_FIELD") == "1"
EXECUTED = ActionStatus.EXECUTED
NOT_EXECUTED = ActionStatus.NOT_EXECUTED
ENV_ERROR = ActionStatus.ENV_ERROR

Scenario = Callable[[Callable[..., Any]], Coroutine[Any, Any, None]]
SCENARIOS: dict[str, Scenario] = {}


class ThreadWork(concurrent.futures.ThreadPoolExecutor):
    """The event loop's default executor in these tests, which remembers what it was given: a
    runtime may run a step of its own in a worker thread (LangGraph runs a graph's synchronous
    functions, such as ``create_react_agent``'s routing edge, through
    ``loop.run_in_executor``), and a settled loop is not yet a settled batch while that work
    is still running."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.pending: set[concurrent.futures.Future[Any]] = set()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.pending.add(future)
        future.add_done_callback(self.pending.discard)
        return future


async def settle() -> None:
    """`settle_loop` (yield until the loop's ready queue stays empty, no clock), repeated until
    no work handed to the loop's default executor is still running either."""
    while True:
        await settle_loop()
        executor = getattr(asyncio.get_running_loop(), "_default_executor", None)
        pending = [f for f in getattr(executor, "pending", ()) if not f.done()]
        if not pending:
            return
        await asyncio.wait([asyncio.wrap_future(future) for future in pending])


def scenario(function: Scenario) -> Scenario:
    SCENARIOS[function.__name__] = function
    return function


class FieldHarness(Harness):
    """The gated harness, where a call entered after `release_everything` finds its gate open:
    a runtime may enter a call polyloop would not (a rejected one, whose id is no int) or enter
    a call only after a barrier the scenario already released."""

    released = False

    def release_everything(self) -> None:
        self.released = True
        super().release_everything()

    def gate(self, index: int) -> asyncio.Event:
        event = super().gate(index)
        if self.released:
            event.set()
        return event

    async def handler(self, arguments: dict[str, Any]) -> str:
        if arguments.get("do") != STUBBORN:
            return await super().handler(arguments)
        index = arguments["id"]
        self.received[index] = arguments
        self.trace.append(("enter", index))
        try:
            while True:
                try:
                    await self.gate(index).wait()
                    return f"survived {index}"
                except asyncio.CancelledError:  # ignored, every time, until the gate opens
                    self.cancels_seen[index] = self.cancels_seen.get(index, 0) + 1
        finally:
            self.trace.append(("exit", index))


STUBBORN = "ignore_every_cancel"
"""A handler behaviour of this module's harness: it ignores every cancellation it is sent and
returns once its gate opens (B14: "however many times the batch is cancelled")."""


class NestedHarness(FieldHarness):
    """The gated harness whose tools also declare an object property ``nested``, so a call can
    carry nested arguments that validation accepts (B11)."""

    def __init__(self, cap: int = 10, journal: bool = True) -> None:
        super().__init__(cap=cap, journal=journal)
        self.registry = ToolRegistry(
            [replace(spec, parameters={**NESTED_SCHEMA}) for spec in self.registry.specs]
        )
        self.executor = self.registry.batch_executor(max_concurrency=cap)


NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "do": {"type": "string"},
        "nested": {"type": "object"},
    },
    "required": ["id"],
}


def harness_for(
    factory: Callable[..., Any],
    cap: int = 10,
    journal: bool = True,
    kind: type[Harness] = FieldHarness,
) -> Harness:
    harness = kind(cap=cap, journal=journal)
    harness.executor = factory(harness.registry, max_concurrency=cap)
    return harness


def not_run(outcome: ActionOutcome) -> bool:
    return outcome.status is NOT_EXECUTED and outcome.observation_is_synthetic


def interrupted(outcome: ActionOutcome) -> bool:
    return outcome.status is ENV_ERROR and outcome.observation_is_synthetic


def leftover_tasks() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


HANG_SECONDS = 30
"""Only a hang is judged by the clock: a batch whose gates are all open that has not ended
after this long never will (each scenario takes milliseconds)."""


async def ended(task: asyncio.Future[Any]) -> None:
    """Wait for the batch to end (some runtimes drain on a timer of their own, so a settled
    loop is not yet an ended batch); a batch that never ends fails as a hang."""
    await settle()
    await asyncio.wait({task}, timeout=HANG_SECONDS / 2)
    assert task.done(), "the batch did not end with every gate open"


# ---- shape and order ----------------------------------------------------------------------


@scenario
async def B1_one_outcome_per_call_whatever_the_finishing_order(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", index) for index in range(4)])
    await settle()
    for index in (3, 1, 2, 0):
        harness.open(index)
        await settle()
    await ended(task)
    out = task.result()
    assert [(o.status, o.observation) for o in out] == [(EXECUTED, f"ok {i}") for i in range(4)]


@scenario
async def B1_an_empty_batch_calls_nothing(factory: Any) -> None:
    harness = harness_for(factory)
    assert await harness.executor.execute_batch([], harness.journal) == ()
    assert harness.trace == []


@scenario
async def B2_a_commit_comes_once_its_prefix_is_known(factory: Any) -> None:
    harness = harness_for(factory)
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    assert harness.events("committed") == [0], "call 0 ended, but was not committed"
    harness.open(1)
    await ended(task)
    assert harness.journal is not None
    assert harness.events("committed") == [0, 1]
    assert all(harness.journal.committed_outcomes[i] == task.result()[i] for i in range(2))


@scenario
async def B2_a_cancelled_batch_commits_every_call_first(factory: Any) -> None:
    harness = harness_for(factory)
    task = harness.start([act("safe", 0), act("safe", 1), act("excl", 2)])
    await settle()
    harness.open(0)
    await settle()
    task.cancel()
    await settle()
    harness.release_everything()
    await ended(task)
    assert task.cancelled() or isinstance(harness.error, asyncio.CancelledError)
    assert sorted(harness.events("committed")) == [0, 1, 2], harness.events("committed")


@scenario
async def B2_a_batch_stopped_by_a_handlers_base_exception_commits_every_call_first(
    factory: Any,
) -> None:
    # B2 carries every missing commit: a stop (B14, B15) judges the outcomes committed, this
    # clause that every call has one before the batch raises.
    harness = harness_for(factory, cap=1)
    task = harness.start([act("safe", 0, "base"), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    harness.release_everything()
    await ended(task)
    assert type(harness.error).__name__ == "Stop", f"the batch raised {harness.error!r}"
    assert sorted(harness.events("committed")) == [0, 1], harness.events("committed")


@scenario
async def B3_calls_enter_in_model_order(factory: Any) -> None:
    harness = harness_for(factory, cap=2, journal=False)
    task = harness.start([act("safe", index) for index in range(4)])
    for index in range(4):
        await settle()
        harness.open(index)
    await ended(task)
    assert harness.events("enter") == [0, 1, 2, 3]


@scenario
async def B3_a_slow_started_record_does_not_let_later_calls_enter_first(factory: Any) -> None:
    harness = harness_for(factory)
    assert harness.journal is not None
    harness.journal.started_gates[0] = asyncio.Event()
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    entered_first = harness.events("enter")
    harness.release_everything()
    await ended(task)
    assert entered_first == [], f"{entered_first} entered before call 0"


@scenario
async def B4_a_batch_of_one_equals_execute(factory: Any) -> None:
    for do in ("return", "raise", "env"):
        harness = harness_for(factory, journal=False)
        harness.open(0)
        expected = await harness.registry.executor().execute(act("safe", 0, do))
        try:
            (outcome,) = await harness.executor.execute_batch([act("safe", 0, do)])
        except Exception as exc:  # the difference is the verdict
            message = f"{do}: execute_batch raised {exc!r}, execute gave {expected}"
            raise AssertionError(message) from exc
        assert (outcome.status, outcome.observation) == (expected.status, expected.observation), do


@scenario
async def B5_outcomes_do_not_depend_on_the_finishing_order(factory: Any) -> None:
    results = []
    for order in ((0, 1, 2), (2, 1, 0)):
        harness = harness_for(factory, journal=False)
        task = harness.start([act("safe", 0), unknown(1), act("safe", 2), code(3)])
        await settle()
        for index in order:
            harness.open(index)
            await settle()
        await ended(task)
        # A batch that raises is judged by what it raised (B12 judges that it raised at all).
        results.append(task.result() if harness.error is None else repr(harness.error))
    assert results[0] == results[1]


# ---- concurrency ---------------------------------------------------------------------------


@scenario
async def B6_an_exclusive_call_runs_alone(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0), act("excl", 1), act("safe", 2)])
    seen = []
    for index in range(3):
        await settle()
        seen.append(harness.running())
        harness.open(index)
    await ended(task)
    assert seen == [{0}, {1}, {2}], f"running at each step: {seen}"


@scenario
async def B8_calls_a_callable_classifier_calls_safe_run_together(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("ask", 0, safe=True), act("ask", 1, safe=True)])
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    assert running == {0, 1}, f"only {running} ran"


@scenario
async def B7_never_more_than_the_cap_run(factory: Any) -> None:
    for cap in (1, 2):
        harness = harness_for(factory, cap=cap, journal=False)
        task = harness.start([act("safe", index) for index in range(4)])
        most = 0
        for index in range(4):
            await settle()
            most = max(most, len(harness.running()))
            harness.open(index)
        await ended(task)
        assert most <= cap, f"{most} handlers ran at once with max_concurrency={cap}"


@scenario
async def B8_a_freed_slot_is_filled_at_once(factory: Any) -> None:
    harness = harness_for(factory, cap=2, journal=False)
    task = harness.start([act("safe", index) for index in range(3)])
    await settle()
    harness.open(0)
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    assert running >= {1, 2}, f"after call 0 ended only {running} ran"


@scenario
async def B9_the_classifier_is_asked_at_most_once_never_for_a_rejected_call(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("ask", 0, safe=True), bad("ask", 1)])
    await settle()
    harness.release_everything()
    await ended(task)
    asked = harness.events("classify")
    assert asked in ([], [0]), f"classifier calls: {asked}"


@scenario
async def B10_a_rejected_call_is_not_entered_and_no_barrier(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0), bad("excl", 1), act("safe", 2)])
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    out = task.result()
    assert harness.received.keys().isdisjoint({"not-an-int-1"}), "the rejected call ran"
    assert out[1].status is NOT_EXECUTED, f"the rejected call was answered {out[1]}"
    assert running == {0, 2}, f"running while the rejected call resolved: {running}"


@scenario
async def B10_a_call_rejected_for_its_arguments_is_no_barrier(factory: Any) -> None:
    # Arguments that are not a JSON object, to an exclusive tool: every validator refuses them.
    rejected = Action(tool_call=ToolCall(name="excl", arguments="{not json"))
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0), rejected, act("safe", 2)])
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    assert {0, 2} <= running, f"running while the rejected call resolved: {running}"


@scenario
async def B11_each_handler_gets_its_own_copy(factory: Any) -> None:
    # Each handler sets its top-level "id" and the nested "x" (`Harness.handler`, mutate).
    harness = harness_for(factory, journal=False, kind=NestedHarness)
    harness.mutate = True
    actions = [act("safe", i, nested={"x": "as called"}) for i in range(2)]
    harness.open(0, 1)
    await harness.executor.execute_batch(actions)
    assert harness.received[0] is not harness.received[1]
    assert harness.received[0]["nested"] is not harness.received[1]["nested"]
    called = [{"id": i, "do": "return", "nested": {"x": "as called"}} for i in range(2)]
    assert [thaw(a.tool_call.arguments) for a in actions if a.tool_call] == called
    # A runtime keeps its own record of the turn's calls (the conversation it sends back to
    # the model); an adapter shows it as `recorded_arguments()`, by position.
    recorded = getattr(harness.executor, "recorded_arguments", None)
    if recorded is not None:
        assert recorded() == called, f"the runtime's recorded calls now read {recorded()}"


@scenario
async def B12_a_rejected_call_changes_only_its_own_outcome(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0), unknown(1), act("safe", 2)])
    await settle()
    harness.release_everything()
    await ended(task)
    assert harness.error is None, f"the batch raised {harness.error!r}"
    out = task.result()
    assert [out[0].observation, out[2].observation] == ["ok 0", "ok 2"]
    assert out[1].status is NOT_EXECUTED, f"the unknown tool's call was answered {out[1]}"


# ---- failures and stops --------------------------------------------------------------------


@scenario
async def B12_an_ordinary_exception_changes_only_its_own_outcome(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0), act("safe", 1, "raise"), act("safe", 2)])
    await settle()
    harness.open(1)
    await settle()
    harness.open(0, 2)
    await ended(task)
    assert harness.error is None, f"the batch raised {harness.error!r}"
    out = task.result()
    assert [out[0].observation, out[2].observation] == ["ok 0", "ok 2"]


@scenario
async def B13_an_env_error_stops_the_batch(factory: Any) -> None:
    harness = harness_for(factory, cap=1, journal=False)
    task = harness.start([act("safe", 0, "env"), act("safe", 1)])
    await settle()
    harness.release_everything()
    await ended(task)
    assert harness.error is None, f"the batch raised {harness.error!r}"
    out = task.result()
    assert out[0].status is ENV_ERROR, f"call 0 was answered {out[0]}"
    assert harness.events("enter") == [0] and not_run(out[1]), f"call 1: {out[1]}"


@scenario
async def B14_cancellation_waits_for_running_calls_and_answers_each(factory: Any) -> None:
    harness = harness_for(factory, cap=1)
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    task.cancel()
    await settle()
    stragglers = leftover_tasks()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    assert not running and not stragglers, f"still running: {running}, tasks: {stragglers}"
    assert isinstance(harness.error, asyncio.CancelledError), f"raised {harness.error!r}"
    assert harness.journal is not None
    # What is committed must be the stop's outcome; that every call is committed is B2's.
    out = harness.journal.committed_outcomes
    assert 0 not in out or interrupted(out[0]), f"call 0 committed as {out.get(0)}"
    assert 1 not in out or not_run(out[1]), f"call 1 committed as {out.get(1)}"


@scenario
async def B14_a_handler_ignoring_cancellation_keeps_the_batch_waiting(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0, "ignore_cancel"), act("safe", 1)])
    await settle()
    task.cancel()
    await settle()
    returned_early = task.done()
    harness.open(0)
    await settle()
    harness.release_everything()
    await settle()
    assert not returned_early, "the batch ended while its handler was still running"


@scenario
async def B14_a_batch_cancelled_three_times_still_waits_for_its_handler(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0, STUBBORN), act("safe", 1)])
    await settle()
    for _ in range(3):
        task.cancel()
        await settle()
    returned_early, running = task.done(), harness.running()
    harness.release_everything()
    await ended(task)
    assert not returned_early, f"the batch ended after three cancellations; {running} still ran"
    assert task.cancelled() or isinstance(harness.error, asyncio.CancelledError), (
        f"the batch raised {harness.error!r}"
    )


@scenario
async def B15_a_handlers_base_exception_is_re_raised(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0, "base"), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(task)
    assert type(harness.error).__name__ == "Stop", f"the batch raised {harness.error!r}"
    assert not running, f"{running} still ran when the batch stopped"


@scenario
async def B15_a_handlers_own_cancelled_error_is_re_raised(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    task = harness.start([act("safe", 0, "cancel_self"), act("safe", 1)])
    await settle()
    harness.release_everything()
    await ended(task)
    assert isinstance(harness.error, asyncio.CancelledError), f"raised {harness.error!r}"


@scenario
async def B16_a_non_str_result_raises_type_error(factory: Any) -> None:
    harness = harness_for(factory, journal=False)
    harness.open(0)
    with pytest.raises(TypeError):
        await harness.executor.execute_batch([act("safe", 0, "nonstr")])


@scenario
async def B16_a_journal_fault_propagates_and_stops_the_batch(factory: Any) -> None:
    harness = harness_for(factory, cap=1)
    assert harness.journal is not None
    fault = RuntimeError("journal down")
    harness.journal.fail_committed[0] = fault
    task = harness.start([act("safe", 0), act("safe", 1)])
    await settle()
    harness.open(0)
    await settle()
    done, running = task.done(), harness.running()
    harness.release_everything()
    await ended(task)
    assert harness.error is fault, f"the batch raised {harness.error!r}"
    assert done and not running, f"after the fault the batch ended: {done}, running: {running}"


@scenario
async def B17_started_comes_immediately_before_entry(factory: Any) -> None:
    harness = harness_for(factory)
    harness.open(0, 1)
    await harness.executor.execute_batch([act("safe", 0), act("safe", 1)], harness.journal)
    trace = [event for event in harness.trace if event[0] in ("started", "enter")]
    for position, (kind, index) in enumerate(trace):
        if kind == "started":
            assert trace[position + 1] == ("enter", index), f"trace: {trace}"


@scenario
async def B17_no_started_record_for_a_rejected_call(factory: Any) -> None:
    harness = harness_for(factory)
    task = harness.start([act("safe", 0), bad("safe", 1)])
    await settle()
    harness.release_everything()  # a runtime that enters the rejected call blocks it on a gate
    await ended(task)
    assert harness.events("starting") == [0], f"started for {harness.events('starting')}"


@scenario
async def B18_concurrent_batches_neither_order_nor_limit_each_other(factory: Any) -> None:
    harness = harness_for(factory, cap=1, journal=False)
    first = harness.start([act("safe", 0)])
    second = asyncio.ensure_future(harness.executor.execute_batch([act("safe", 1)]))
    await settle()
    running = harness.running()
    harness.release_everything()
    await ended(first)
    await ended(second)
    assert running == {0, 1}, f"only {running} ran while both batches were open"


# ---- the matrix ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def hang_guard() -> Iterator[None]:
    """A scenario that hangs (a batch awaiting what nothing will release) fails instead of
    stopping the run; the alarm is far beyond any scenario's milliseconds."""

    def hang(signum: int, frame: Any) -> None:
        raise AssertionError(f"the scenario hung for {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(HANG_SECONDS)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest_asyncio.fixture(autouse=True)
async def release_handlers() -> AsyncIterator[None]:
    """After each scenario, even a failed one, open every gate and end what the batch left.
    Before it, the loop's default executor becomes a `ThreadWork`, which `settle` waits for."""
    asyncio.get_running_loop().set_default_executor(ThreadWork())
    yield
    while LIVE:
        LIVE.pop().release_everything()
    await settle()
    for task in leftover_tasks():
        task.cancel()
    await settle()


def _factory(adapter: str) -> Callable[..., Any]:
    if adapter == "polyloop":
        return RegistryBatchExecutor
    entry = EXPECTED["adapters"][adapter]
    for module in entry["requires"]:
        if ENABLED:
            importlib.import_module(module)  # in the field env a missing runtime is an error
        else:
            pytest.importorskip(module)
    if not ENABLED:
        pytest.skip("field batch scenarios run with POLYLOOP_FIELD=1 (tox -e field)")
    module_name, _, name = entry["target"].partition(":")
    factory: Callable[..., Any] = getattr(importlib.import_module(module_name), name)
    return factory


def _cases() -> list[Any]:
    cases = []
    for adapter in ["polyloop", *EXPECTED["adapters"]]:
        failing = {} if adapter == "polyloop" else EXPECTED["adapters"][adapter]["failing"]
        for name in SCENARIOS:
            verdict = "fail" if name in failing else "pass"
            cases.append(pytest.param(adapter, name, id=f"{adapter}-{name}-{verdict}"))
    return cases


@pytest.mark.asyncio
@pytest.mark.parametrize("adapter,name", _cases())
async def test_B_scenario_verdict(adapter: str, name: str) -> None:
    factory = _factory(adapter)
    failing = {} if adapter == "polyloop" else EXPECTED["adapters"][adapter]["failing"]
    try:
        await SCENARIOS[name](factory)
    except (AssertionError, pytest.fail.Exception) as failure:
        assert name in failing, f"{adapter} now fails {name}: {failure}"
    else:
        assert name not in failing, (
            f"{adapter} now passes {name}; expected.json says it fails ({failing.get(name)}). "
            "Update expected.json and docs/field-report.md if the runtime really changed."
        )


def test_batch_scenario_matrix_is_well_formed() -> None:
    """Every pinned failure names a scenario with a reason that names its cause, and every
    scenario is named for a B clause."""
    assert all(name.split("_")[0] in {f"B{n}" for n in range(1, 19)} for name in SCENARIOS)
    for adapter, entry in EXPECTED["adapters"].items():
        module_name = entry["target"].partition(":")[0]
        assert Path(__file__).with_name(f"{module_name.rpartition('.')[2]}.py").is_file()
        for name, reason in entry["failing"].items():
            assert name in SCENARIOS, f"{adapter} pins unknown scenario {name}"
            assert isinstance(reason, str) and len(reason) > 20, (adapter, name)
