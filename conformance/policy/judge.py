"""What the P checks share: the verdict exceptions, the per-example kit that builds executors
and plays calls, and readings of an outcome."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from conformance._core.text import clip, describe_exception, safe_repr
from conformance.policy.harness import (
    FactoryFailed,
    Played,
    Recorder,
    Schedule,
    Stack,
    play,
)
from conformance.policy.oracle import Expected
from polyloop import ActionOutcome

__all__ = [
    "Kit",
    "PolicyViolation",
    "fail_first",
    "names_position",
    "outcome_of",
    "show",
    "status_problem",
]


class PolicyViolation(Exception):
    """The executor broke the clause being checked."""

    def __init__(self, message: str, *, expected: str = "", actual: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.actual = actual


def fail_first(*rules: tuple[bool, str, str, str]) -> None:
    """Raise the first rule that is broken: ``(broken, message, expected, actual)``."""
    for broken, message, expected, actual in rules:
        if broken:
            raise PolicyViolation(message, expected=expected, actual=actual)


def show(played: Played) -> str:
    if played.raised is not None:
        return f"execute raised {describe_exception(played.raised)}"
    value = played.returned
    if isinstance(value, ActionOutcome):
        return (
            f"{value.status.name} {clip(safe_repr(value.observation), 300)}"
            f"{' (synthetic)' if value.observation_is_synthetic else ''}"
        )
    return f"execute returned {clip(safe_repr(value), 200)}"


def outcome_of(played: Played, what: str) -> ActionOutcome:
    """The outcome execute returned; a violation naming `what` when it raised or returned
    something else."""
    value = played.returned
    if played.raised is not None or not isinstance(value, ActionOutcome):
        raise PolicyViolation(
            f"{what}: execute did not return an outcome",
            expected="an ActionOutcome",
            actual=show(played),
        )
    return value


def status_problem(outcome: ActionOutcome, expected: Expected) -> str | None:
    """What differs from the oracle in status, synthetic flag and fixed observation."""
    if outcome.status is not expected.status:
        return (
            f"status {outcome.status.name}, not {expected.status.name if expected.status else '?'}"
        )
    if outcome.observation_is_synthetic is not expected.synthetic:
        return f"observation_is_synthetic is {outcome.observation_is_synthetic!r}"
    if expected.observation is not None and outcome.observation != expected.observation:
        return f"observation {clip(safe_repr(outcome.observation), 200)}"
    return None


def names_position(text: str, position: int) -> bool:
    """`text` holds `position` as a decimal number of its own (not part of another)."""
    return re.search(rf"(?<![0-9]){position}(?![0-9])", text) is not None


class Kit:
    """One example's access to the factory under test: fresh executors, played calls."""

    def __init__(
        self,
        factory: Callable[..., Any],
        touch: Callable[[], None],
        deadline: float,
        batch: Callable[..., Any] | None = None,
    ) -> None:
        self.factory = factory
        self.touch = touch
        self.deadline = deadline
        self.batch = batch
        """The batch factory itself, ``factory(registry, max_concurrency=N, policy=...)``,
        when the target is one (P11); `factory` is then its one-call view."""

    def build_batch(self, registry: Any, cap: int, policy: Any) -> Any:
        assert self.batch is not None
        try:
            return self.batch(registry, max_concurrency=cap, policy=policy)
        except Exception as exc:
            raise FactoryFailed(
                f"factory(registry, max_concurrency=N, policy=...) raised {describe_exception(exc)}"
            ) from exc

    def build(self, stack: Stack, schedule: Schedule | None = None) -> tuple[Any, Recorder]:
        recorder = Recorder(stack, schedule or Schedule())
        registry, policy = recorder.registry(), recorder.policy()
        try:
            executor = self.factory(registry, policy=policy)
        except Exception as exc:
            raise FactoryFailed(
                f"factory(registry, policy=...) raised {describe_exception(exc)}"
            ) from exc
        return executor, recorder

    async def again(self, executor: Any, recorder: Recorder, stack: Stack) -> Played:
        """Play `stack`'s call on an executor already built (its recorder reset first)."""
        recorder.reset()
        return await play(executor, recorder, stack.action(), self.touch, self.deadline)

    async def run(self, stack: Stack, schedule: Schedule | None = None) -> tuple[Recorder, Played]:
        executor, recorder = self.build(stack, schedule)
        played = await play(executor, recorder, stack.action(), self.touch, self.deadline)
        return recorder, played
