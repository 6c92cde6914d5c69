"""The target's logging and warnings, captured per example (issue 9, defect 7).

While a job of the executor under test runs, every log record that reaches the root logger and
every warning shown is kept as one line, so the report can print the lines of the failing
example next to its counterexample instead of somewhere between progress lines. What reached
stderr before still does (records no handler of the target's took go to
`logging.lastResort`, warnings to the ``showwarning`` in place): a command-line run keeps
capturing stderr per clause, and a caller's own handlers see every record as before.

Warnings are shown once per job rather than once per process: Python's "default" action shows
a warning once per code location, so the failing example would otherwise lose a warning that a
passing example had already shown. Each job enters ``warnings.catch_warnings()`` and appends a
filter that changes nothing (``"default"`` is what applies when no filter matches); changing
the filters resets the per-location registries, and the user's own filters (``-W error``) still
come first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

from conformance._core.text import clip, exception_text

LINES_KEPT = 20
"""Lines kept per example; the rest are counted (`OutputCapture.total`), not kept."""
LINE_LIMIT = 500
"""Characters kept of one line."""


class _Handler(logging.Handler):
    def __init__(self, capture: OutputCapture) -> None:
        super().__init__(logging.NOTSET)
        self._capture = capture

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"{record.levelname} {record.name}: {record.getMessage()}"
        except Exception as exc:  # a bad format string: the line says so, never raises
            text = f"{record.levelname} {record.name}: {record.msg!r} (unformattable: {exc})"
        raised = record.exc_info[1] if record.exc_info else None
        if raised is not None:
            text += f" [{type(raised).__name__}: {exception_text(raised)}]"
        self._capture.add(text)
        if not _handled_elsewhere(record, self):
            last = logging.lastResort
            if last is not None and record.levelno >= last.level:
                last.handle(record)


def _handled_elsewhere(record: logging.LogRecord, mine: logging.Handler) -> bool:
    """Whether a handler other than `mine` takes `record` (else `logging.lastResort` would
    have printed it, had `mine` not been installed)."""
    logger: Any = logging.getLogger(record.name) if record.name != "root" else logging.root
    while logger is not None:
        if any(handler is not mine for handler in logger.handlers):
            return True
        if not logger.propagate:
            return False
        logger = logger.parent
    return False


class OutputCapture:
    """Lines the target logged or warned: those of the current example, and a running count."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self.total = 0
        """Every line captured so far, kept or not (it only grows)."""

    def add(self, text: str) -> None:
        with self._lock:
            self.total += 1
            if len(self._lines) < LINES_KEPT:
                self._lines.append(clip(text, LINE_LIMIT))

    def start_example(self) -> None:
        """Forget the lines kept so far: what follows belongs to a new example."""
        with self._lock:
            self._lines = []

    def example_lines(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._lines)

    @contextlib.contextmanager
    def capturing(self) -> Iterator[None]:
        """Capture while a job of the target runs (see the module docstring)."""
        handler = _Handler(self)
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            where = f"{os.path.basename(filename)}:{lineno}"
            self.add(f"{category.__name__}: {message} ({where})")
            shown(message, category, filename, lineno, file, line)

        logging.root.addHandler(handler)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("default", append=True)
                warnings.showwarning = show
                yield
        finally:
            logging.root.removeHandler(handler)


__all__ = ["LINES_KEPT", "OutputCapture"]
