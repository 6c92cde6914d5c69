"""The scan's child process (see ``isolate``): scan, write the result, end at once."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

from metatests.errors import PackageNotFoundError
from metatests.model import scan_to_json
from metatests.scan import one_line, scan_in_process


def main(spec: dict[str, Any]) -> None:
    # Opened unbuffered in append mode: each event is one write() the kernel keeps even when a
    # scanned module kills the process right after it.
    fd = os.open(spec["result"], os.O_WRONLY | os.O_APPEND)

    def emit(event: dict[str, Any]) -> None:
        os.write(fd, (json.dumps(event) + "\n").encode("utf-8"))

    try:
        scan = scan_in_process(
            spec["package"],
            exclude=spec["exclude"],
            skip=set(spec["skip"]),
            progress=lambda name: emit({"importing": name}),
        )
        emit({"scan": scan_to_json(scan)})
    except PackageNotFoundError as exc:
        emit({"not_found": str(exc)})
    except BaseException as exc:  # the guard's own bug: the parent reports it (exit 2)
        emit({"internal_error": one_line(exc)})
    finally:
        # What the scanned modules printed sits in Python's buffers (stdout is a pipe): hand it
        # to the parent, which summarises it, before leaving without flushing anything else.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)  # not sys.exit: no waiting for a scanned module's threads or atexit hooks
