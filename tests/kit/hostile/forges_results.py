"""Wrong executors (every observation gets a suffix: E5 fails) that try to fake a pass through
the kit's own reporting, and correct ones that break what the kit reports with (issue 22,
items 1 and 6)."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import stat
import sys
from typing import Any

from hostile._base import Wrapped
from polyloop import Action, ActionOutcome


class Wrong(Wrapped):
    """Edits every observation, so E5 ("a returned str is the observation, exactly") fails."""

    async def execute(self, action: Action) -> ActionOutcome:
        self.hostile()
        outcome = await self._inner.execute(action)
        return dataclasses.replace(outcome, observation=outcome.observation + " (edited)")


def _forged_pass(clause: str) -> dict[str, Any]:
    return {
        "id": clause,
        "title": "forged",
        "level": "core",
        "status": "pass",
        "examples": 50,
        "seconds": 0.1,
    }


def _result_pipes() -> list[int]:
    """Write-only pipes among this process's descriptors, found through /proc/self/fd."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode) and os.O_WRONLY & _flags(fd):
                found.append(fd)
        except OSError:
            continue
    return found


def _flags(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


class ForgesThroughProcFd(Wrong):
    """Finds the kit's result pipe through /proc/self/fd and writes a passing E5 and "done"."""

    forged = False

    def hostile(self) -> None:
        if ForgesThroughProcFd.forged:
            return
        ForgesThroughProcFd.forged = True
        lines = [{"e": "result", "result": _forged_pass("E5")}, {"e": "done"}]
        for fd in _result_pipes():
            for line in lines:
                os.write(fd, (json.dumps(line) + "\n").encode())


class DigsOutTheChannel(Wrong):
    """Finds the kit's own channel object in memory and sends a correctly signed result for a
    clause that was not selected: the deliberate in-process forgery the kit cannot stop, which
    must still end in a clear error, never a crash of the parent."""

    forged = False

    def hostile(self) -> None:
        if DigsOutTheChannel.forged:
            return
        DigsOutTheChannel.forged = True
        for thing in gc.get_objects():
            if type(thing).__name__ == "Channel" and hasattr(thing, "send"):
                thing.send("result", result=_forged_pass("E9"))


class ClosesDescriptors(Wrapped):
    """Correct, but closes every descriptor above 2 in its first call (the kit's channel too)."""

    def hostile(self) -> None:
        os.closerange(3, 4096)


class _FlushRaises:
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return int(self._stream.write(text))

    def flush(self) -> None:
        raise RuntimeError("flush is broken")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class BreaksFlush(Wrapped):
    """Correct, but its first call makes ``sys.stdout.flush`` raise RuntimeError."""

    def hostile(self) -> None:
        if not isinstance(sys.stdout, _FlushRaises):
            sys.stdout = _FlushRaises(sys.stdout)


class CorruptsTheChannel(Wrong):
    """Writes half a line (no newline) to every write-only pipe it finds, so that the kit's
    next message, the verdict on this clause, arrives corrupted."""

    corrupted = False

    def hostile(self) -> None:
        if CorruptsTheChannel.corrupted:
            return
        CorruptsTheChannel.corrupted = True
        for fd in _result_pipes():
            os.write(fd, b'{"half a line')
