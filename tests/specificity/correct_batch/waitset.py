"""A batch executor built around one `asyncio.wait(FIRST_COMPLETED)` loop.

Written from contract section 10 and polyloop's public API only: every call is decided by
``registry.executor().execute`` (B4), run in a task that first awaits ``journal.started``
(B17); the loop starts what the rules allow, commits the known prefix, and waits for the next
task to finish or for a ``started`` to return.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    ToolRegistry,
    ToolValidationError,
)

INTERRUPTED = "interrupted while running; its effects are unknown"


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class _Skipped:
    pass


class _Threw:
    def __init__(self, error: BaseException) -> None:
        self.error = error


SKIPPED = _Skipped()


class WaitSetBatchExecutor:
    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        self.registry = registry
        self.max_concurrency = max_concurrency
        self.single = registry.executor()

    def parameters(self) -> Mapping[str, str]:
        return {
            "tools": ",".join(self.registry.names()),
            "max_concurrency": str(self.max_concurrency),
        }

    def _accepted(self, action: Action) -> bool:
        call = action.tool_call
        if call is None or self.registry.spec_for(call.name) is None:
            return False
        try:
            self.registry.validate(call)
        except ToolValidationError:
            return False
        return True

    def _safe(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        flag = spec.concurrency_safe
        if flag is True or flag is False:
            return flag
        try:
            return flag(call.arguments) is True
        except Exception:
            return False

    async def execute_batch(
        self, actions: Sequence[Action], journal: Any = None
    ) -> tuple[ActionOutcome, ...]:
        actions = list(actions)
        if not actions:
            return ()
        return await _Turn(self, actions, journal).go()


class _Turn:
    def __init__(self, owner: WaitSetBatchExecutor, actions: list[Action], journal: Any) -> None:
        self.owner, self.actions, self.journal = owner, actions, journal
        self.n = len(actions)
        self.out: list[ActionOutcome | None] = [None] * self.n
        self.todo: list[int] = []
        self.safe: dict[int, bool] = {}
        self.running: dict[asyncio.Task[object], int] = {}
        self.sent: set[asyncio.Task[object]] = set()
        self.entered: set[int] = set()
        self.recording: int | None = None
        self.stop: str | None = None
        self.fault: BaseException | None = None
        self.own: dict[int, BaseException] = {}
        self.committed = 0
        self.nudge = asyncio.Event()

    async def go(self) -> tuple[ActionOutcome, ...]:
        for i, action in enumerate(self.actions):
            if self.owner._accepted(action):
                self.todo.append(i)
            else:
                self.out[i] = await self.owner.single.execute(action)
        try:
            await self.loop()
        except BaseException as error:  # the journal's own exception while committing
            if self.fault is None:
                self.fault = error
        if self.fault is not None:
            self.cancel_all()
            while self.running:
                await self.wait()
            raise self.fault
        self.fill_not_run()
        await self.commit()
        if self.own:
            raise self.own[min(self.own)]
        if self.stop == "cancel":
            raise asyncio.CancelledError()
        return tuple(o for o in self.out if o is not None)

    async def loop(self) -> None:
        while True:
            if self.stop is None and self.fault is None:
                self.start_more()
            if self.fault is not None:
                return
            await self.commit()
            if self.fault is not None:
                return
            if not self.running and (not self.todo or self.stop is not None):
                return
            await self.wait()

    def start_more(self) -> None:
        while self.todo and self.recording is None:
            i = self.todo[0]
            if i not in self.safe:
                self.safe[i] = self.owner._safe(self.actions[i])
            exclusive_running = any(not self.safe[j] for j in self.running.values())
            if (
                exclusive_running
                or len(self.running) >= self.owner.max_concurrency
                or (not self.safe[i] and self.running)
            ):
                return
            self.todo.pop(0)
            self.running[asyncio.ensure_future(self.one(i))] = i
            if self.journal is not None:
                self.recording = i
            if not self.safe[i]:
                return

    async def one(self, i: int) -> object:
        if self.journal is not None:
            try:
                await self.journal.started(i, self.actions[i])
            except asyncio.CancelledError:
                self.recording = None
                if asyncio.current_task() in self.sent:
                    return SKIPPED
                return _Threw(RuntimeError("journal.started was cancelled"))
            except BaseException as error:
                self.recording = None
                return _Threw(error) if not isinstance(error, Exception) else error
            self.recording = None
            self.nudge.set()
            if self.stop is not None or self.fault is not None:
                return SKIPPED
        self.entered.add(i)
        try:
            return await self.owner.single.execute(self.actions[i])
        except BaseException as error:
            return _Threw(error)

    async def wait(self) -> None:
        waiter = asyncio.ensure_future(self.nudge.wait())
        try:
            await asyncio.wait({*self.running, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if self.stop in (None, "env"):
                self.stop = "cancel"
            self.cancel_all()
        finally:
            waiter.cancel()
            self.nudge.clear()
        for task in [t for t in self.running if t.done()]:
            self.settle(task)

    def settle(self, task: asyncio.Task[object]) -> None:
        i = self.running.pop(task)
        result: object = SKIPPED if task.cancelled() else task.result()
        if isinstance(result, ActionOutcome):
            self.out[i] = result
            if result.status is ActionStatus.ENV_ERROR and self.stop is None:
                self.stop = "env"
        elif isinstance(result, Exception):  # a journal fault in started()
            self.set_fault(result)
        elif isinstance(result, _Threw):
            error = result.error
            if isinstance(error, Exception) and i in self.entered:
                self.set_fault(error)  # E9's TypeError
            elif isinstance(error, Exception) or i not in self.entered:
                self.set_fault(error)
            elif isinstance(error, asyncio.CancelledError) and task in self.sent:
                self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            else:
                self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
                self.own[i] = error
                if self.stop in (None, "env"):
                    self.stop = "raised"
                self.cancel_all()

    def set_fault(self, error: BaseException) -> None:
        if self.fault is None:
            self.fault = error
        self.cancel_all()

    def cancel_all(self) -> None:
        for task in self.running:
            if task not in self.sent:
                self.sent.add(task)
                task.cancel()

    async def commit(self) -> None:
        while (
            self.recording is None
            and self.committed < self.n
            and self.out[self.committed] is not None
        ):
            i = self.committed
            if self.journal is not None:
                writing = asyncio.ensure_future(self.journal.committed(i, self.out[i]))
                while not writing.done():
                    try:
                        await asyncio.wait({writing})
                    except asyncio.CancelledError:
                        if self.stop in (None, "env"):
                            self.stop = "cancel"
                        self.cancel_all()
                writing.result()
            self.committed = i + 1

    def fill_not_run(self) -> None:
        if self.own:
            first = min(self.own)
            text = f"not run: call {first} raised {type(self.own[first]).__name__}"
        elif self.stop == "cancel":
            text = "not run: the batch was cancelled"
        else:
            env = [
                i
                for i, o in enumerate(self.out)
                if o is not None and o.status is ActionStatus.ENV_ERROR
            ]
            text = f"not run: call {env[0] if env else 0} reported an environment error"
        for i in range(self.n):
            if self.out[i] is None:
                self.out[i] = _synthetic(ActionStatus.NOT_EXECUTED, text)


def make_executor(registry: ToolRegistry, *, max_concurrency: int = 10) -> WaitSetBatchExecutor:
    return WaitSetBatchExecutor(registry, max_concurrency=max_concurrency)
