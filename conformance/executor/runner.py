"""Running an executor under test without letting it take the kit down.

Every example runs as a job of the kit's one deadline runner (`conformance._core.deadline`), so
an ``execute`` that never returns (even one that blocks the loop with ``time.sleep``, or swallows
cancellation) is reported, not waited for; a KeyboardInterrupt raised by a handler escapes only
that loop, never the kit's main thread; and a factory that raises becomes a `TargetError` for
the clause being checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conformance._core.capture import OutputCapture
from conformance._core.deadline import DeadlineRunner, Job, Make
from conformance._core.limits import GRACE
from conformance._core.outcome import TargetError
from conformance._core.text import clip, describe_exception, exception_text, safe_repr
from conformance.executor.behaviours import CANCEL_MESSAGE, Behaviour, HandlerCall, Script
from polyloop import Action, ActionOutcome, ActionStatus, ToolRegistry

__all__ = ["Observed", "Step", "TargetError", "Trial", "exception_summary"]


@dataclass(kw_only=True, eq=False)
class Observed:
    """What one ``execute`` call did: its outcome or exception, and the handler calls it made
    (None in black-box mode, where the kit cannot see the handlers)."""

    outcome: object = None
    raised: BaseException | None = None
    timed_out: float | None = None
    """The deadline, in seconds, if execute did not finish within it."""
    calls: tuple[HandlerCall, ...] | None = None
    escaped_loop: bool = False
    """The exception escaped the event loop itself (KeyboardInterrupt/SystemExit)."""
    blocked: bool = False
    """Timed out without giving control back to the event loop (or ignoring cancellation)."""
    lookalike: str | None = None
    """execute returned an instance of this class, which has ActionOutcome's fields but is not
    an ActionOutcome; `outcome` is then an ActionOutcome built from those fields, so every
    clause judges the values and only E15 the type."""
    concurrent_calls: tuple[HandlerCall, ...] | None = None
    """Every handler call of a concurrent run (white-box), not attributed to steps."""

    def describe(self) -> str:
        calls = "" if self.calls is None else f"; handler called {len(self.calls)}x"
        if self.lookalike is not None:
            calls += f" (returned as an instance of {self.lookalike}, not polyloop's ActionOutcome)"
        if self.timed_out is not None:
            how = " and blocked the event loop (or ignored cancellation)" if self.blocked else ""
            return f"execute did not finish within {self.timed_out:g}s{how}{calls}"
        if self.raised is not None:
            return f"execute raised {exception_summary(self.raised)}{calls}"
        if isinstance(self.outcome, ActionOutcome):
            o = self.outcome
            return (
                f"{o.status.name}, observation {_clip(o.observation)}, "
                f"synthetic={o.observation_is_synthetic}, env_reported_completion="
                f"{o.env_reported_completion!r}, observation_truncated_chars="
                f"{o.observation_truncated_chars!r}{calls}"
            )
        return f"execute returned {_clip(self.outcome)}, not an ActionOutcome{calls}"


def _clip(value: object, limit: int = 200) -> str:
    return clip(safe_repr(value), limit)


def exception_summary(exc: BaseException) -> str:
    return f"{type(exc).__name__}({_clip(exception_text(exc))})"


@dataclass(frozen=True, kw_only=True)
class Step:
    """One action of a scenario, and what the handler it reaches does (None: black-box)."""

    action: Action
    behaviour: Behaviour | None = None


def _start(executor: Any, action: Action) -> asyncio.Future[Any] | Observed:
    """``executor.execute(action)`` as a task, or what went wrong before there was one."""
    try:
        awaitable = executor.execute(action)
    except BaseException as exc:  # SystemExit, GeneratorExit, ...: what execute did, not a crash
        return Observed(raised=exc)
    if not inspect.isawaitable(awaitable):
        return Observed(
            raised=TypeError(
                f"execute() returned {type(awaitable).__name__}, not an awaitable: it must be "
                "declared async def"
            )
        )
    return asyncio.ensure_future(awaitable)


async def _execute(executor: Any, action: Action, deadline: float) -> Observed:
    task = _start(executor, action)
    if isinstance(task, Observed):
        return task
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        task.cancel()
        return Observed(timed_out=deadline)
    return _settled(task)


_OUTCOME_FIELDS = (
    "status",
    "observation",
    "observation_is_synthetic",
    "env_reported_completion",
    "observation_truncated_chars",
)


def _exact(outcome: ActionOutcome) -> ActionOutcome:
    """The outcome with its observation as an exact ``str`` copy, read with ``str.__str__``
    rather than the executor's own methods: a ``str`` subclass whose ``__eq__``/``__ne__``/
    ``__contains__`` always agree must not pass a comparison it would fail as text (issue 22).
    (``type()`` cannot be lied to, unlike ``isinstance``.)"""
    observation = outcome.observation
    if type(observation) is str or not issubclass(type(observation), str):
        return outcome
    return replace(outcome, observation=str.__str__(observation))


def returned(value: object) -> Observed:
    """What execute returned, with a look-alike outcome (ActionOutcome's fields on another
    class) turned into the ActionOutcome it imitates (see `Observed.lookalike`), and every
    observation an exact ``str`` (`_exact`)."""
    if issubclass(type(value), ActionOutcome):
        assert isinstance(value, ActionOutcome)
        return Observed(outcome=_exact(value))
    if not all(hasattr(value, f) for f in _OUTCOME_FIELDS):
        return Observed(outcome=value)
    if not isinstance(getattr(value, "status", None), ActionStatus):
        return Observed(outcome=value)
    try:
        outcome = ActionOutcome(**{name: getattr(value, name) for name in _OUTCOME_FIELDS})
    except (TypeError, ValueError):
        return Observed(outcome=value)  # not even valid field values: judged as not an outcome
    kind = type(value)
    return Observed(outcome=_exact(outcome), lookalike=f"{kind.__module__}.{kind.__qualname__}")


def _settled(task: asyncio.Future[Any]) -> Observed:
    """What a finished task gave. For a cancelled task, the CancelledError that escaped the
    coroutine itself (E6 wants that very object): ``task.result()`` raises it on 3.11+ (only the
    first time it is asked); on 3.10 it raises a fresh one whose ``__context__`` is it."""
    try:
        value = task.result()
    except asyncio.CancelledError as exc:
        inner = exc.__context__
        if sys.version_info < (3, 11) and isinstance(inner, asyncio.CancelledError):
            return Observed(raised=inner)
        return Observed(raised=exc)
    except BaseException as exc:
        return Observed(raised=exc)
    return returned(value)


async def _execute_cancelled(
    executor: Any,
    action: Action,
    deadline: float,
    suspended: Callable[[], bool],
    touch: Callable[[], None],
    release: Callable[[], None] = lambda: None,
) -> Observed | None:
    """Start ``execute``, cancel it once `suspended()` says the handler is waiting, and report
    what came out. None when the call finished before it could be cancelled."""
    loop = asyncio.get_running_loop()
    task = _start(executor, action)
    if isinstance(task, Observed):
        return task
    started = loop.time()
    spins = 0
    while not task.done() and not suspended():
        if loop.time() - started > deadline:
            task.cancel()
            return Observed(timed_out=deadline)
        spins += 1
        await asyncio.sleep(0 if spins < 50 else 0.001)
    if task.done():
        return None
    touch()
    release()  # in the same iteration as the cancellation (`Suspend.finish`)
    task.cancel(CANCEL_MESSAGE)
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        return Observed(timed_out=deadline)
    return _settled(task)


class Trial:
    """Sends a scenario's actions to the executor under test and observes what happens.

    White-box (`factory` set): each run builds a registry whose handlers the kit scripts, asks
    the factory for a fresh executor, and records every handler call. Black-box (`executor`
    set): the same executor serves every run, and handler calls are unknown."""

    def __init__(
        self,
        *,
        factory: Callable[[ToolRegistry], Any] | None = None,
        executor: Any = None,
        deadline: float,
        runner: DeadlineRunner,
    ) -> None:
        self.factory = factory
        self.executor = executor
        self.deadline = deadline
        self.runner = runner
        self.cancellations = 0
        """How many calls `run_cancelled` caught still running and cancelled."""
        self.stuck = 0
        """How many jobs never gave their event loop back (the runner moved to a new loop)."""
        self.stuck_since: str | None = None
        """The clause in which a job first got stuck (set by the engine)."""
        self.silent_since: str | None = None
        """The clause after which the executor stopped answering (`answers`; set by the
        engine): later clauses are not judged."""
        self.judged = 0
        """How many examples a clause about a handler's result could judge (white-box: the
        handler ran); see `conformance.executor.properties.shared.not_reached`."""
        self.output = OutputCapture()
        """What the target logged or warned during its jobs; the engine marks where each
        example starts (`OutputCapture.start_example`)."""

    def _run_job(self, job: Make, limit: float) -> Job | None:
        """One job on the deadline runner, with the target's logging and warnings captured."""
        with self.output.capturing():
            return self.runner.run(job, limit, isolate=self.white_box)

    @property
    def white_box(self) -> bool:
        return self.factory is not None

    def _script(self, tools: Sequence[Any], steps: Sequence[Step], per_call: bool) -> Script:
        script = Script()
        for step in steps:
            call = step.action.tool_call
            if call is not None and step.behaviour is not None:
                script.set(call.name, step.behaviour, call.arguments, per_call=per_call)
        return script

    async def _executor_for(self, tools: Sequence[Any], script: Script) -> Any:
        if self.factory is None:
            return self.executor
        registry = ToolRegistry(specs=[tool.spec(script.handler_for(tool.name)) for tool in tools])
        try:
            executor = self.factory(registry)
        except Exception as exc:
            raise TargetError(f"the factory raised {describe_exception(exc)}") from exc
        except KeyboardInterrupt:
            raise  # a real Ctrl-C stops the run
        except BaseException as exc:  # SystemExit/GeneratorExit: never a pass, never a crash
            # Worded apart from "raised": a factory that kills its process is hostile, and is
            # that clause's error rather than a wrong set-up (`engine._set_up_problem`).
            raise TargetError(
                f"the factory ended with {describe_exception(exc)} (a BaseException, not an "
                "Exception)"
            ) from exc
        if not callable(getattr(executor, "execute", None)):
            raise TargetError(
                f"the factory returned {type(executor).__name__}, which has no execute method"
            )
        return executor

    def _finish(
        self,
        job: Job | None,
        results: list[Observed],
        steps: Sequence[Step],
        script: Script,
        marks: list[int],
    ) -> list[Observed]:
        if job is not None and job.escaped is None and isinstance(job.raised, TargetError):
            raise job.raised
        if job is not None and job.escaped is None and job.raised is not None:
            if not isinstance(job.raised, Exception):
                # A BaseException (SystemExit, GeneratorExit, KeyboardInterrupt) that came out of
                # the target's code on the loop thread: the clause's error, never the kit's exit
                # (a real Ctrl-C arrives on the main thread, not here).
                raise TargetError(
                    f"the target raised {describe_exception(job.raised)}"
                ) from job.raised
            raise job.raised  # a bug in the kit itself: let it surface
        if job is None:
            self.stuck += 1
        if job is None or job.escaped is not None:
            # The loop was lost mid-step: the step being run gets what happened to the loop.
            failed = (
                Observed(timed_out=self.deadline, blocked=True)
                if job is None
                else Observed(raised=job.escaped, escaped_loop=True)
            )
            results = [*results, failed]
            results += [
                Observed(timed_out=self.deadline, blocked=True)
                for _ in range(len(steps) - len(results))
            ]
        if self.white_box:
            bounds = [*marks, len(script.calls)]
            for index, observed in enumerate(results):
                if observed.calls is None and index + 1 < len(bounds):
                    observed.calls = tuple(script.calls[bounds[index] : bounds[index + 1]])
        return results

    def answers(self) -> bool:
        """Whether the executor still answers at all: a fresh one (white-box) given one plain
        call to a tool that returns "ok" gives something back within the deadline. Asked after
        a clause failed on a timeout, so that an executor that stopped answering (it leaked
        every thread it had) is not charged with every later clause (issue 18)."""
        if not self.white_box:
            return True
        from conformance.executor.behaviours import ReturnText
        from conformance.executor.strategies.schemas import ToolDef
        from polyloop import ToolCall

        tool = ToolDef(name="probe", description="Answers ok.", parameters={"type": "object"})
        step = Step(
            action=Action(tool_call=ToolCall(name="probe", arguments={})),
            behaviour=ReturnText(text="ok"),
        )
        try:
            return self.run((tool,), (step,))[0].timed_out is None
        except TargetError:
            return True  # the factory's failure is reported where it happens

    def run(self, tools: Sequence[Any], steps: Sequence[Step]) -> list[Observed]:
        """Run the steps one after another on one executor."""
        script = self._script(tools, steps, per_call=len(steps) > 1)
        results: list[Observed] = []
        marks: list[int] = []

        async def job(touch: Callable[[], None]) -> None:
            executor = await self._executor_for(tools, script)
            for step in steps:
                touch()
                marks.append(len(script.calls))
                results.append(await _execute(executor, step.action, self.deadline))

        limit = self.deadline + GRACE
        finished = self._run_job(job, limit)
        return self._finish(finished, results, steps, script, marks)

    def run_concurrently(
        self, tools: Sequence[Any], steps: Sequence[Step], *, fresh_loop: bool = False
    ) -> list[Observed]:
        """Run the steps concurrently (``asyncio.gather``) on one executor. Handler calls are
        not attributed to steps here. `fresh_loop`: in an event loop of their own, on a
        thread of its own, rather than the runner's long-lived loop (asyncio primitives held
        across calls bind to the first loop that contends for them: E11)."""
        script = self._script(tools, steps, per_call=True)
        results: list[Observed] = []

        async def together(touch: Callable[[], None]) -> None:
            executor = await self._executor_for(tools, script)
            touch()
            results.extend(
                await asyncio.gather(
                    *(_execute(executor, step.action, self.deadline) for step in steps)
                )
            )

        async def job(touch: Callable[[], None]) -> None:
            if fresh_loop:
                await asyncio.to_thread(asyncio.run, together(touch))
            else:
                await together(touch)

        limit = self.deadline + GRACE
        finished = self._run_job(job, limit)
        observed = self._finish(finished, results, steps, script, [])
        every = tuple(script.calls) if self.white_box else None
        for item in observed:
            item.calls = None
            item.concurrent_calls = every
        return observed

    def inspect(
        self, tools: Sequence[Any], look: Callable[[Any], Any], around: Step | None = None
    ) -> Any:
        """``look(executor)`` on the kit's loop thread, for an executor built as for a run
        (white-box: from the factory, over a registry of `tools`; black-box: the executor).
        With `around`, ``(look before, look after)`` executing that step in between (E15:
        ``parameters()`` must not change once ``execute`` ran). None when it did not finish
        within the deadline."""
        box: list[Any] = []
        script = Script()

        async def job(touch: Callable[[], None]) -> None:
            executor = await self._executor_for(tools, script)
            touch()
            box.append(look(executor))
            if around is not None:
                await _execute(executor, around.action, self.deadline)
                box[0] = (box[0], look(executor))

        finished = self._run_job(job, self.deadline + GRACE)
        if finished is not None and finished.escaped is None and finished.raised is not None:
            raise finished.raised
        return box[0] if box else None

    def run_cancelled(self, tools: Sequence[Any], step: Step) -> Observed | None:
        """Run one step and cancel it while its handler is suspended (white-box: the scripted
        handler says so; black-box: the call has not finished after a few loop iterations).
        None when the call finished first."""
        script = self._script(tools, [step], per_call=False)
        results: list[Observed] = []
        finished_first = []

        def suspended() -> bool:
            if self.white_box:
                return any(call.state == "suspended" for call in script.calls)
            return True

        def release() -> None:
            for call in script.calls:
                if call.release is not None and not call.release.done():
                    call.release.set_result("late")

        async def job(touch: Callable[[], None]) -> None:
            executor = await self._executor_for(tools, script)
            touch()
            if not self.white_box:
                # Give the call a few iterations to finish on its own before cancelling it.
                task = _start(executor, step.action)
                if isinstance(task, Observed):
                    results.append(task)
                    return
                for _ in range(3):
                    await asyncio.sleep(0)
                if task.done():
                    finished_first.append(True)
                    with contextlib.suppress(BaseException):
                        task.result()
                    return
                task.cancel(CANCEL_MESSAGE)
                done, _ = await asyncio.wait({task}, timeout=self.deadline)
                results.append(_settled(task) if done else Observed(timed_out=self.deadline))
                return
            observed = await _execute_cancelled(
                executor, step.action, self.deadline, suspended, touch, release
            )
            if observed is None:
                finished_first.append(True)
            else:
                results.append(observed)

        limit = self.deadline + GRACE
        finished = self._run_job(job, limit)
        if finished is not None and finished.escaped is None and finished_first:
            if isinstance(finished.raised, TargetError):
                raise finished.raised
            return None
        self.cancellations += 1
        return self._finish(finished, results, [step], script, [0])[0]
