"""Scripted, recorded and gated listeners and handlers for the policy properties.

A `Stack` names what each listener and the handler do; `Recorder.policy()` builds the
`ToolPolicy` whose listeners do exactly that and write every invocation into one trace:
``(event, stage, position)`` with ``call``, ``end`` and ``cancelled`` events. Every listener
and the handler first wait at a gate; `play` opens the gates one at a time in the order the
`Schedule` ranks them (so the property, not the event loop, picks which of several concurrent
listeners finishes first) and can cancel the task awaiting ``execute`` while a chosen gate is
held. Nothing here reads a clock to decide anything: the wall clock only bounds a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from polyloop import (
    Action,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

__all__ = [
    "OTHER",
    "SECRET",
    "TOOL",
    "ApproverFault",
    "DeciderFault",
    "DeciderHalt",
    "FactoryFailed",
    "Played",
    "PostFault",
    "Recorder",
    "Schedule",
    "Stack",
    "Unsettled",
    "play",
    "play_awaitable",
]

SECRET = "SECRET-p0l1cy-7"
"""In every listener exception's message: P4, P5 and P10 forbid it in the sentence."""
TOOL = "probe_tool"
OTHER = "other_tool"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["id"],
}

DENYING = ("deny", "bool", "str", "bare", "raise")
"""Decider answers that count as DENY (P3, P4)."""
GARBAGE: dict[str, object] = {"bool": True, "str": "allow", "bare": Decision.ALLOW}
APPROVALS: dict[str, object] = {"true": True, "false": False, "none": None, "one": 1, "yes": "yes"}


class DeciderFault(RuntimeError):
    """What a raising decider raises (P4)."""


class ApproverFault(LookupError):
    """What a raising approver raises (P5)."""


class PostFault(ArithmeticError):
    """What a raising post-processor raises (P10)."""


class WrapperFault(RuntimeError):
    """What a raising wrapper raises: the chain's Exception, mapped as E4 (P8)."""


class DeciderHalt(BaseException):
    """A decider's BaseException that is not an Exception: it must propagate as is (P4)."""


class ListenerAborted(RuntimeError):
    """What a listener raises instead of the cancellation it was sent, when the schedule says
    so (P9: execute still raises CancelledError)."""


class FactoryFailed(Exception):
    """The factory raised: the target cannot be built (an error, not a verdict)."""


class Unsettled(Exception):
    """The executor never became quiet within the deadline: no verdict for this example."""


@dataclass(frozen=True)
class Stack:
    """One policy, one handler and one call, as the kit scripts them."""

    deciders: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    """One reason per decider (a Verdict's reason; unused for other answers)."""
    approver: str = "missing"
    wrappers: tuple[str, ...] = ()
    post: tuple[str, ...] = ()
    default: str = "ALLOW"
    handler: str = "return"
    call: str = "valid"
    ident: int = 1

    def arguments(self) -> dict[str, Any]:
        return {"id": self.ident, "tags": ["a", "b"]}

    def action(self) -> Action:
        if self.call == "nocall":
            return Action(code="print('no tool call')")
        if self.call == "unknown":
            return Action(tool_call=ToolCall(name="no_such_tool", arguments=self.arguments()))
        if self.call == "invalid":
            return Action(tool_call=ToolCall(name=TOOL, arguments={"tags": []}))
        return Action(tool_call=ToolCall(name=TOOL, arguments=self.arguments()))

    def reason(self, position: int) -> str:
        return self.reasons[position] if position < len(self.reasons) else f"rule-{position}"

    def describe(self) -> str:
        deciders = ", ".join(
            f"{kind}({self.reason(i)!r})" if kind in ("allow", "ask", "deny") else kind
            for i, kind in enumerate(self.deciders)
        )
        return (
            f"ToolPolicy(deciders=[{deciders}], approver={self.approver}, "
            f"wrappers={list(self.wrappers)}, post={list(self.post)}, "
            f"default={self.default}); handler: {self.handler}; call: {self.call}"
        )


