"""The command line's child process: imports the target, runs the checks, streams the results.

Started by `conformance.cli.watchdog.Child` as ``python -m conformance.cli.child FD`` with a
JSON request on stdin; every protocol message goes to file descriptor FD, one JSON object per
line (see `conformance.cli.watchdog`). Its stdout and stderr are the target's alone: the
parent captures them and owns the terminal, the report and the clock. Whatever the target does
here (exit, kill the process, fork, print, close stdout, hold the GIL) can cost at most the
clause or tool in progress.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import importlib
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from conformance._core.deadline import DeadlineRunner, Job, LoopThread, Make
from conformance._core.text import describe_exception
from conformance.cli.watchdog import BEAT, CANNOT_REPORT

OUTPUT_SETTLE = 0.02
"""Seconds the child waits after a clause before sending its result (see `send_after_output`)."""

__all__ = ["main"]


# Captured when the kit starts, before any target is imported: a target that wraps
# `json.dumps`, `os.write` or `hmac.new` at import cannot change what the kit reports (issue 22,
# item 1). A target that digs the captured objects out of this process's memory can; see the
# README's threat model.
_ENCODE = json.JSONEncoder(ensure_ascii=True).encode
_WRITE = os.write
_EXIT = os._exit
_MAC = hmac.new
_SHA256 = hashlib.sha256


class Channel:
    """Protocol messages to the parent, from any thread, each signed with the run's key (see
    `conformance.cli.watchdog`), so that a line the target writes to the kit's descriptor
    is told apart from the kit's own."""

    def __init__(self, fd: int, key: bytes) -> None:
        # A private duplicate, far from 0-2: a target that closes stdout or fd 1 leaves it alone.
        self._fd = os.dup(fd)
        os.close(fd)
        self._key = key
        self._lock = threading.Lock()

    def send(self, kind: str, **data: Any) -> None:
        """Send one message; a child that cannot (its channel closed, or the encoding broken
        by the target) ends with `CANNOT_REPORT`, which the parent names."""
        try:
            body = _ENCODE({"e": kind, **data}).encode()
            line = _MAC(self._key, body, _SHA256).hexdigest().encode() + b" " + body + b"\n"
            with self._lock:
                view = memoryview(line)
                while view:
                    written = _WRITE(self._fd, view)
                    view = view[written:]
        except Exception:
            _EXIT(CANNOT_REPORT)

    def send_after_output(self, kind: str, **data: Any) -> None:
        """`send`, a moment after the target's last output, so that the parent (which reads
        stdout, stderr and this channel on separate threads) sees that output first and
        charges it to the clause that wrote it."""
        _flush_quietly()
        time.sleep(OUTPUT_SETTLE)
        self.send(kind, **data)

    def beat_forever(self) -> None:
        while True:
            time.sleep(BEAT)
            self.send("beat")  # the parent is gone: nobody will read a result, end now


def _flush_quietly() -> None:
    """Flush the target's stdout and stderr; whatever the target made them raise (issue 22,
    item 6: a ``flush`` raising ``RuntimeError``) costs its output, never the results."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


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


def _where(target: object) -> list[Any] | None:
    """``[file, line]`` of the target's definition (a factory, or an executor's class), the
    file relative to the current directory when inside it, for CI annotations to point at the
    user's code (issue 24, item 4); None when it cannot be told."""
    try:
        found = target if inspect.isfunction(target) or inspect.isclass(target) else None
        found = found or getattr(target, "__func__", None) or type(target)
        path = inspect.getsourcefile(found)
        if path is None:
            return None
        line = inspect.getsourcelines(found)[1]
        relative = os.path.relpath(path)
        return [path if relative.startswith("..") else relative, int(line)]
    except Exception:  # a builtin, a class made at run time, source gone: no location
        return None


def _certify(request: dict[str, Any], channel: Channel) -> None:
    # The kit's own modules load before the target does: what a target patches at import
    # (json.dumps, say) cannot reach the module-level values the checks are built from.
    from conformance import cli, engine
    from conformance.subjects import certified, shared_order

    for each in certified():
        for module in each.preload:
            importlib.import_module(module)

    args = argparse.Namespace(target=request["target"], registry=request["registry"])
    try:
        target, registry, name = cli._target(args)
    except cli.UsageError as exc:
        channel.send("usage", message=str(exc))
        return
    channel.send(
        "ready",
        name=name,
        mode="black-box" if registry is not None else "white-box",
        where=_where(target),
    )
    try:  # which subject? (may build one executor: after `ready`, so a death is a clause's)
        subject = engine._subject(target, registry)
        only = engine.only_for(request["only"], subject, request.get("only_given", True))
        clauses = engine.select_clauses(request["level"], only, subject)
    except (ValueError, TypeError) as exc:
        channel.send("usage", message=str(exc))
        return
    share = bool(request.get("share", False))  # --budget: the subjects' clauses in turn
    order = shared_order(clauses) if share else clauses
    channel.send("selection", subject=subject, clauses=list(order))
    runner: DeadlineRunner = WatchedRunner(LoopThread(), channel)
    try:
        report = engine._certify(
            target,
            registry=registry,
            level=request["level"],
            profile=request["profile"],
            seed=request["seed"],
            replay=request.get("replay"),
            only=only,
            expected_failures=request["reasons"],
            deadline=request["deadline"],
            progress=None,
            target_name=name,
            database=request["database"],
            fail_fast=request["fail_fast"],
            started=lambda clause, index, total: channel.send("start", clause=clause),
            finished=lambda result: channel.send_after_output("result", result=result.to_json()),
            runner=runner,
            examples=request.get("examples"),
            share=share,
        )
    except (ValueError, TypeError) as exc:
        channel.send("usage", message=str(exc))
        return
    channel.send("done", mode=report.mode, target=report.target)


def _check_tools(request: dict[str, Any], channel: Channel) -> None:
    """One tool at a time from ``request["first"]`` on, each streamed as its `ToolReport`."""
    from conformance import cli
    from conformance.tools.api import _tools_name, select_tool_clauses
    from conformance.tools.clauses import check_one
    from conformance.tools.engine import run_settings
    from conformance.tools.inputs import as_items, normalise

    try:
        tools = cli._tools_target(request["target"])
        chosen = select_tool_clauses(request["only"])
        database = cli._tools_database(request.get("database"))
        run = run_settings(
            request["examples"],
            request["deadline"],
            request["seed"],
            database,
            request["profile"],
            fail_on_raise=request.get("fail_on_raise", False),
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
    request = json.loads(sys.stdin.read())
    sys.stdin.close()
    channel = Channel(int(argv[0]), bytes.fromhex(request.pop("key")))
    threading.Thread(target=channel.beat_forever, daemon=True, name="polyloop-beat").start()
    sys.path[:] = request["path"]
    try:
        COMMANDS[request["command"]](request, channel)
    except BaseException as exc:  # SystemExit, GeneratorExit, ...: what the target did
        channel.send("fatal", message=f"the target raised {describe_exception(exc)}")
    finally:
        _flush_quietly()
        # Not a normal exit: threads the target started must not keep the process alive.
        _EXIT(0)


if __name__ == "__main__":
    main(sys.argv[1:])
