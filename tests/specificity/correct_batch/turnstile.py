"""A batch executor that starts one task per call up front, each waiting at a turnstile.

Written from contract section 10 and polyloop's public API only. Every accepted call's task
exists from the start and waits on one `asyncio.Condition` until it is the next call in model
order and the cap and exclusivity let it in; the batch's own coroutine only commits, watches
for stops and cancels. Calls that never pass the turnstile are committed as not run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

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


class TurnstileBatchExecutor:
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
        return await _Turnstile(self, actions, journal).run()


class _Turnstile:
    def __init__(self, owner: TurnstileBatchExecutor, actions: list[Action], journal: Any):
        self.owner, self.actions, self.journal = owner, actions, journal
        self.n = len(actions)
        self.out: list[ActionOutcome | None] = [None] * self.n
        self.order: list[int] = []
        self.position = 0  # index into `order` of the next call to pass the turnstile
        self.kind: dict[int, bool] = {}
        self.inside: set[int] = set()
        self.entered: set[int] = set()
        self.recording = False
        self.stop: str | None = None
        self.fault: BaseException | None = None
        self.own: dict[int, BaseException] = {}
        self.hard = False  # the stop cancels the calls inside
        self.turn = asyncio.Condition()
        self.changed = asyncio.Event()
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def may_pass(self, i: int) -> bool:
        if self.stop is not None or self.fault is not None:
            return True  # to leave the queue
        if self.position >= len(self.order) or self.order[self.position] != i or self.recording:
            return False
        if i not in self.kind:
            self.kind[i] = self.owner.safe(self.actions[i])
        if len(self.inside) >= self.owner.cap or any(not self.kind[j] for j in self.inside):
            return False
        return self.kind[i] or not self.inside

    async def ticket(self, i: int) -> None:
        async with self.turn:
            await self.turn.wait_for(lambda: self.may_pass(i))
            if self.stop is not None or self.fault is not None:
                self.changed.set()  # leaves the queue, never entered
                return
            self.position += 1
            self.inside.add(i)
            self.recording = self.journal is not None
            self.turn.notify_all()
        try:
            await self.call(i)
        finally:
            async with self.turn:
                self.inside.discard(i)
                self.turn.notify_all()
            self.changed.set()

    async def call(self, i: int) -> None:
        if self.journal is not None:
            try:
                await self.journal.started(i, self.actions[i])
            except asyncio.CancelledError:
                self.recording = False
                if not self.hard:
                    self.fail(RuntimeError("journal.started was cancelled"))
                return
            except BaseException as error:
                self.recording = False
                self.fail(error)
                return
            self.recording = False
            self.changed.set()
            async with self.turn:
                self.turn.notify_all()
            if self.stop is not None or self.fault is not None:
                return
        self.entered.add(i)
        try:
            result = await self.owner.single.execute(self.actions[i])
        except asyncio.CancelledError as error:
            self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            if not self.hard:
                self.raised(i, error)
            return
        except Exception as error:
            self.fail(error)
            return
        except BaseException as error:
            self.out[i] = _synthetic(ActionStatus.ENV_ERROR, INTERRUPTED)
            self.raised(i, error)
            return
        self.out[i] = result
        if result.status is ActionStatus.ENV_ERROR and self.stop is None:
            self.stop = "env"
            self.changed.set()

    def raised(self, i: int, error: BaseException) -> None:
        self.own[i] = error
        if self.stop in (None, "env"):
            self.stop = "raised"
        self.cancel_inside()

    def fail(self, error: BaseException) -> None:
        if self.fault is None:
            self.fault = error
        self.cancel_inside()

    def cancel_inside(self) -> None:
        self.hard = True
        for i, task in self.tasks.items():
            if i in self.inside and not task.done():
                task.cancel()
        self.changed.set()

    async def run(self) -> tuple[ActionOutcome, ...]:
        for i, action in enumerate(self.actions):
            if self.owner.accepted(action):
                self.order.append(i)
            else:
                self.out[i] = await self.owner.single.execute(action)
        self.tasks = {i: asyncio.ensure_future(self.ticket(i)) for i in self.order}
        committed = 0
        while True:
            if self.fault is None:
                committed = await self.commit(committed, final=False)
            alive = [t for t in self.tasks.values() if not t.done()]
            if not alive:
                break
            if self.stop is not None or self.fault is not None:
                async with self.turn:
                    self.turn.notify_all()  # the queue empties
            self.changed.clear()
            try:
                await self.changed.wait()
            except asyncio.CancelledError:
                if self.stop in (None, "env"):
                    self.stop = "cancel"
                self.cancel_inside()
        if self.fault is not None:
            raise self.fault
        self.not_run()
        await self.commit(committed, final=True)
        if self.own:
            raise self.own[min(self.own)]
        if self.stop == "cancel":
            raise asyncio.CancelledError()
        return tuple(o for o in self.out if o is not None)

    async def commit(self, committed: int, final: bool) -> int:
        while committed < self.n and self.out[committed] is not None:
            if not final and (self.recording or self.fault is not None):
                break  # a fault while a record was written: nothing more is committed (B16)
            if self.journal is not None:
                writing = asyncio.ensure_future(
                    self.journal.committed(committed, self.out[committed])
                )
                while not writing.done():
                    try:
                        await asyncio.wait({writing})
                    except asyncio.CancelledError:
                        if self.stop in (None, "env"):
                            self.stop = "cancel"
                        self.cancel_inside()
                error = writing.exception()
                if error is not None:
                    self.fail(error)
                    if not final:
                        return committed
                    raise error
            committed += 1
        return committed

    def not_run(self) -> None:
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


def make_executor(registry: ToolRegistry, *, max_concurrency: int = 10) -> TurnstileBatchExecutor:
    return TurnstileBatchExecutor(registry, max_concurrency=max_concurrency)
