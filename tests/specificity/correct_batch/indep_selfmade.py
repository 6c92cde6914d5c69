"""A batch executor that dispatches tool calls itself, driven by callbacks (a state machine).

Written from the contract alone (CONTRACT.md sections 1-6 and 10 and polyloop's public API),
without reading polyloop's scheduler, its executor or the conformance kit.

Section 6 is implemented here, not delegated to `registry.executor()`: the call is checked with
`registry.validate` (only `ToolValidationError` counts as a rejection), the spec's handler is
called with this module's own plain deep copy of the arguments, and its ending is mapped by
E3-E5, E9 and E12; an action without a tool call gets this module's own sentence (E1).

Structure: no loop polls anything. The batch is a state machine (`_Machine`) whose every
transition is a plain synchronous method: a child task's done-callback reports a call's ending,
a call reports "entered" from inside its task right before it enters the handler, a commit
task's done-callback reports the commit. Each transition ends in `pump()`, which admits the
calls the rules allow, starts the next due commit (at most one journal call is ever
outstanding) and resolves the machine's `finished` future when nothing is left to do. The task
awaiting `execute_batch` only waits on that future through `asyncio.shield`, so a cancellation
from outside never reaches the machine's own future: it becomes one more transition (cut every
call that has begun), and the wait resumes, however often it is cancelled, until every call has
ended and been committed. Then a fresh `CancelledError()` is raised; a handler's own
`BaseException` is re-raised as that same object.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    ToolValidationError,
)

NO_TOOL_CALL = "selfmade: there is no tool call in this action, so no handler was asked to run it"
SKIPPED_ENV = "selfmade: skipped without running, as call {k} reported a broken environment"
SKIPPED_CANCEL = "selfmade: skipped without running, as the batch was cancelled"
SKIPPED_RAISE = "selfmade: skipped without running, as call {k} raised {cls}"
HALTED = "selfmade: halted while in progress; nobody can tell whether its effects happened"
STR_FAILED = "<exception str() failed>"

_WAITING, _STARTING, _RUNNING, _SETTLED, _SKIPPED = range(5)


def _outcome(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _plain(value: Any) -> Any:
    """A fresh plain copy: mappings become dicts, lists and tuples become lists (E13)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _describe(exc: BaseException) -> str:
    """`"<ClassName>: <str(exc)>"` (E4), with E12's stand-in when `str()` itself fails."""
    try:
        text = str(exc)
    except Exception:
        text = STR_FAILED
    return f"{type(exc).__name__}: {text}"


def _environment_text(exc: BaseException) -> str:
    """`str(exc)` (E3), or E12's whole sentence when `str()` itself fails."""
    try:
        return str(exc)
    except Exception:
        return f"{type(exc).__name__}: {STR_FAILED}"


