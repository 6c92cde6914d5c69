"""The command line's child process: imports the target, runs the checks, streams the results.

Started by `conformance._core.watchdog.Child` as ``python -m conformance._core.child FD`` with a
JSON request on stdin; every protocol message goes to file descriptor FD, one JSON object per
line (see `conformance._core.watchdog`). Its stdout and stderr are the target's alone: the
parent captures them and owns the terminal, the report and the clock. Whatever the target does
here (exit, kill the process, fork, print, close stdout, hold the GIL) can cost at most the
clause or tool in progress.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from conformance._core.deadline import DeadlineRunner, Job, LoopThread, Make
from conformance._core.text import describe_exception
from conformance._core.watchdog import BEAT

OUTPUT_SETTLE = 0.02
"""Seconds the child waits after a clause before sending its result (see `send_after_output`)."""

__all__ = ["main"]


class Channel:
    """Protocol messages to the parent, from any thread."""

    def __init__(self, fd: int) -> None:
        # A private duplicate, far from 0-2: a target that closes stdout or fd 1 leaves it alone.
        self._fd = os.dup(fd)
        os.close(fd)
        self._lock = threading.Lock()

    def send(self, kind: str, **data: Any) -> None:
        line = (json.dumps({"e": kind, **data}, ensure_ascii=True) + "\n").encode()
        with self._lock:
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def send_after_output(self, kind: str, **data: Any) -> None:
        """`send`, a moment after the target's last output, so that the parent (which reads
        stdout, stderr and this channel on separate threads) sees that output first and
        charges it to the clause that wrote it."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.flush()
        time.sleep(OUTPUT_SETTLE)
        self.send(kind, **data)

    def beat_forever(self) -> None:
        while True:
            time.sleep(BEAT)
            try:
                self.send("beat")
            except OSError:  # the parent is gone: nobody will read a result, end now
                os._exit(1)


class WatchedRunner:
    """A `DeadlineRunner` that tells the parent when each call into the target starts, makes
    progress and ends, so the parent's clock can time it too."""

    def __init__(self, inner: LoopThread, channel: Channel) -> None:
        self._inner = inner
        self._channel = channel

    def run(self, make: Make, step_limit: float, *, isolate: bool = True) -> Job | None:
        def watched(touch: Callable[[], None]) -> Any:
            def touched() -> None:
                touch()
                self._channel.send("touch")

            return make(touched)

        self._channel.send("job", limit=step_limit)
        try:
            return self._inner.run(watched, step_limit, isolate=isolate)
        finally:
            self._channel.send("idle")

    def close(self) -> None:
        self._inner.close()


def _certify(request: dict[str, Any], channel: Channel) -> None:
    from conformance import cli, engine

    args = argparse.Namespace(target=request["target"], registry=request["registry"])
    try:
        target, registry, name = cli._target(args)
    except cli.UsageError as exc:
        channel.send("usage", message=str(exc))
        return
    channel.send("ready", name=name, mode="black-box" if registry is not None else "white-box")
    runner: DeadlineRunner = WatchedRunner(LoopThread(), channel)
    try:
        report = engine._certify(
            target,
            registry=registry,
            level=request["level"],
            profile=request["profile"],
            seed=request["seed"],
            replay=request.get("replay"),
            only=request["only"],
            expected_failures=request["reasons"],
            deadline=request["deadline"],
            progress=None,
            target_name=name,
            database=request["database"],
            fail_fast=request["fail_fast"],
            started=lambda clause, index, total: channel.send("start", clause=clause),
            finished=lambda result: channel.send_after_output("result", result=result.to_json()),
            runner=runner,
        )
    except (ValueError, TypeError) as exc:
        channel.send("usage", message=str(exc))
        return
    channel.send("done", mode=report.mode, target=report.target)


def _check_tools(request: dict[str, Any], channel: Channel) -> None:
    """One tool at a time from ``request["first"]`` on, each streamed as its `ToolReport`."""
    from conformance import cli
    from conformance.toolcheck.api import _tools_name, select_tool_clauses
    from conformance.toolcheck.clauses import check_one
    from conformance.toolcheck.engine import run_settings
    from conformance.toolcheck.inputs import as_items, normalise

    try:
        tools = cli._tools_target(request["target"])
        chosen = select_tool_clauses(request["only"])
        database = cli._tools_database(request.get("database"))
        run = run_settings(
            request["examples"], request["deadline"], request["seed"], database, request["profile"]
        )
        items, registry = as_items(tools)
        normalised = normalise(items, registry)
    except cli.UsageError as exc:
        channel.send("usage", message=str(exc))
        return
    except (TypeError, ValueError) as exc:
        channel.send("usage", message=describe_exception(exc))
        return
    channel.send(
        "ready",
        labels=[tool.label for tool in normalised],
        name=_tools_name(tools, len(normalised)),
        examples=run.examples,
        deadline=run.deadline,
    )
    for index in range(request["first"], len(normalised)):
        channel.send("start", index=index)
        report = check_one(normalised[index], chosen, run, request["replay"])
        channel.send_after_output("result", index=index, report=report.to_json())
    channel.send("done")


COMMANDS: dict[str, Callable[[dict[str, Any], Channel], None]] = {
    "certify": _certify,
    "check-tools": _check_tools,
}


def main(argv: list[str]) -> None:
    channel = Channel(int(argv[0]))
    threading.Thread(target=channel.beat_forever, daemon=True, name="polyloop-beat").start()
    request = json.loads(sys.stdin.read())
    sys.stdin.close()
    sys.path[:] = request["path"]
    try:
        COMMANDS[request["command"]](request, channel)
    except BaseException as exc:  # SystemExit, GeneratorExit, ...: what the target did
        channel.send("fatal", message=f"the target raised {describe_exception(exc)}")
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        # Not a normal exit: threads the target started must not keep the process alive.
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
