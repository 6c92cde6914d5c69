"""Calling a tool's handler under a deadline, classifying what came back (H4, H6).

Every call runs on a fresh event loop in its own daemon thread. A handler that hangs
cooperatively (awaits forever) is cancelled at the deadline; one that blocks its event loop
(a synchronous sleep or socket read inside `async def`) cannot be interrupted, so its thread is
abandoned and the call is reported as a hang. Either way the caller gets an answer shortly
after the deadline, and a `SystemExit` or `KeyboardInterrupt` raised by the handler is a
recorded result, never something that stops the process running the check.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["GRACE", "CallResult", "call_handler", "describe_exception"]

GRACE = 0.5
"""Most seconds allowed past the deadline for cancellation to finish before the call counts as
a hang that blocked its event loop."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallResult:
    """What one handler call did.

    kind: "returned" (value holds the result), "raised" (an `Exception`), "base" (a
    `BaseException` that is not an `Exception`), "hang" (past the deadline; `blocking` when the
    event loop itself was blocked), "not-awaitable" (calling the handler gave no awaitable).
    """

    kind: str
    value: object = None
    exception: BaseException | None = None
    blocking: bool = False
    seconds: float = 0.0


def describe_exception(exc: BaseException) -> str:
    """`f"{type}: {exc}"` as the executor's E4 observation would show it, never raising (E12)."""
    try:
        text = str(exc)
    except Exception:
        text = "<exception str() failed>"
    return f"{type(exc).__name__}: {text}"


async def _guarded(awaitable: Any) -> CallResult:
    # Every outcome is caught inside the task: a SystemExit left to escape would unwind the
    # event loop and leave an unretrieved task behind.
    try:
        return CallResult(kind="returned", value=await awaitable)
    except Exception as exc:
        return CallResult(kind="raised", exception=exc)
    except BaseException as exc:  # CancelledError, SystemExit, KeyboardInterrupt, ...
        return CallResult(kind="base", exception=exc)


async def _await_handler(
    handler: Any, arguments: dict[str, Any], deadline: float, grace: float
) -> CallResult:
    try:
        awaitable = handler(arguments)
    except Exception as exc:
        return CallResult(kind="raised", exception=exc)
    if not inspect.isawaitable(awaitable):
        return CallResult(kind="not-awaitable", value=awaitable)
    task = asyncio.ensure_future(_guarded(awaitable))
    done, _ = await asyncio.wait({task}, timeout=deadline)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=grace / 2)
        return CallResult(kind="hang")
    return task.result()


def call_handler(
    handler: Any, arguments: dict[str, Any], deadline: float, label: str
) -> CallResult:
    """Await `handler(arguments)` with a deadline in a private thread and event loop."""
    box: list[CallResult] = []
    grace = min(GRACE, deadline)

    def run() -> None:
        try:
            box.append(asyncio.run(_await_handler(handler, arguments, deadline, grace)))
        except BaseException as exc:  # SystemExit/KeyboardInterrupt escape asyncio.run
            box.append(CallResult(kind="base", exception=exc))

    thread = threading.Thread(target=run, name=f"polyloop-toolcheck:{label}", daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(deadline + grace)
    seconds = time.monotonic() - start
    if thread.is_alive() or not box:
        return CallResult(kind="hang", blocking=True, seconds=seconds)
    result = box[0]
    return CallResult(
        kind=result.kind,
        value=result.value,
        exception=result.exception,
        blocking=result.blocking,
        seconds=seconds,
    )