class _Machine:
    """One `execute_batch` call: every piece of state, and the transitions between them."""

    def __init__(
        self,
        owner: SelfmadeExecutor,
        actions: tuple[Action, ...],
        journal: BatchJournal | None,
    ) -> None:
        self.owner = owner
        self.actions = actions
        self.journal = journal
        count = len(actions)
        self.specs: list[ToolSpec | None] = []
        self.outcomes: list[ActionOutcome | None] = []
        for action in actions:
            spec, rejection = owner.admit(action)
            self.specs.append(spec)
            self.outcomes.append(rejection)
        self.phase = [_WAITING] * count
        self.safe: list[bool | None] = [None] * count
        self.began = [False] * count
        self.cancel_sent = [False] * count
        self.raised: list[BaseException | None] = [None] * count
        self.tasks: dict[int, asyncio.Task[tuple[str, Any]]] = {}
        self.cursor = 0
        self.committed = 0
        self.active = 0
        self.barrier: int | None = None
        self.commit_busy = False
        self.fault: BaseException | None = None
        self.cancelled = False
        self.env_error = False
        self.first_raiser: int | None = None
        self.skip_text: str | None = None
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # -- what the machine knows -----------------------------------------------------------

    def stopping(self) -> bool:
        return (
            self.fault is not None
            or self.cancelled
            or self.env_error
            or self.first_raiser is not None
        )

    def starting(self) -> bool:
        return self.journal is not None and _STARTING in self.phase

    def classify(self, index: int) -> bool:
        spec = self.specs[index]
        assert spec is not None
        if spec.completes_run:
            return False
        rule = spec.concurrency_safe
        if rule is True:
            return True
        if not callable(rule):
            return False
        call = self.actions[index].tool_call
        assert call is not None
        try:
            return rule(call.arguments) is True
        except Exception:
            return False

    def skip_sentence(self) -> str:
        if self.skip_text is None:
            if self.first_raiser is not None:
                cls = type(self.raised[self.first_raiser]).__name__
                self.skip_text = SKIPPED_RAISE.format(k=self.first_raiser, cls=cls)
            elif self.cancelled:
                self.skip_text = SKIPPED_CANCEL
            else:
                k = next(
                    index
                    for index, outcome in enumerate(self.outcomes)
                    if self.phase[index] == _SETTLED
                    and outcome is not None
                    and outcome.status is ActionStatus.ENV_ERROR
                )
                self.skip_text = SKIPPED_ENV.format(k=k)
        return self.skip_text

    def final(self, index: int) -> ActionOutcome | None:
        phase = self.phase[index]
        if self.specs[index] is None or phase == _SETTLED:
            return self.outcomes[index]
        if phase == _SKIPPED or (phase == _WAITING and self.stopping()):
            return _outcome(ActionStatus.NOT_EXECUTED, self.skip_sentence(), True)
        return None

    # -- transitions ----------------------------------------------------------------------

    def pump(self) -> None:
        if self.finished.done():
            return
        self.admit_calls()
        self.start_commit()
        if self.active == 0 and not self.commit_busy:
            count = len(self.actions)
            if self.fault is not None or (
                (self.cursor == count or self.stopping())
                and (self.journal is None or self.committed == count)
            ):
                self.finished.set_result(None)

    def admit_calls(self) -> None:
        count = len(self.actions)
        while self.cursor < count and not self.stopping():
            index = self.cursor
            if self.specs[index] is None:
                self.cursor += 1  # rejected: resolved in place, no slot, no barrier (B10)
                continue
            if self.barrier is not None and self.phase[self.barrier] in (_STARTING, _RUNNING):
                return
            if self.commit_busy or self.starting():
                return
            safe = self.safe[index]
            if safe is None:
                safe = self.safe[index] = self.classify(index)
            if self.active >= (self.owner.max_concurrency if safe else 1):
                return
            self.phase[index] = _STARTING
            self.active += 1
            task = asyncio.get_running_loop().create_task(self.call(index))
            self.tasks[index] = task
            task.add_done_callback(functools.partial(self.call_ended, index))
            self.cursor += 1
            if not safe:
                self.barrier = index

    def start_commit(self) -> None:
        journal = self.journal
        if journal is None or self.fault is not None or self.commit_busy or self.starting():
            return
        if self.committed >= len(self.actions):
            return
        outcome = self.final(self.committed)
        if outcome is None:
            return
        self.commit_busy = True
        task = asyncio.get_running_loop().create_task(
            self.guarded(journal.committed(self.committed, outcome))
        )
        task.add_done_callback(self.commit_ended)

    def entered(self, index: int) -> None:
        """Called from call `index`'s task right before it enters the handler: the pump runs
        later, so no classifier, journal call or other handler comes in between (B17)."""
        self.phase[index] = _RUNNING
        asyncio.get_running_loop().call_soon(self.pump)

    def cut(self) -> None:
        for index, task in self.tasks.items():
            if self.phase[index] in (_STARTING, _RUNNING) and not self.cancel_sent[index]:
                self.cancel_sent[index] = True
                if self.began[index]:  # one not yet begun sees the stop at its first step
                    task.cancel()

    def cancelled_from_outside(self) -> None:
        self.cancelled = True
        self.cut()
        self.pump()

    def call_ended(self, index: int, task: asyncio.Task[tuple[str, Any]]) -> None:
        self.active -= 1
        kind: str = "skip"
        value: Any = None
        if not task.cancelled():  # a child never begun has nothing to report
            kind, value = task.result()
        if kind == "skip":
            self.phase[index] = _SKIPPED
        elif kind == "start_failed":
            self.phase[index] = _SKIPPED
            if not (self.cancel_sent[index] and isinstance(value, asyncio.CancelledError)):
                self.fail(value)
        else:
            self.phase[index] = _SETTLED
            self.settle(index, kind, value)
        self.pump()

    def settle(self, index: int, kind: str, value: Any) -> None:
        spec = self.specs[index]
        assert spec is not None
        if kind == "returned":
            if isinstance(value, str):
                text = value if type(value) is str else str.__str__(value)
                self.outcomes[index] = _outcome(ActionStatus.EXECUTED, text, False)
            else:
                self.fail(
                    TypeError(
                        f"the handler of tool {spec.name!r} returned "
                        f"{type(value).__name__}, not str"
                    )
                )
        elif isinstance(value, ToolEnvironmentError):
            self.outcomes[index] = _outcome(ActionStatus.ENV_ERROR, _environment_text(value), False)
            self.env_error = True
        elif isinstance(value, Exception):
            self.outcomes[index] = _outcome(ActionStatus.EXECUTED, _describe(value), False)
        elif isinstance(value, asyncio.CancelledError) and self.cancel_sent[index]:
            self.outcomes[index] = _outcome(ActionStatus.ENV_ERROR, HALTED, True)
        else:  # the handler's own BaseException (B15)
            self.raised[index] = value
            self.outcomes[index] = _outcome(ActionStatus.ENV_ERROR, HALTED, True)
            if self.first_raiser is None or index < self.first_raiser:
                self.first_raiser = index
            self.cut()

    def fail(self, exc: BaseException) -> None:
        if self.fault is None:
            self.fault = exc
        self.cut()

    def commit_ended(self, task: asyncio.Task[BaseException | None]) -> None:
        self.commit_busy = False
        error = task.result()
        if error is None:
            self.committed += 1
        else:
            self.fail(error)
        self.pump()

    # -- the coroutines the machine starts ------------------------------------------------

    async def call(self, index: int) -> tuple[str, Any]:
        self.began[index] = True
        if self.stopping():
            return ("skip", None)
        action = self.actions[index]
        if self.journal is not None:
            try:
                await self.journal.started(index, action)
            except BaseException as exc:
                return ("start_failed", exc)
            if self.stopping():
                return ("skip", None)  # stopped while started() was awaited (B17)
        spec = self.specs[index]
        call = action.tool_call
        assert spec is not None and spec.handler is not None and call is not None
        arguments = _plain(call.arguments)
        self.entered(index)
        try:
            result = await spec.handler(arguments)
        except BaseException as exc:
            return ("raised", exc)
        return ("returned", result)

    @staticmethod
    async def guarded(awaitable: Any) -> BaseException | None:
        try:
            await awaitable
        except BaseException as exc:
            return exc
        return None

    async def run(self) -> tuple[ActionOutcome, ...]:
        self.pump()
        while not self.finished.done():
            try:
                await asyncio.shield(self.finished)
            except asyncio.CancelledError:
                self.cancelled_from_outside()
        if self.fault is not None:
            raise self.fault
        if self.first_raiser is not None:
            own = self.raised[self.first_raiser]
            assert own is not None
            raise own
        results = []
        for index in range(len(self.actions)):
            outcome = self.final(index)
            assert outcome is not None
            results.append(outcome)
        if self.cancelled:
            raise asyncio.CancelledError()
        return tuple(results)


