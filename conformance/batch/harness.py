"""The schedule harness every B property shares: scripted handlers, one trace, gates, settle.

Each call of a batch names its position in ``id``. Its handler records ``("enter", id)`` when it
starts and ``("exit", id)`` when it ends, and in between waits for its gate, which the property
opens. The classifier and the journal write into the same trace, so one list shows the whole
order of events. `Harness.settle` yields to the event loop until nothing is left to run: no
verdict depends on wall-clock time.

Gates work across threads and event loops, so an executor that offloads handlers to threads
(or runs them on an event loop of its own) still meets the same script; the harness notes
that it did (`Harness.foreign`), and the checks whose verdict would then rest on how threads
happened to be scheduled report it inconclusive instead of failing it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

__all__ = [
    "BEHAVIOURS",
    "CLASSIFIER_ERROR",
    "KINDS",
    "REJECTED",
    "SAFE",
    "STOPPING",
    "Call",
    "Gate",
    "Harness",
    "Journal",
    "JournalFault",
    "Stop",
    "Unsettled",
]

SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "do": {"type": "string"}},
    "required": ["id"],
}

KINDS = (
    "safe",
    "excl",
    "ask_true",
    "ask_false",
    "ask_raise",
    "ask_truthy",
    "finish",
    "bad",
    "unknown",
    "code",
)
"""Classification kinds of S6 (``concurrency_safe`` True or False, a callable answering True,
False, raising or answering a truthy non-bool, and a safe ``completes_run`` tool) and the three
kinds of rejected call (invalid arguments, an unknown tool, a code action)."""
SAFE = ("safe", "ask_true")
REJECTED = ("bad", "unknown", "code")
AMBIGUOUS = ("ask_raise", "ask_truthy")
"""Kinds whose classifier does not answer an exact bool: exclusive by B9, judged there."""
ASK = {"ask_true": True, "ask_false": False, "ask_raise": "raise", "ask_truthy": 1}
CLASSIFIER_ERROR = "classifier failed"
"""The message of the RuntimeError an ``ask_raise`` classifier raises (B9 owns its escape)."""

BEHAVIOURS = ("return", "raise", "env", "ignore_cancel", "nonstr", "base", "cancel_self")
"""What a scripted handler does once its gate opens: return text (E5), raise an ordinary
exception (E4), raise ToolEnvironmentError (E3), survive one cancellation and then return,
return a non-str (E9), raise its own BaseException (B15) or its own CancelledError (B15)."""
STOPPING = ("env", "nonstr", "base", "cancel_self")


class Stop(BaseException):
    """A handler's own BaseException that is not an Exception (B15)."""


class JournalFault(Exception):
    """What the kit's journal raises when a schedule says it fails (B16)."""


class Unsettled(Exception):
    """The executor never became quiet (it keeps scheduling work of its own)."""


@dataclass(frozen=True)
class Call:
    """One call of a generated batch: its classification kind and its handler's behaviour."""

    kind: str
    do: str = "return"
    twin: bool = False
    """The same tool and the same arguments as the call before it (B11: identical calls in one
    batch still get a copy each). Its handler records the earlier call's id."""

    @property
    def rejected(self) -> bool:
        return self.kind in REJECTED

    @property
    def safe(self) -> bool:
        return self.kind in SAFE

    def action(self, ident: int, nested: bool = False) -> Action:
        if self.twin and ident > 0:
            return Call(self.kind, self.do).action(ident - 1, nested)
        if self.kind == "code":
            return Action(code=f"print({ident})")
        if self.kind == "unknown":
            return Action(tool_call=ToolCall(name="nope", arguments={"id": ident}))
        arguments: dict[str, Any] = {"id": ident, "do": self.do}
        if self.kind == "bad":
            arguments = {"id": ident, "do": 5, "safe": True}  # "do" must be a string (E2)
            return Action(tool_call=ToolCall(name="ask", arguments=arguments))
        if nested:  # the same nested values in every call: nothing to tell them apart by
            arguments["nested"] = {"seen": [0], "by": {"call": 0}}
        if self.kind in ASK:
            arguments["safe"] = ASK[self.kind]
            return Action(tool_call=ToolCall(name="ask", arguments=arguments))
        return Action(tool_call=ToolCall(name=self.kind, arguments=arguments))

    def text(self) -> str:
        text = f"{self.kind}/{self.do}" if not self.rejected else self.kind
        return text + " (the call before it again)" if self.twin else text


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Gate:
    """A one-shot gate a handler waits at; opened from the kit's loop, waited on any loop."""

    def __init__(self) -> None:
        self._open = False
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def is_set(self) -> bool:
        return self._open

    def set(self) -> None:
        with self._lock:
            self._open = True
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # a foreign loop that has closed
                loop.call_soon_threadsafe(_resolve, future)

    def clear(self) -> None:
        with self._lock:
            self._open = False

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._open:
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        await future


