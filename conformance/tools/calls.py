"""Calling a tool's handler under a deadline and classifying what came back (H4, H6).

Every call goes through the kit's one deadline runner (`conformance._core.deadline`). A handler
that hangs cooperatively (awaits forever) is cancelled at the deadline; one that blocks its event
loop cannot be interrupted, so the runner abandons that loop and the call is reported as a hang.
Either way the caller gets an answer shortly after the deadline, and a `SystemExit` or
`KeyboardInterrupt` raised by the handler is a recorded result, never something that stops the
process running the check.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance._core.deadline import DeadlineRunner
from conformance._core.limits import GRACE
from conformance._core.text import describe_exception, safe_repr, shorten
from polyloop.tools import ToolEnvironmentError

__all__ = ["CallKind", "CallResult", "call_handler", "call_problem", "observation"]


class CallKind(enum.Enum):
    """What one handler call did."""

    RETURNED = "returned"
    """It returned; `CallResult.value` holds the result."""
    RAISED = "raised"
    """It raised an `Exception`."""
    BASE = "base"
    """It raised a `BaseException` that is not an `Exception`."""
    HANG = "hang"
    """It did not finish within the deadline (`blocking` when its event loop was blocked)."""
    NOT_AWAITABLE = "not-awaitable"
    """Calling the handler gave no awaitable."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallResult:
    """What one handler call did."""

    kind: CallKind
    value: object = None
    exception: BaseException | None = None
    blocking: bool = False
    seconds: float = 0.0


async def _guarded(awaitable: Any) -> CallResult:
    # Every outcome is caught inside the task: a SystemExit left to escape would unwind the
    # event loop and leave an unretrieved task behind.
    try:
        return CallResult(kind=CallKind.RETURNED, value=await awaitable)
    except Exception as exc:
        return CallResult(kind=CallKind.RAISED, exception=exc)
    except BaseException as exc:  # CancelledError, SystemExit, KeyboardInterrupt, ...
        return CallResult(kind=CallKind.BASE, exception=exc)


async def _await_handler(
    handler: Any, arguments: dict[str, Any], deadline: float, grace: float
) -> CallResult:
    try:
        awaitable = handler(arguments)
    except Exception as exc:
        return CallResult(kind=CallKind.RAISED, exception=exc)
    except BaseException as exc:
        return CallResult(kind=CallKind.BASE, exception=exc)
    if not inspect.isawaitable(awaitable):
        return CallResult(kind=CallKind.NOT_AWAITABLE, value=awaitable)
    task = asyncio.ensure_future(_guarded(awaitable))
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=grace / 2)
        return CallResult(kind=CallKind.HANG)
    return task.result()


def call_handler(
    runner: DeadlineRunner, handler: Any, arguments: dict[str, Any], deadline: float
) -> CallResult:
    """Await ``handler(arguments)`` on `runner` with a deadline."""
    grace = min(GRACE, deadline)

    def make(touch: Callable[[], None]) -> Any:
        return _await_handler(handler, arguments, deadline, grace)

    start = time.monotonic()
    job = runner.run(make, deadline + grace)
    seconds = time.monotonic() - start
    if job is None:
        return CallResult(kind=CallKind.HANG, blocking=True, seconds=seconds)
    if job.escaped is not None or not isinstance(job.value, CallResult):
        exception = job.escaped or job.raised
        return CallResult(kind=CallKind.BASE, exception=exception, seconds=seconds)
    result: CallResult = job.value
    return CallResult(
        kind=result.kind,
        value=result.value,
        exception=result.exception,
        blocking=result.blocking,
        seconds=seconds,
    )


def observation(result: CallResult) -> str | None:
    """The observation a replay would show the model, or None when there is none to compare."""
    if result.kind is CallKind.RETURNED and isinstance(result.value, str):
        return result.value
    if result.kind is CallKind.RAISED and not isinstance(result.exception, ToolEnvironmentError):
        assert result.exception is not None
        return describe_exception(result.exception)
    return None


def call_problem(result: CallResult, deadline: float) -> tuple[str, str, str] | None:
    """(code, message, fix) when a call broke H4, else None."""
    if result.kind is CallKind.RETURNED and not isinstance(result.value, str):
        shown = shorten(safe_repr(result.value), 60)
        return (
            "non-str-return",
            f"the handler returned {type(result.value).__name__} ({shown}), not str",
            "return the observation text as a str on every path (an executor raises TypeError "
            "on the first such call, E9)",
        )
    if result.kind is CallKind.BASE:
        assert result.exception is not None
        return (
            "base-exception",
            f"the handler raised {describe_exception(result.exception)}, a BaseException "
            "that is not an Exception",
            "raise an Exception subclass (ToolEnvironmentError when the backend is down): "
            "SystemExit, KeyboardInterrupt and CancelledError escape the executor and stop the "
            "whole run (E6)",
        )
    if result.kind is CallKind.HANG:
        if result.blocking:
            return (
                "deadline",
                f"the handler did not finish within {deadline:g}s and blocked its event loop",
                "move blocking work off the loop (asyncio.to_thread) and bound every wait",
            )
        return (
            "deadline",
            f"the handler did not finish within {deadline:g}s",
            "bound every wait (asyncio.timeout, wait_for) and raise ToolEnvironmentError when "
            "the backend does not answer",
        )
    if result.kind is CallKind.NOT_AWAITABLE:
        return (
            "not-awaitable",
            f"calling the handler returned {type(result.value).__name__}, not an awaitable",
            "declare the handler with `async def`",
        )
    return None
