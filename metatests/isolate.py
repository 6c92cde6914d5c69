"""Run the scan in a child process, so nothing a scanned module does can hurt the guard.

Importing a package runs its code. A shipped test module may call ``pytest.skip`` at import
(a ``BaseException``), a module may raise ``KeyboardInterrupt`` or ``SystemExit``, call
``os._exit``, read stdin, start a non-daemon thread, print, or hang. So the parent (the CLI or
``assert_api_stable``):

* starts ``python -c _BOOTSTRAP`` in its own session with the parent's ``sys.path``, stdin from
  ``/dev/null`` and stdout/stderr redirected to files it summarises afterwards;
* reads the child's progress from a result file: the child writes each module's name before
  importing it, so when the child dies (``os._exit``, a signal) or exceeds ``timeout`` seconds,
  the parent knows the culprit, records it as an import failure (M4) and starts the scan again
  without it (at most ``_MAX_RESTARTS`` times);
* kills the child's whole tree when it is done, timed out, or interrupted
  (``polyloop._contain.kill_tree``): its process group, every descendant, and every process
  carrying the scan's environment mark, so a helper a scanned module started with
  ``start_new_session=True`` dies too. The CLI also makes itself a child subreaper (Linux), so
  an orphaned daemon is re-parented to it and found even without the mark; elsewhere only the
  process group and the marked processes are killed (documented fallback). A real Ctrl-C in
  the parent still raises ``KeyboardInterrupt`` (the CLI exits 130; SIGTERM exits 143), and
  the ``metatests-scan-*`` temporary directory is removed either way.

The child ends with ``os._exit`` right after writing its result, so a non-daemon thread or an
``atexit`` hook of a scanned module cannot delay the guard.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from metatests.errors import MetatestsError, PackageNotFoundError
from metatests.model import ImportFailure, Scan, scan_from_json
from polyloop import _contain

__all__ = ["DEFAULT_TIMEOUT", "scan_package"]

DEFAULT_TIMEOUT = 300.0
"""Seconds one scan attempt may take (pydantic-ai with every extra takes about 20 s)."""

_MAX_RESTARTS = 10

OWN_ADOPTED = False
"""Set by the CLI, which is a subreaper whose only child is the scan: every orphan it adopted
came from the scan and is killed with it. ``assert_api_stable`` runs inside a test process
that may have other children, so it leaves this False."""

_BOOTSTRAP = """\
import json, sys
_spec = json.loads(sys.argv[1])
sys.path[:] = _spec["path"]
try:
    import metatests._child as _child
except ImportError:
    sys.path.append(_spec["home"])
    import metatests._child as _child
_child.main(_spec)
"""


@dataclass(frozen=True, kw_only=True)
class _Attempt:
    result: dict[str, Any] | None
    in_progress: str | None
    death: str
    """How the child ended when there is no result ("exited with status 7", "timed out ...")."""
    output: tuple[str, ...]


def scan_package(
    package: str, *, exclude: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT
) -> Scan:
    """Import every public module of ``package`` in a child process and describe its public
    dataclasses.

    Raises PackageNotFoundError when the package cannot be found; everything a scanned module
    does (any exception, exiting, hanging past ``timeout`` seconds) is recorded as an import
    failure of that module in ``Scan.import_failures``.
    """
    if timeout <= 0:
        raise MetatestsError(f"the timeout must be positive, not {timeout:g}")
    crashed: dict[str, str] = {}
    output: list[str] = []
    for _ in range(_MAX_RESTARTS + 1):
        attempt = _attempt(package, exclude, tuple(crashed), timeout)
        output += attempt.output
        result = attempt.result
        if result is not None:
            if "not_found" in result:
                raise PackageNotFoundError(result["not_found"])
            if "internal_error" in result:
                raise MetatestsError(
                    f"the scan of {package} failed inside the guard: {result['internal_error']}"
                )
            if "scan" in result:
                scan = scan_from_json(result["scan"])
                failures = {f.module: f.error for f in scan.import_failures} | crashed
                return replace(
                    scan,
                    import_failures=tuple(
                        ImportFailure(module=m, error=failures[m]) for m in sorted(failures)
                    ),
                    output=tuple(output),
                )
        culprit = attempt.in_progress or package
        crashed[culprit] = attempt.death
        if culprit == package:
            break  # nothing left to scan without it
    return Scan(
        package=package,
        version=None,
        classes={},
        import_failures=tuple(ImportFailure(module=m, error=crashed[m]) for m in sorted(crashed)),
        modules=(),
        excluded=tuple(exclude),
        output=tuple(output),
    )


def _attempt(package: str, exclude: Sequence[str], skip: Sequence[str], timeout: float) -> _Attempt:
    # Imported here, not at the top: the scan's child imports this module too, and must not
    # import polyloop before scanning it.

    with tempfile.TemporaryDirectory(prefix="metatests-scan-") as tmp:
        result_path = Path(tmp) / "result.jsonl"
        result_path.touch()
        spec = {
            # "" means the working directory; the child runs in the same one.
            "path": [p or os.getcwd() for p in sys.path],
            "home": str(Path(__file__).resolve().parent.parent),
            "package": package,
            "exclude": list(exclude),
            "skip": list(skip),
            "result": str(result_path),
        }
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        mark = _contain.new_mark()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, json.dumps(spec)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                env=_contain.contained_env(mark),
            )
            try:
                try:
                    code: int | None = process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    code = None
            finally:
                _kill_tree(process, mark)
        result, in_progress = _read_result(result_path)
        output = _summarise("stdout", out_path) + _summarise("stderr", err_path)
    if code is None:
        death = f"did not finish within {timeout:g} s (hangs at import?)"
    elif code < 0:
        death = f"killed the scan with signal {_signal_name(-code)}"
    else:
        death = f"ended the scan with exit status {code} (os._exit?)"
    return _Attempt(result=result, in_progress=in_progress, death=death, output=output)


def _kill_tree(process: subprocess.Popen[bytes], mark: str) -> None:
    """Kill the child and everything it started, detached helpers included, then reap it."""

    _contain.kill_tree(process.pid, mark=mark, adopted=OWN_ADOPTED)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()


def _read_result(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The final result line if the child wrote one, and the last name it was importing."""
    in_progress: str | None = None
    result: dict[str, Any] | None = None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, None
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a torn last line: the child died mid-write
        if not isinstance(event, dict):
            continue
        if "importing" in event:
            in_progress = str(event["importing"])
        elif "scan" in event or "not_found" in event or "internal_error" in event:
            result = event
    return result, in_progress


def _summarise(stream: str, path: Path) -> tuple[str, ...]:
    """One line about what the scanned modules printed, or nothing when they were silent."""
    try:
        data = path.read_bytes()
    except OSError:
        return ()
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ()
    first = " ".join(lines[0].split())
    first = first if len(first) <= 100 else first[:99] + "…"
    first = first.encode("unicode_escape").decode("ascii")  # no control characters in reports
    n = len(lines)
    return (f"{n} line{'s' * (n != 1)} on {stream}, the first: {first}",)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