class Journal:
    """A BatchJournal writing ``starting``, ``started``, ``committed`` (and ``fault``) into the
    harness trace. ``slow`` makes each ``started`` wait for the call's record gate; ``fault``
    names the record, ``("started", i)`` or ``("committed", i)``, that raises `JournalFault`."""

    def __init__(
        self,
        harness: Harness,
        base: int = 0,
        slow: bool = False,
        fault: tuple[str, int] | None = None,
    ) -> None:
        self.harness = harness
        self.base = base
        self.slow = slow
        self.fault = fault
        self.error = JournalFault(f"the journal failed at {fault}") if fault else None
        self.commits: list[tuple[int, ActionOutcome]] = []
        self.calls_before_return = 0

    async def started(self, index: int, action: Action) -> None:
        ident = self.base + index if isinstance(index, int) else -1
        self.harness.event("starting", ident)
        if self.slow:
            await self.harness.record_gate(ident).wait()
        if self.fault == ("started", index) and self.error is not None:
            self.harness.event("fault", ident)
            raise self.error
        self.harness.event("started", ident)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        ident = self.base + index if isinstance(index, int) else -1
        if self.fault == ("committed", index) and self.error is not None:
            self.harness.event("fault", ident)
            raise self.error
        self.commits.append((index, outcome))
        self.harness.event("committed", ident)