@dataclass(frozen=True)
class Schedule:
    """Which held gate opens next (the lowest rank; ranks index gates by arrival, cycling), and
    whether the task awaiting ``execute`` is cancelled while the gate of arrival
    `cancel_at` is held, with every listener then swallowing the cancellation (`swallow`) or
    turning it into an ordinary exception (`convert`, which wins). `stale` earlier cancellations
    of that task were swallowed by the caller before it called ``execute`` (a call made from a
    cleanup path): P9 speaks of the task cancelled while it awaits ``execute``, so they must
    change nothing, and a cancellation after them still counts (on 3.11+ the task's
    ``cancelling()`` is `stale` when ``execute`` begins)."""

    ranks: tuple[int, ...] = ()
    cancel_at: int | None = None
    swallow: bool = False
    convert: bool = False
    stale: int = 0

    def rank(self, arrival: int) -> int:
        return self.ranks[arrival % len(self.ranks)] if self.ranks else 0

    def describe(self) -> str:
        parts = [f"gates open by rank {list(self.ranks)}" if self.ranks else "gates open FIFO"]
        if self.cancel_at is not None:
            parts.append(
                f"cancelled while gate {self.cancel_at} is held"
                + (
                    ", listeners raise ListenerAborted instead"
                    if self.convert
                    else ", listeners swallow the cancellation"
                    if self.swallow
                    else ""
                )
            )
        if self.stale:
            parts.insert(
                0,
                f"execute awaited by a task that swallowed {self.stale} earlier "
                f"cancellation{'s' if self.stale > 1 else ''} of its own",
            )
        return "; ".join(parts)


@dataclass(eq=False)
class _Gate:
    stage: str
    position: int
    arrival: int
    event: asyncio.Event


Event = tuple[str, str, int]


