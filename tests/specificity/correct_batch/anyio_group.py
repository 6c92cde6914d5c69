"""A batch executor whose calls run as children of one `anyio` task group.

Written from contract section 10 and polyloop's public API only. A child boxes whatever its
call did (an anyio 4 task group would wrap an escaping exception in an exception group), and
a stop that must end the running handlers cancels the group's scope; what was entered, what
finished and what the scope ended is read back once the group has exited, then committed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from polyloop import Action, ActionOutcome, ActionStatus, ToolRegistry, ToolValidationError

INTERRUPTED = "interrupted while running; its effects are unknown"


def _synthetic(status: ActionStatus, text: str) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=True,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


class AnyioGroupBatchExecutor:
    def __init__(self, registry: ToolRegistry, *, max_concurrency: int = 10) -> None:
        self.registry = registry
        self.cap = max_concurrency
        self.single = registry.executor()

    def parameters(self) -> Mapping[str, str]:
        return {"tools": ",".join(self.registry.names()), "max_concurrency": str(self.cap)}

    def accepted(self, action: Action) -> bool:
        call = action.tool_call
        if call is None or self.registry.spec_for(call.name) is None:
            return False
        try:
            self.registry.validate(call)
        except ToolValidationError:
            return False
        return True

    def safe(self, action: Action) -> bool:
        call = action.tool_call
        assert call is not None
        spec = self.registry.spec_for(call.name)
        assert spec is not None
        if spec.completes_run:
            return False
        flag = spec.concurrency_safe
        if isinstance(flag, bool):
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
        return await _Group(self, actions, journal).run()


class _Group:
    def __init__(self, owner: AnyioGroupBatchExecutor, actions: list[Action], journal: Any):
        self.owner, self.actions, self.journal = owner, actions, journal
        self.n = len(actions)
        self.out: list[ActionOutcome | None] = [None] * self.n
        self.waiting: list[int] = []
        self.kind: dict[int, bool] = {}
        self.running: set[int] = set()
        self.entered: set[int] = set()
        self.recording = False
        self.stop: str | None = None
        self.scope_cancelled = False
        self.fault: BaseException | None = None
        self.own: dict[int, BaseException] = {}
        self.committed = 0
        self.event = anyio.Event()

    def wake(self) -> None:
        self.event.set()

    async def run(self) -> tuple[ActionOutcome, ...]:
        for i, action in enumerate(self.actions):
            if self.owner.accepted(action):
                self.waiting.append(i)
            else:
                self.out[i] = await self.owner.single.execute(action)
        try:
            async with anyio.create_task_group() as group:
                await self.host(group)
        except asyncio.CancelledError:
            self.note_cancel()
        while self.fault is None:
            try:
                await self.commit_from_outside()
                break
            except asyncio.CancelledError:
                self.note_cancel()
        if self.fault is not None:
            raise self.fault
        if self.own:
            raise self.own[min(self.own)]
        if self.stop == "cancel":
            raise asyncio.CancelledError()
        return tuple(o for o in self.out if o is not None)

    def note_cancel(self) -> None:
        if self.stop in (None, "env"):
            self.stop = "cancel"

    def halt(self, group: anyio.abc.TaskGroup) -> None:
        self.scope_cancelled = True
        group.cancel_scope.cancel()

    async def host(self, group: anyio.abc.TaskGroup) -> None:
        while True:
            if self.stop is None and self.fault is None:
                self.start_more(group)
            if self.fault is None:
                try:
                    await self.commit_ready()
                except BaseException as error:
                    if isinstance(error, asyncio.CancelledError) and self.fault is None:
                        self.note_cancel()
                        self.halt(group)
                        return
                    self.fault = self.fault or error
            if self.fault is not None or self.stop in ("cancel", "raised"):
                self.halt(group)
                return
            if not self.running and (not self.waiting or self.stop is not None):
                return
            self.event = anyio.Event()
            try:
                await self.event.wait()
            except asyncio.CancelledError:
                self.note_cancel()
                self.halt(group)
                return

    def start_more(self, group: anyio.abc.TaskGroup) -> None:
        while self.waiting and not self.recording:
            i = self.waiting[0]
            if i not in self.kind:
                self.kind[i] = self.owner.safe(self.actions[i])
            if any(not self.kind[j] for j in self.running) or len(self.running) >= self.owner.cap:
                return
            if not self.kind[i] and self.running:
                return
            self.waiting.pop(0)
            self.running.add(i)
            self.recording = self.journal is not None
            group.start_soon(self.child, i)
            if not self.kind[i]:
                return

    async def child(self, i: int) -> None:
        try:
            await self._child(i)
        finally:
            self.running.discard(i)
            self.wake()

    async def _child(self, i: int) -> None:
        if self.journal is not None:
            try:
                await self.journal.started(i, self.actions[i])
            except BaseException as error:
                self.recording = False
                if not (isinstance(error, asyncio.CancelledError) and self.scope_cancelled):
                    self.fault = self.fault or error
                return
            self.recording = False
            self.wake()
            if self.stop is not None or self.fault is not None:
                return
        self.entered.add(i)
        try:
            result = await self.owner.single.execute(self.actions[i])
        except asyncio.CancelledError as error:
            self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            if not self.scope_cancelled and self.stop != "cancel":
                self.own[i] = error
                self.stop = "raised"
            return
        except Exception as error:  # E9's TypeError: no outcome is invented
            self.fault = self.fault or error
            self.stop = self.stop or "fault"
            return
        except BaseException as error:
            self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            self.own[i] = error
            if self.stop in (None, "env"):
                self.stop = "raised"
            return
        self.out[i] = result
        if result.status is ActionStatus.ENV_ERROR and self.stop is None:
            self.stop = "env"

    async def commit_ready(self) -> None:
        while (
            not self.recording and self.committed < self.n and self.out[self.committed] is not None
        ):
            outcome = self.out[self.committed]
            if self.journal is not None:
                await self.journal.committed(self.committed, outcome)
            self.committed += 1

    async def commit_from_outside(self) -> None:
        """After the group: every call gets its outcome, and the rest is committed."""
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
        self.recording = False
        while self.committed < self.n:
            outcome = self.out[self.committed]
            if self.journal is not None:
                writing = asyncio.ensure_future(self.journal.committed(self.committed, outcome))
                try:
                    await asyncio.shield(writing)
                except asyncio.CancelledError:
                    self.note_cancel()
                    await asyncio.wait({writing})
                    writing.result()
                    self.committed += 1
                    raise
                writing.result()
            self.committed += 1


def make_executor(registry: ToolRegistry, *, max_concurrency: int = 10) -> AnyioGroupBatchExecutor:
    return AnyioGroupBatchExecutor(registry, max_concurrency=max_concurrency)