class Harness:
    """A registry of gated tools, the shared trace, and what each handler saw.

    Tools: ``safe`` (concurrency_safe=True), ``excl`` (the default False), ``ask`` (a callable
    classifier answering the call's ``safe`` argument, raising when it is ``"raise"``) and
    ``finish`` (concurrency_safe=True but completes_run=True, so exclusive).
    """

    def __init__(self, mutate: bool = False) -> None:
        self.trace: list[tuple[str, int]] = []
        self.gates: dict[int, Gate] = {}
        self.record_gates: dict[int, Gate] = {}
        self.received: list[tuple[int, Any]] = []
        self.seen: dict[int, Any] = {}
        """A plain copy of what each handler received, taken as it was entered (B11)."""
        self.mutate = mutate
        self.cancels_seen: dict[int, int] = {}
        self.raised: dict[int, BaseException] = {}
        """The very exception object each stopping handler raised (B15 wants it re-raised)."""
        self.foreign = False
        """Some handler ran on another thread or event loop than the kit's."""
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self._lock = threading.Lock()
        self._changed = asyncio.Event()
        self.parked: dict[int | None, int] = {}
        """Per thread, how many handlers on it wait at their gates."""
        self.loops: set[asyncio.AbstractEventLoop] = set()
        """The event loops other than the kit's that handlers ran on."""
        self.pool = _tracked_pool(self.loop)
        """The loop's default executor, which knows which of its threads run work now."""
        self.baseline = {thread.ident for thread in threading.enumerate()}
        """The threads alive when the harness was made (the kit's own)."""
        spec: dict[str, Any] = {"description": "gated", "parameters": SCHEMA}
        self.registry = ToolRegistry(
            [
                ToolSpec(name="safe", concurrency_safe=True, handler=self.handler, **spec),
                ToolSpec(name="excl", handler=self.handler, **spec),
                ToolSpec(name="ask", concurrency_safe=self.classify, handler=self.handler, **spec),
                ToolSpec(
                    name="finish",
                    concurrency_safe=True,
                    completes_run=True,
                    handler=self.handler,
                    **spec,
                ),
            ]
        )

    # -- recording ---------------------------------------------------------------------------

    def event(self, kind: str, ident: int) -> None:
        with self._lock:
            self.trace.append((kind, ident))
        if threading.get_ident() == self.thread:
            self._changed.set()
        else:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self._changed.set)

    def gate(self, ident: int) -> Gate:
        with self._lock:
            return self.gates.setdefault(ident, Gate())

    def record_gate(self, ident: int) -> Gate:
        with self._lock:
            return self.record_gates.setdefault(ident, Gate())

    def open(self, *idents: int) -> None:
        for ident in idents:
            if not self.gate(ident).is_set():
                self.event("open", ident)
            self.record_gate(ident).set()
            self.gate(ident).set()

    def open_all(self, count: int) -> None:
        self.open(*sorted({*range(count), *self.gates, *self.record_gates}))

    def classify(self, arguments: Mapping[str, Any]) -> bool:
        self.event("classify", arguments["id"])
        answer = arguments.get("safe")
        if answer == "raise":
            raise RuntimeError(CLASSIFIER_ERROR)
        return answer  # type: ignore[return-value]  # non-bool answers are the point

    def _on_foreign(self) -> bool:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - a handler always runs on some loop
            return True
        return loop is not self.loop or threading.get_ident() != self.thread

    async def handler(self, arguments: dict[str, Any]) -> str:
        ident = arguments["id"]
        foreign = self._on_foreign()
        if foreign:
            self.foreign = True
            with self._lock:
                self.loops.add(asyncio.get_running_loop())
        self.received.append((ident, arguments))
        self.seen[ident] = _plain(arguments)
        self.event("enter", ident)
        try:
            if self.mutate:  # never "id" or "do": an identical call sharing the dict reads them
                nested = arguments.get("nested")
                if isinstance(nested, dict):
                    nested["by"]["call"] = -1
                    nested["seen"].append(-1)
                arguments["touched"] = True
            do = arguments.get("do", "return")
            gate = self.gate(ident)
            try:
                await self._park(gate)
            except asyncio.CancelledError:
                self.cancels_seen[ident] = self.cancels_seen.get(ident, 0) + 1
                if do != "ignore_cancel":
                    raise
                gate.clear()
                await self._park(gate)  # ignores the cancellation: opened again later
                self.event("survived", ident)
                return f"survived {ident}"
            if do in STOPPING:
                self.event("stop", ident)
            return self.behave(ident, do)
        finally:
            self.event("exit", ident)

    async def _park(self, gate: Gate) -> None:
        thread = threading.get_ident()
        with self._lock:
            self.parked[thread] = self.parked.get(thread, 0) + 1
        try:
            await gate.wait()
        finally:
            with self._lock:
                self.parked[thread] -= 1

    def behave(self, ident: int, do: str) -> str:
        if do == "raise":
            raise ValueError(f"bad {ident}")
        if do == "env":
            raise ToolEnvironmentError(f"down {ident}")
        if do == "nonstr":
            return ident  # type: ignore[return-value]  # E9
        if do in ("base", "cancel_self"):
            error: BaseException = (
                Stop(f"stop {ident}") if do == "base" else asyncio.CancelledError(f"own {ident}")
            )
            self.raised[ident] = error
            raise error
        return f"ok {ident}"

    # -- views -------------------------------------------------------------------------------

    def events(self, kind: str) -> list[int]:
        return [ident for event, ident in self.trace if event == kind]

    def running(self) -> set[int]:
        alive: set[int] = set()
        for event, ident in list(self.trace):
            if event == "enter":
                alive.add(ident)
            elif event == "exit":
                alive.discard(ident)
        return alive

    def records_pending(self) -> bool:
        """Some ``started`` is being awaited (asked, neither recorded nor failed)."""
        pending: set[int] = set()
        for event, ident in list(self.trace):
            if event == "starting":
                pending.add(ident)
            elif event in ("started", "fault"):
                pending.discard(ident)
        return bool(pending)

    # -- settling ----------------------------------------------------------------------------

    async def settle(self, limit: int = 3000) -> None:
        """Yield to the event loop until nothing is left to run, then mark ``settled``.

        asyncio has no "wait until every task is blocked", so this yields until the loop's
        ready queue stays empty for a few turns in a row. Timers the executor set that are
        about to fire are waited for (a timer is the executor's own work); a trace that stays
        the same over a few of them in a row counts as quiet. A thread started since the
        harness was made is quiet only while every handler it runs waits at its gate (one that
        runs handlers on threads is waited for until each has parked or ended). `Unsettled`
        after `limit` turns: the example is then inconclusive, never failed."""
        loop = self.loop
        quiet = 0
        idle_timers = 0
        seen = len(self.trace)
        for _ in range(limit):
            await asyncio.sleep(0)
            if self._threads_busy():
                await asyncio.sleep(0.0005)  # a thread's own work: waited for, never judged
                quiet = 0
                continue
            ready = len(getattr(loop, "_ready", ()))
            if ready:
                quiet = 0
                continue
            soon = self._next_timer()
            if soon is not None and len(self.trace) != seen:
                idle_timers, seen = 0, len(self.trace)  # its timers did something since
            if soon is not None and idle_timers < 3:
                await asyncio.sleep(soon)
                idle_timers += 1
                quiet = 0
                continue
            quiet += 1
            if quiet >= 3:
                self.event("settled", -1)
                return
        raise Unsettled(f"the executor did not become quiet within {limit} event-loop turns")

    def _threads_busy(self) -> bool:
        """A thread started since the harness was made is running something other than a
        handler parked at its gate."""
        with self._lock:
            parked = {ident for ident, count in self.parked.items() if count > 0}
            loops = list(self.loops)
        if any(len(getattr(loop, "_ready", ())) for loop in loops if not loop.is_closed()):
            return True  # a foreign loop has work queued (a cancellation on its way, say)
        if self.pool.busy(parked):
            return True  # work handed to the loop's default executor (run_in_executor(None))
        pooled = self.pool.threads()
        return any(
            thread.ident not in self.baseline
            and thread.ident not in parked
            and thread.ident not in pooled  # an idle pool thread waits for work: quiet
            for thread in threading.enumerate()
            if thread.is_alive()
        )

    def _next_timer(self) -> float | None:
        scheduled = getattr(self.loop, "_scheduled", ())
        now = self.loop.time()
        delays = [
            handle.when() - now
            for handle in scheduled
            if not handle.cancelled() and handle.when() - now < 1.0
        ]
        return max(0.0, min(delays)) if delays else None