@dataclass
class Recorder:
    """The listeners of one stack and everything they saw."""

    stack: Stack
    schedule: Schedule = field(default_factory=Schedule)
    trace: list[Event] = field(default_factory=list)
    seen: list[tuple[str, int, object]] = field(default_factory=list)
    """Per listener call: stage, position and the ToolCall object it received."""
    reasons_seen: list[object] = field(default_factory=list)
    post_inputs: list[tuple[int, object]] = field(default_factory=list)
    handler_args: list[object] = field(default_factory=list)
    """What each handler entry received, copied before the handler mutated it."""
    handler_problems: list[str] = field(default_factory=list)
    other_entered: int = 0
    waiting: list[_Gate] = field(default_factory=list)
    arrivals: int = 0
    held: dict[int, tuple[str, int]] = field(default_factory=dict)
    halt: DeciderHalt = field(default_factory=lambda: DeciderHalt(SECRET))
    lenient: bool = False
    """Every decider allows (a later call on the same executor must then run, P6)."""

    def reset(self) -> None:
        """Forget the previous call (the listeners stay: they belong to the executor)."""
        self.trace.clear()
        self.seen.clear()
        self.reasons_seen.clear()
        self.post_inputs.clear()
        self.handler_args.clear()
        self.handler_problems.clear()
        self.arrivals = 0
        self.held.clear()

    def count(self, event: str, stage: str, position: int | None = None) -> int:
        return sum(
            1
            for e, s, p in self.trace
            if e == event and s == stage and (position is None or p == position)
        )

    @contextlib.contextmanager
    def _stage(self, stage: str, position: int, call: object) -> Iterator[None]:
        """Trace one stage's run from its call to its end, however it ends."""
        self.trace.append(("call", stage, position))
        if stage != "handler":
            self.seen.append((stage, position, call))
        try:
            yield
        finally:
            self.trace.append(("end", stage, position))

    async def hold(self, stage: str, position: int) -> None:
        """Wait at a gate of this stage and position until `play` opens it; when the call is
        cancelled meanwhile, obey, swallow or convert the cancellation as the schedule says."""
        gate = _Gate(stage, position, self.arrivals, asyncio.Event())
        self.held[self.arrivals] = (stage, position)
        self.arrivals += 1
        self.waiting.append(gate)
        try:
            await gate.event.wait()
        except asyncio.CancelledError:
            self.trace.append(("cancelled", stage, position))
            if self.schedule.convert and stage != "handler":
                raise ListenerAborted(f"{stage} {position} aborted") from None
            if not self.schedule.swallow or stage == "handler":
                raise
        finally:
            if gate in self.waiting:
                self.waiting.remove(gate)

    def policy(self) -> ToolPolicy:
        stack = self.stack
        approver: Any = None if stack.approver == "missing" else self._approver
        return ToolPolicy(
            deciders=tuple(self._decider(i, k) for i, k in enumerate(stack.deciders)),
            approver=approver,
            wrappers=tuple(self._wrapper(i, k) for i, k in enumerate(stack.wrappers)),
            post=tuple(self._post(i, k) for i, k in enumerate(stack.post)),
            default=Decision[stack.default],
        )

    def _decider(self, position: int, kind: str) -> Callable[[ToolCall], Any]:
        reason = self.stack.reason(position)

        async def decider(call: ToolCall) -> object:
            with self._stage("decide", position, call):
                await self.hold("decide", position)
                if self.lenient:
                    return Verdict(decision=Decision.ALLOW, reason="later call")
                if kind == "raise":
                    raise DeciderFault(f"decider failed on {SECRET}")
                if kind == "halt":
                    raise self.halt
                if kind in GARBAGE:
                    return GARBAGE[kind]
                if kind == "abstain":
                    return None
                return Verdict(decision=Decision[kind.upper()], reason=reason)

        return decider

    async def _approver(self, call: ToolCall, reasons: tuple[str, ...]) -> object:
        with self._stage("approve", 0, call):
            self.reasons_seen.append(reasons)
            await self.hold("approve", 0)
            if self.stack.approver == "raise":
                raise ApproverFault(f"approver failed on {SECRET}")
            return APPROVALS[self.stack.approver]

    def _wrapper(self, position: int, kind: str) -> Callable[..., Any]:
        async def wrapper(call: ToolCall, proceed: Callable[[], Any]) -> object:
            with self._stage("wrap", position, call):
                await self.hold("wrap", position)
                if kind == "short":
                    return f"short-{position}"
                if kind == "shortnonstr":
                    return 7
                if kind == "raise":
                    raise WrapperFault(f"wrapper-fault-{position}")
                try:
                    if kind == "retry":
                        try:
                            return await proceed()
                        except Exception:
                            return await proceed()
                    if kind == "twice":
                        await proceed()
                    return await proceed()
                except asyncio.CancelledError:
                    self.trace.append(("cancelled", "wrap", position))
                    if self.schedule.convert:
                        raise ListenerAborted(f"wrapper {position} aborted") from None
                    if self.schedule.swallow:
                        return f"swallowed-{position}"
                    raise

        return wrapper

    def _post(self, position: int, kind: str) -> Callable[..., Any]:
        async def post(call: ToolCall, observation: str) -> object:
            with self._stage("post", position, call):
                self.post_inputs.append((position, observation))
                await self.hold("post", position)
                if kind == "raise":
                    raise PostFault(f"redaction failed on {SECRET}")
                if kind == "nonstr":
                    return 5
                return f"{observation}|p{position}"

        return post

    async def handler(self, arguments: Any) -> Any:
        with self._stage("handler", 0, None):
            self._keep_and_mutate(arguments)
            await self.hold("handler", 0)
            kind, ident = self.stack.handler, self.stack.ident
            if kind == "raise":
                raise ValueError(f"handler failed for {ident}")
            if kind == "env":
                raise ToolEnvironmentError(f"backend down for {ident}")
            if kind == "nonstr":
                return 42
            return f"handler-out:{ident}"

    def _keep_and_mutate(self, arguments: Any) -> None:
        """Keep a copy of the arguments the handler was given, then change them in place, as a
        careless handler would (P7 judges where that change shows)."""
        try:
            self.handler_args.append(copy.deepcopy(arguments))
        except Exception:
            self.handler_args.append(arguments)
        try:
            arguments["mutated"] = True
            arguments["tags"].append("mutated")
        except Exception as exc:
            self.handler_problems.append(f"could not mutate its arguments ({type(exc).__name__})")

    async def other(self, arguments: Any) -> str:
        self.other_entered += 1
        return "other-out"

    def registry(self) -> ToolRegistry:
        return ToolRegistry(
            [
                ToolSpec(
                    name=TOOL,
                    description="The kit's probe.",
                    parameters=SCHEMA,
                    handler=self.handler,
                ),
                ToolSpec(
                    name=OTHER, description="Another tool.", parameters=SCHEMA, handler=self.other
                ),
            ]
        )


