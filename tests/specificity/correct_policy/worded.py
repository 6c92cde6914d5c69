"""Correct policy executor 6: its own wording for every sentence the contract leaves to it.

Written from CONTRACT.md sections 5, 6 and 11 alone. Every executor-owned sentence (E1, P4,
P5's four refusals, P6, P10's two) comes from one `Wording` table, in a terse tagged style
unlike the other modules, so a kit that matches polyloop's sentences rather than the clauses
fails here first. Deciders are started together and collected with `asyncio.as_completed`
(answers are put back in decider order, so nothing depends on which finished first: P12); a
denial names every failing decider and then every DENY reason. Each stage runs in its own task
awaited through `asyncio.shield`; `proceed` is an object whose `__call__` refuses once the call
was cancelled (P9).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolValidationError,
    Verdict,
    plain_arguments,
)

__all__ = ["WORDING", "Wording", "factory"]


@dataclass(frozen=True)
class Wording:
    """The executor's own fixed sentences (templates take positions and class names only)."""

    no_tool_call: str = "[policy-exec] skipped: no tool_call present in action"
    decider_failed: str = "{position}={what}"
    decider_failures: str = "[policy-exec] deny: decider failure(s) {items}"
    deny: str = "[policy-exec] deny: rule verdict"
    deny_reasons: str = "; reasons: {reasons}"
    no_approver: str = "[policy-exec] deny: ask without approver"
    approver_false: str = "[policy-exec] deny: approver returned False"
    approver_other: str = "[policy-exec] deny: approver answer was not the boolean True"
    approver_raised: str = "[policy-exec] deny: approver error {cls}"
    post_raised: str = "[policy-exec] withheld: post #{position} error {cls}"
    post_not_str: str = "[policy-exec] withheld: post #{position} returned {cls}"
    limit: int = 1999


WORDING = Wording()