class _TrackedPool(concurrent.futures.ThreadPoolExecutor):
    """The default executor the harness gives the kit's event loop: a plain thread pool that
    knows which of its threads run a work item now and which items wait for a thread. Its
    threads outlive an example, idle; `settle` waits for the work they run (whenever they were
    started), never for an idle thread or an item cancelled before it started."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="polyloop-kit-default")
        self._count_lock = threading.Lock()
        self._waiting: set[concurrent.futures.Future[Any]] = set()
        self._running: dict[int, int] = {}

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        def run() -> Any:
            ident = threading.get_ident()
            with self._count_lock:
                self._running[ident] = self._running.get(ident, 0) + 1
            try:
                return fn(*args, **kwargs)
            finally:
                with self._count_lock:
                    self._running[ident] -= 1
                    if not self._running[ident]:
                        del self._running[ident]

        future = super().submit(run)
        with self._count_lock:
            self._waiting.add(future)
        future.add_done_callback(self._forget)  # at once (outside the lock) if already done
        return future

    def _forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self._count_lock:
            self._waiting.discard(future)

    def busy(self, parked: set[int | None]) -> bool:
        """An item waits for a thread, or a thread runs one (other than a handler parked at
        its gate)."""
        with self._count_lock:
            if any(ident not in parked for ident in self._running):
                return True
            return any(not (f.running() or f.done()) for f in self._waiting)

    def threads(self) -> set[int | None]:
        return {thread.ident for thread in list(self._threads)}


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _TrackedPool] = (
    weakref.WeakKeyDictionary()
)


def _tracked_pool(loop: asyncio.AbstractEventLoop) -> _TrackedPool:
    """`loop`'s default executor, made a `_TrackedPool` the first time a harness runs on it (a
    default executor it already had is shut down without waiting: its work goes on)."""
    pool = _POOLS.get(loop)
    if pool is not None and getattr(loop, "_default_executor", pool) is pool:
        return pool
    previous = getattr(loop, "_default_executor", None)
    pool = _TrackedPool()
    loop.set_default_executor(pool)
    if isinstance(previous, concurrent.futures.Executor):
        previous.shutdown(wait=False)
    _POOLS[loop] = pool
    return pool
