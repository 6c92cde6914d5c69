"""The parent's side of the command line's child process: start it, read it, time it, end it.

The command line never runs a target in its own process. It starts ``python -m
conformance._core.child`` (`subprocess`, not `multiprocessing`: the child must be the leader of
its own session so that everything the target forks can be killed as one process group, and
its stdout/stderr must be pipes the parent reads, so that nothing the target prints or forks
ever holds the kit's stdio; a fresh interpreter also avoids forking a process that has threads).

Protocol: the child writes one JSON object per line to a pipe of its own (not stdout), each
with an ``"e"`` key: ``ready``, ``start`` (a clause or tool begins), ``job``/``touch``/``idle``
(a call into the target starts, makes progress, ends), ``beat`` (twice a second, from a thread:
a process that holds the GIL stops beating), ``result``, ``usage``/``fatal`` and ``done``. The
parent's clock is the only one the target cannot touch: a call open for longer than twice its
step limit plus `SLACK`, or no message at all for `Watch.silence` seconds, means the child is
stuck, and it is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = ["SLACK", "Child", "Ended", "Message", "Output", "Watch", "stall_limit"]

SLACK = 5.0
"""Seconds the watchdog allows past what the child's own clock should have enforced."""

BEAT = 0.5
"""Seconds between the child's heartbeats."""

OUTPUT_LIMIT = 20_000
"""Characters of target output kept per clause or tool (the rest is counted, not kept)."""


def stall_limit(step_limit: float) -> float:
    """How long the watchdog lets one call into the target, or a silent child, run: twice the
    child's own limit plus `SLACK` (the child reports a stuck call itself well before this)."""
    return 2 * step_limit + SLACK


@dataclass(frozen=True, kw_only=True)
class Message:
    """One protocol message from the child."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Output:
    """Text the target wrote to the child's stdout or stderr."""

    stream: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Ended:
    """The child is gone or was killed; `reason` says what the watchdog saw."""

    reason: str
    stalled: bool = False
    timed_out: bool = False


@dataclass(kw_only=True)
class Watch:
    """The parent's clocks for one child."""

    silence: float
    """Seconds without any message after which the child counts as stuck."""
    deadline: float | None = None
    """`time.monotonic()` by which the whole run must end (``--timeout``), or None."""
    timeout: float | None = None
    budget_until: float | None = None
    """`time.monotonic()` by which the item in progress (one tool) must end, or None."""
    budget: float = 0.0
    last_message: float = field(default_factory=time.monotonic)
    call_since: float | None = None
    call_limit: float = 0.0

    def seen(self, message: Message) -> None:
        now = time.monotonic()
        self.last_message = now
        if message.kind in ("job", "touch"):
            self.call_since = now
            if message.kind == "job":
                self.call_limit = stall_limit(float(message.data.get("limit", 0.0)))
        elif message.kind == "idle":
            self.call_since = None

    def expired(self) -> Ended | None:
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            return Ended(
                reason=f"the run did not finish within --timeout {self.timeout:g}s",
                timed_out=True,
            )
        if self.budget_until is not None and now > self.budget_until:
            return Ended(reason=f"gave up after {self.budget:g}s", stalled=True)
        if self.call_since is not None and now - self.call_since > self.call_limit:
            return Ended(
                reason=f"a call into the target did not return within {self.call_limit:g}s by "
                "the watchdog's clock (it held the GIL in a long C call, or defeated the kit's "
                "in-process deadline, e.g. by patching time.monotonic or asyncio)",
                stalled=True,
            )
        if now - self.last_message > self.silence:
            return Ended(
                reason=f"the child process stopped reporting for {self.silence:g}s (the target "
                "holds the GIL in a long C call, or stopped the process)",
                stalled=True,
            )
        return None


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    hint = " (the target ended the process: os._exit or sys.exit)" if code in (0, 3) else ""
    return f"exited with status {code}{hint}"


class Child:
    """One child process running ``conformance._core.child`` on a request."""

    def __init__(self, request: dict[str, Any]) -> None:
        read_end, write_end = os.pipe()
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8:backslashreplace")
        self._events: queue.SimpleQueue[Message | Output | None] = queue.SimpleQueue()
        self.tail: list[str] = []
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "conformance._core.child", str(write_end)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_end,),
                start_new_session=True,
                env=env,
            )
        finally:
            os.close(write_end)
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.write(json.dumps(request).encode())
            self._process.stdin.close()
        channel = os.fdopen(read_end, "rb")
        assert self._process.stdout is not None and self._process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read_channel, args=(channel,), daemon=True),
            threading.Thread(
                target=self._read_output, args=(self._process.stdout, "stdout"), daemon=True
            ),
            threading.Thread(
                target=self._read_output, args=(self._process.stderr, "stderr"), daemon=True
            ),
        ]
        for reader in self._readers:
            reader.start()

    def _read_channel(self, channel: IO[bytes]) -> None:
        with channel:
            for line in channel:
                try:
                    data = json.loads(line)
                except ValueError:
                    continue  # not the kit's: the target wrote to an inherited descriptor
                if isinstance(data, dict) and isinstance(data.get("e"), str):
                    self._events.put(Message(kind=data["e"], data=data))
        self._events.put(None)

    def _read_output(self, stream: IO[bytes], name: str) -> None:
        with stream:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                text = chunk.decode("utf-8", "backslashreplace")
                if name == "stderr":
                    self.tail = (self.tail + text.splitlines())[-5:]
                self._events.put(Output(stream=name, text=text))

    def events(self, watch: Watch) -> Iterator[Message | Output | Ended]:
        """Everything the child says, in order, until it ends (the last item is `Ended`)."""
        while True:
            item: Message | Output | bool | None
            try:
                item = self._events.get(timeout=0.1)
            except queue.Empty:
                item = False
            if item is None:  # the channel closed: the child is ending
                try:
                    code = self._process.wait(timeout=SLACK)
                except subprocess.TimeoutExpired:
                    code = None
                self.kill()
                self._drain()
                yield Ended(
                    reason="the child process closed its channel and hung"
                    if code is None
                    else f"the child process {_describe_exit(code)}"
                )
                return
            if isinstance(item, Message):
                watch.seen(item)
                yield item
            elif isinstance(item, Output):
                yield item
            ended = watch.expired()
            if ended is not None:
                self.kill()
                yield ended
                return

    def _drain(self) -> None:
        """Wait briefly for the output readers (everything that held the pipes is dead)."""
        for reader in self._readers:
            reader.join(timeout=1.0)

    def kill(self) -> None:
        """Kill the child's whole process group (whatever the target forked dies with it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=SLACK)
        self._drain()

    def pending_output(self) -> Iterator[Output]:
        """Output still queued after the child ended."""
        while True:
            try:
                item = self._events.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, Output):
                yield item