@dataclass
class Played:
    """One ``execute`` call: what it returned or raised, and where in the trace it ended."""

    returned: object = None
    raised: BaseException | None = None
    cancel_mark: int | None = None
    """Trace length when the kit cancelled the task (None: not cancelled)."""
    cancelled_gate: tuple[str, int] | None = None
    end_mark: int = 0
    """Trace length when execute ended."""


async def _quiet(recorder: Recorder, task: asyncio.Future[Any] | None) -> None:
    """Let the loop run until nothing visible changes for a few turns."""
    last: tuple[int, int, bool] | None = None
    stable = 0
    for _ in range(400):
        await asyncio.sleep(0)
        now = (len(recorder.trace), len(recorder.waiting), bool(task and task.done()))
        if now == last:
            stable += 1
            if stable >= 6:
                return
        else:
            stable, last = 0, now


async def play(
    executor: Any, recorder: Recorder, action: Action, touch: Callable[[], None], deadline: float
) -> Played:
    """Run ``executor.execute(action)`` to its end, opening gates in the schedule's order."""
    pending = getattr(executor, "execute", None)
    awaited = pending(action) if callable(pending) else None
    if not inspect.isawaitable(awaited):
        raise FactoryFailed(
            f"the factory built {type(executor).__name__}, whose execute(action) is not a "
            "coroutine function (an ActionExecutor's is, E15)"
        )
    return await play_awaitable(awaited, recorder, touch, deadline)


async def _after_stale(awaited: Any, stale: int) -> Any:
    """Await `awaited` in a task that first cancels itself `stale` times and swallows each
    cancellation without `uncancel()`, as a caller's ``except CancelledError`` does."""
    task = asyncio.current_task()
    assert task is not None
    for _ in range(stale):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)
    return await awaited


async def play_awaitable(
    awaited: Any, recorder: Recorder, touch: Callable[[], None], deadline: float
) -> Played:
    """Await `awaited` (an execute or execute_batch call) to its end, opening gates in the
    schedule's order and cancelling it where the schedule says."""
    schedule = recorder.schedule
    loop = asyncio.get_running_loop()
    until = loop.time() + deadline
    task = asyncio.ensure_future(
        _after_stale(awaited, schedule.stale) if schedule.stale else awaited
    )
    played = Played()
    while not task.done():
        await _quiet(recorder, task)
        touch()
        if task.done():
            break
        if loop.time() > until:
            task.cancel()
            raise Unsettled(f"execute did not end within {deadline:g}s")
        held = recorder.waiting
        at = schedule.cancel_at
        if played.cancel_mark is None and any(g.arrival == at for g in held):
            assert at is not None
            played.cancel_mark = len(recorder.trace)
            played.cancelled_gate = recorder.held[at]
            task.cancel()
            continue
        if held:
            gate = min(held, key=lambda g: (schedule.rank(g.arrival), g.arrival))
            held.remove(gate)
            gate.event.set()
            continue
        await asyncio.wait({task}, timeout=0.005)  # the executor awaits something of its own
    played.end_mark = len(recorder.trace)
    try:
        played.returned = task.result()
    except BaseException as exc:  # the executor's own answer, whatever it is
        played.raised = exc
    # Whatever the executor left running is let go, so a late listener call is seen (P2).
    for _ in range(3):
        for gate in list(recorder.waiting):
            recorder.waiting.remove(gate)
            gate.event.set()
        await _quiet(recorder, None)
    return played