def _result(status: ActionStatus, text: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=text,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def _str_or_placeholder(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


class _Run:
    """Per-call state: whether `execute` was cancelled."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.cancelled = False

    async def stage(self, awaitable: Awaitable[Any]) -> tuple[str, Any]:
        """('ok', value) or ('raised', exc); our own cancellation is forwarded and re-raised."""
        task = asyncio.ensure_future(_tagged(awaitable))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self.cancelled = True
            task.cancel()
            while not task.done():
                try:
                    await asyncio.wait([task])
                except asyncio.CancelledError:
                    task.cancel()
            raise


async def _tagged(awaitable: Awaitable[Any]) -> tuple[str, Any]:
    try:
        return "ok", await awaitable
    except BaseException as exc:
        return "raised", exc


async def _all_deciders(call: ToolCall, deciders: tuple[Any, ...]) -> list[tuple[str, Any]]:
    async def one(position: int) -> tuple[int, tuple[str, Any]]:
        return position, await _tagged(deciders[position](call))

    tasks = [asyncio.ensure_future(one(p)) for p in range(len(deciders))]
    answers: list[tuple[str, Any]] = [("ok", None)] * len(deciders)
    try:
        for next_done in asyncio.as_completed(tasks):
            position, answer = await next_done
            answers[position] = answer
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        while not all(task.done() for task in tasks):
            try:
                await asyncio.wait(tasks)
            except asyncio.CancelledError:
                continue
        raise
    return answers


class _Proceed:
    """`proceed` for wrapper `level`: runs the rest of the chain, ending in the handler (P8)."""

    def __init__(self, executor: WordedPolicyExecutor, run: _Run, level: int) -> None:
        self._executor, self._run, self._level = executor, run, level

    async def __call__(self) -> Any:
        if self._run.cancelled:
            raise asyncio.CancelledError
        wrappers = self._executor.policy.wrappers
        call = self._run.call
        if self._level < len(wrappers):
            return await wrappers[self._level](
                call, _Proceed(self._executor, self._run, self._level + 1)
            )
        return await self._executor.handler_for(call.name)(plain_arguments(call))


class WordedPolicyExecutor:
    """Sentences from `wording`; the structure is a straight line of awaited stages."""

    def __init__(self, registry: ToolRegistry, policy: ToolPolicy | None, wording: Wording) -> None:
        if policy is not None and not isinstance(policy, ToolPolicy):
            raise TypeError("policy: a ToolPolicy or None is required")
        missing = tuple(spec.name for spec in registry.specs if spec.handler is None)
        if missing:
            raise ValueError(f"missing handler(s): {', '.join(missing)}")
        self.registry = registry
        self.policy = policy or ToolPolicy()
        self._words = wording
        self._names = ",".join(registry.names())

    def parameters(self) -> Mapping[str, str]:
        return {"tools": self._names}

    def handler_for(self, name: str) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        spec = self.registry.spec_for(name)
        assert spec is not None and spec.handler is not None
        return spec.handler

    def _no(self, text: str) -> ActionOutcome:
        if len(text) > self._words.limit:
            text = text[: self._words.limit]
        return _result(ActionStatus.NOT_EXECUTED, text, True)

    async def execute(self, action: Action) -> ActionOutcome:
        if action.tool_call is None:
            return self._no(self._words.no_tool_call)
        call = action.tool_call
        try:
            self.registry.validate(call)
        except ToolValidationError as rejection:
            return _result(ActionStatus.NOT_EXECUTED, str(rejection), True)
        run = _Run(call)
        refusal = await self._deciding(run)
        if refusal is not None:
            return refusal
        tag, value = await run.stage(_Proceed(self, run, 0)())
        if tag == "raised":
            if not isinstance(value, Exception):
                raise value
            if isinstance(value, ToolEnvironmentError):
                return _result(ActionStatus.ENV_ERROR, _str_or_placeholder(value), False)
            text = f"{type(value).__name__}: {_str_or_placeholder(value)}"
        elif isinstance(value, str):
            text = value
        else:
            raise TypeError(f"tool {call.name!r} produced {type(value).__name__}, not str")
        return await self._post(run, text)

    async def _deciding(self, run: _Run) -> ActionOutcome | None:
        tag, answers = await run.stage(_all_deciders(run.call, self.policy.deciders))
        if tag == "raised":
            raise answers
        fatal = [v for t, v in answers if t == "raised" and not isinstance(v, Exception)]
        if fatal:
            raise fatal[0]
        words = self._words
        failures: list[str] = []
        deny: list[str] = []
        asks: list[str] = []
        allow = False
        for position, (tag, value) in enumerate(answers):
            if tag == "raised":
                failures.append(
                    words.decider_failed.format(position=position, what=type(value).__name__)
                )
            elif value is not None and not isinstance(value, Verdict):
                failures.append(words.decider_failed.format(position=position, what="non-Verdict"))
            elif value is None:
                continue
            elif value.decision is Decision.DENY:
                deny.append(value.reason)
            elif value.decision is Decision.ASK:
                asks.append(value.reason)
            else:
                allow = True
        listed = [r for r in deny if r]
        tail = words.deny_reasons.format(reasons=" / ".join(listed)) if listed else ""
        if failures:
            return self._no(words.decider_failures.format(items=", ".join(failures)) + tail)
        if deny:
            return self._no(words.deny + tail)
        decision = Decision.ASK if asks else Decision.ALLOW if allow else self.policy.default
        if decision is Decision.DENY:
            return self._no(words.deny)
        if decision is Decision.ASK:
            return await self._asking(run, tuple(asks))
        return None

    async def _asking(self, run: _Run, reasons: tuple[str, ...]) -> ActionOutcome | None:
        approver = self.policy.approver
        if approver is None:
            return self._no(self._words.no_approver)
        tag, answer = await run.stage(approver(run.call, reasons))
        if tag == "raised":
            if not isinstance(answer, Exception):
                raise answer
            return self._no(self._words.approver_raised.format(cls=type(answer).__name__))
        if answer is True:
            return None
        return self._no(
            self._words.approver_false if answer is False else self._words.approver_other
        )

    async def _post(self, run: _Run, text: str) -> ActionOutcome:
        for position, post in enumerate(self.policy.post):
            tag, value = await run.stage(post(run.call, text))
            if isinstance(value, BaseException) and tag == "raised":
                if not isinstance(value, Exception):
                    raise value
                sentence = self._words.post_raised.format(
                    position=position, cls=type(value).__name__
                )
                return _result(ActionStatus.EXECUTED, sentence, True)
            if not isinstance(value, str):
                sentence = self._words.post_not_str.format(
                    position=position, cls=type(value).__name__
                )
                return _result(ActionStatus.EXECUTED, sentence, True)
            text = value
        return _result(ActionStatus.EXECUTED, text, False)


def factory(
    registry: ToolRegistry, policy: ToolPolicy | None = None, wording: Wording = WORDING
) -> WordedPolicyExecutor:
    """The executor for `registry` under `policy` (the kit's certification target)."""
    return WordedPolicyExecutor(registry, policy, wording)