class SelfmadeExecutor:
    """Runs one model turn's tool calls under contract sections 6 and 10 (see the module
    docstring); it never uses polyloop's `RegistryExecutor`."""

    def __init__(self, registry: ToolRegistry, max_concurrency: int) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, got {type(max_concurrency).__name__}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        missing = [
            name
            for name in registry.names()
            if (spec := registry.spec_for(name)) is None or spec.handler is None
        ]
        if missing:
            raise ValueError(f"these tools have no handler: {', '.join(missing)}")
        self.registry = registry
        self.max_concurrency = max_concurrency
        self._parameters = {
            "tools": ",".join(registry.names()),
            "max_concurrency": str(max_concurrency),
        }

    def parameters(self) -> Mapping[str, str]:
        return dict(self._parameters)

    def admit(self, action: Action) -> tuple[ToolSpec | None, ActionOutcome | None]:
        """The spec of an accepted call, or the E1/E2 outcome of a rejected one."""
        call = action.tool_call
        if call is None:
            return None, _outcome(ActionStatus.NOT_EXECUTED, NO_TOOL_CALL, True)
        try:
            self.registry.validate(call)
        except ToolValidationError as exc:
            return None, _outcome(ActionStatus.NOT_EXECUTED, str(exc), True)
        return self.registry.spec_for(call.name), None

    async def execute_batch(
        self, actions: Sequence[Action], journal: BatchJournal | None = None
    ) -> tuple[ActionOutcome, ...]:
        batch = tuple(actions)
        if not batch:
            return ()
        return await _Machine(self, batch, journal).run()


def make_executor(registry: ToolRegistry, *, max_concurrency: int) -> SelfmadeExecutor:
    """The factory `polyloop-conformance certify` calls."""
    return SelfmadeExecutor(registry, max_concurrency)
