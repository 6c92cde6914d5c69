"""The parent's side of the command line's child process: start it, read it, time it, end it.

The command line never runs a target in its own process. It starts ``python -m
conformance.cli.child`` (`subprocess`, not `multiprocessing`: the child must be the leader of
its own session so that everything the target forks can be killed as one process group, and
its stdout/stderr must be pipes the parent reads, so that nothing the target prints or forks
ever holds the kit's stdio; a fresh interpreter also avoids forking a process that has threads).

Protocol: the child writes one JSON object per line to a pipe of its own (not stdout), each
signed (``<HMAC-SHA256 hex> <json>``) with a key the parent sends it on stdin before the
target is imported, and each with an ``"e"`` key: ``ready``, ``start`` (a clause or tool
begins), ``job``/``touch``/``idle`` (a call into the target starts, makes progress, ends),
``beat`` (twice a second, from a thread: a process that holds the GIL stops beating),
``result``, ``usage``/``fatal`` and ``done``. The parent's clock is the only one the target
cannot touch: a call open for longer than twice its step limit plus `SLACK`, or no message at
all for `Watch.silence` seconds, means the child is stuck, and it is killed. A line that is
not correctly signed is a forgery (the target found the descriptor, e.g. through
``/proc/self/fd``): the child is killed and the clause in progress is an error.

Killing a child kills everything it started, also what left its process group
(`polyloop._contain`): on Linux the parent is a child subreaper and marks the child's
environment; elsewhere only the process group is killed.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from polyloop import _contain

__all__ = ["CANNOT_REPORT", "SLACK", "Child", "Ended", "Message", "Output", "Watch", "stall_limit"]

SLACK = 5.0
"""Seconds the watchdog allows past what the child's own clock should have enforced."""

BEAT = 0.5
"""Seconds between the child's heartbeats."""

CANNOT_REPORT = 97
"""The child's exit status when it cannot send a message: its channel was closed (the target
closed the kit's descriptors, e.g. ``os.closerange``) or encoding a message failed."""

FORGED = "forged"
"""The kind of the `Message` standing for a line the kit did not sign."""

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
    if code == CANNOT_REPORT:
        return (
            "could not report: its result channel was closed or writing a message to it "
            "failed (the target closed the kit's descriptors, e.g. os.closerange, or broke "
            "what the kit encodes messages with)"
        )
    hint = " (the target ended the process: os._exit or sys.exit)" if code in (0, 3) else ""
    return f"exited with status {code}{hint}"


def _is_message(text: bytes) -> bool:
    """Whether `text` is a JSON object with an ``"e"`` string: a protocol message's shape."""
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("e"), str)


class Child:
    """One child process running ``conformance.cli.child`` on a request."""

    def __init__(self, request: dict[str, Any]) -> None:
        read_end, write_end = os.pipe()
        self._key = secrets.token_bytes(32)
        self._subreaper = _contain.become_subreaper()
        self._mark = _contain.new_mark()
        self._spare = _contain.children()  # this process's own, started before this child
        self._killed = False
        env = _contain.contained_env(
            self._mark,
            dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8:backslashreplace"),
        )
        self._events: queue.SimpleQueue[Message | Output | None] = queue.SimpleQueue()
        self.tail: list[str] = []
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "conformance.cli.child", str(write_end)],
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
            self._process.stdin.write(json.dumps({**request, "key": self._key.hex()}).encode())
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
                message = self._verified(line)
                if message is not None:
                    self._events.put(message)
        self._events.put(None)

    def _verified(self, line: bytes) -> Message | None:
        """The message `line` carries, or a `FORGED` one for any line the kit did not sign:
        only the child holds this descriptor, so anything else on it is the target's doing
        (a forged result, or bytes that would corrupt the kit's next line)."""
        line = line.rstrip(b"\n")
        if not line:
            return None
        signature, _, body = line.partition(b" ")
        expected = hmac.new(self._key, body, "sha256").hexdigest().encode()
        if not hmac.compare_digest(signature, expected) or not _is_message(body):
            return Message(kind=FORGED, data={"e": FORGED})
        data = json.loads(body)
        return Message(kind=data["e"], data=data)

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
            if isinstance(item, Message) and item.kind == FORGED:
                self.kill()
                yield Ended(
                    reason="the child's result channel carried a message the kit did not "
                    "write (the target wrote to the kit's own descriptor, e.g. found through "
                    "/proc/self/fd); nothing it reported after that is trusted"
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
        """Kill the child and everything it started (`polyloop._contain.kill_tree`): the
        target's forks, and the helpers it detached into sessions of their own."""
        if not self._killed:  # once: a reaped child's pid may be another process's by now
            self._killed = True
            _contain.kill_tree(
                self._process.pid, mark=self._mark, adopted=self._subreaper, spare=self._spare
            )
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
