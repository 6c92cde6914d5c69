"""Containing a child process and everything it starts (issue 22, item 3).

Killing a child's process group misses what the target detached: a helper started with
``start_new_session=True`` (or after ``setsid()``) has a group of its own, and a daemon that
double-forks is re-parented away from the child before the kill comes. On Linux this module
finds them all:

* `become_subreaper` marks the calling process a child subreaper
  (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphan below it is re-parented to it rather than to
  init, so it stays in the tree this process can see;
* `contained_env` puts a mark in the child's environment, which every descendant inherits
  unless it clears its environment;
* `kill_tree` stops (``SIGSTOP``, so that nothing forks while the tree is walked) every process
  that descends from the child through ``/proc/*/stat`` parent links, that carries the mark, or,
  with ``adopted=True``, that this subreaper adopted, then kills them all and reaps the ones
  re-parented to it.

Elsewhere (macOS, the BSDs, Linux without ``/proc``) the fallback is the old one: the child's
process group is killed, and a descendant that left the group survives. A process running as
another user, or one that clears its environment and is re-parented to init before the kill
(possible only where the subreaper cannot be set), also escapes. Standard library only: the
kit and the guard both need it, and the guard has no dependencies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterable, Mapping

__all__ = ["MARK_VARIABLE", "become_subreaper", "contained_env", "kill_tree", "new_mark"]

MARK_VARIABLE = "POLYLOOP_CONTAINED"
"""The environment variable `contained_env` sets and `kill_tree` looks for."""

_PR_SET_CHILD_SUBREAPER = 36
_STOP_ROUNDS = 50
"""Walks of the process table while stopping a tree; a tree that still grows after this many
rounds (each round stops every process found) is killed as far as it was found."""
_REAP_ROUNDS = 400
_REAP_PAUSE = 0.005
"""At most two seconds spent waiting for the killed to be gone (never part of a verdict)."""


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux); whether it is one now."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def new_mark() -> str:
    """A mark no other run shares."""
    return f"{os.getpid()}-{uuid.uuid4().hex}"


def contained_env(mark: str, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's environment) with `mark` set for `kill_tree` to find."""
    return {**(os.environ if env is None else env), MARK_VARIABLE: mark}


def _parents() -> dict[int, int] | None:
    """Every visible process and its parent, or None without ``/proc``."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, int] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue  # ended meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after
        # its last ')'.
        fields = text[text.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] != b"Z":
            table[int(name)] = int(fields[1])
    return table


def _marked(pids: Iterable[int], mark: str) -> set[int]:
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    found.add(pid)
        except OSError:
            continue  # ended meanwhile, or another user's
    return found


def _tree(table: Mapping[int, int], roots: set[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), [root for root in roots if root in table]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _reap(pids: set[int]) -> None:
    """Collect the ones re-parented to this process (zombies otherwise); wait, briefly, for
    the others to be gone."""
    left = set(pids)
    for _ in range(_REAP_ROUNDS):
        for pid in list(left):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    left.discard(pid)
            except ChildProcessError:  # not (yet) this process's child
                if not os.path.exists(f"/proc/{pid}"):
                    left.discard(pid)
        if not left:
            return
        time.sleep(_REAP_PAUSE)


def kill_tree(pid: int, *, mark: str | None = None, adopted: bool = False) -> None:
    """Kill `pid`, everything descending from it, everything carrying `mark` (see
    `contained_env`) and, with `adopted` (for a subreaper whose only child is `pid`), every
    other process this one adopted, with their descendants.

    `pid` itself is killed, never reaped: its `subprocess.Popen` keeps its exit status."""
    me = os.getpid()
    if pid != me:  # frozen first: a killed parent's children would move before the walk
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGSTOP)
    table = _parents()
    if table is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        _signal([pid], signal.SIGKILL)
        return
    stopped: set[int] = set()
    for _ in range(_STOP_ROUNDS):
        roots = {pid}
        if mark is not None:
            roots |= _marked(table, mark)
        if adopted:
            roots |= {child for child, parent in table.items() if parent == me}
        found = _tree(table, roots) - stopped - {me}
        if not found:
            break
        _signal(found, signal.SIGSTOP)
        stopped |= found
        table = _parents() or {}
    _signal(stopped | {pid}, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _reap(stopped - {pid})
