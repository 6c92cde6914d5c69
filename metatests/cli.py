"""``polyloop-metatests check|update PACKAGE --baseline FILE`` (also ``python -m metatests``).

``--format text`` (default) prints the grouped text report, ``json`` the whole report as one
JSON document (schema ``metatests/report.schema.json``), ``github`` the text followed by one
``::error`` annotation per problem; ``--junit PATH`` also writes JUnit XML.

Exit status: 0 the API is compatible with the baseline (notes may say what ``update`` would
record), 1 the check failed (or ``update`` refused to record a breaking change), 2 usage error or
unusable input (missing, malformed or read-only baseline, unknown package), always as one line
on stderr; 130 interrupted (Ctrl-C). A scanned module that crashes, exits or hangs is an M4
failure (exit 1), never a crash of the guard.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from metatests.ci import github_annotations, junit_xml
from metatests.errors import MetatestsError
from metatests.isolate import DEFAULT_TIMEOUT
from metatests.operations import check_package, update_baseline
from metatests.report import Report

__all__ = ["main"]

PROG = "polyloop-metatests"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would print the whole usage block; the contract is one line and exit 2.
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Guard the evolution of a package's public dataclasses against a committed"
        " baseline: keyword-only constructors, parameters only appended with a default.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{check,update}")
    for name, help_text in (
        ("check", "compare the package with the baseline (exit 0 ok, 1 failed, 2 bad input)"),
        (
            "update",
            "record the package's API in the baseline; refuses breaking changes unless"
            " the version rose by a breaking step (the major; the minor while the major is 0)"
            " or --accept-break names them",
        ),
    ):
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument("package", metavar="PACKAGE", help="importable package name")
        command.add_argument(
            "--baseline",
            metavar="FILE",
            required=True,
            help="the committed baseline JSON file (relative to the working directory)",
        )
        command.add_argument(
            "--exclude",
            metavar="PATTERN[=REASON]",
            action="append",
            default=[],
            help="leave out modules matching this dotted fnmatch pattern (and everything below"
            " them); repeatable. `update` records it in the baseline and needs the reason",
        )
        command.add_argument(
            "--max-positional",
            metavar="N",
            type=int,
            default=None,
            help="positional constructor parameters allowed per class (default 0); recorded by"
            " `update`, and `check` refuses a value other than the recorded one",
        )
        command.add_argument(
            "--timeout",
            metavar="SECONDS",
            type=float,
            default=DEFAULT_TIMEOUT,
            help=f"time one scan attempt may take (default {DEFAULT_TIMEOUT:g}); a module that"
            " hangs is reported under M4",
        )
        command.add_argument(
            "--format",
            choices=("text", "json", "github"),
            default="text",
            help="text (default): the grouped report; json: every finding, machine-readable"
            " (schema metatests/report.schema.json); github: the text, then one ::error"
            " annotation per problem",
        )
        command.add_argument(
            "--junit",
            metavar="PATH",
            default=None,
            help="also write a JUnit XML report to PATH: one testcase per clause M1-M5",
        )
        if name == "update":
            command.add_argument(
                "--accept-break",
                metavar="CLASS=REASON",
                action="append",
                default=[],
                help="record the breaking changes of CLASS without a breaking version step"
                " (repeatable); the reason goes into the baseline's `accepted` history",
            )
            command.add_argument(
                "--allow-existing",
                metavar="REASON",
                default=None,
                help="adopt the guard on a package with positional dataclasses: write each"
                " class M1 rejects today into the allowlist with this reason",
            )
    return parser


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        pattern, _, reason = value.partition("=")
        if not pattern.strip():
            raise _UsageError(f"{option} {value!r}: the name before '=' is empty")
        out[pattern.strip()] = reason.strip()
    return out


def _excludes(values: Sequence[str]) -> dict[str, str]:
    return _pairs(values, "--exclude")


def _emit(report: Report, args: argparse.Namespace, *, recorded: bool = False) -> None:
    """Print the report in the chosen format and write the JUnit file if asked (its folder
    made first, as CI jobs write into a fresh ``reports/``)."""
    try:
        if args.format == "json":
            data = report.to_json()
            data["command"] = args.command
            if args.command == "update":
                data["written"] = recorded
            print(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            print(report.render(recorded=recorded))
        if args.format == "github":
            annotations = github_annotations(report)
            if annotations:
                print(annotations)
        sys.stdout.flush()
    except OSError as exc:  # a closed pipe (`| head`), a full disk: not the baseline's fault
        # What could not be written stays buffered; the interpreter's own flush at exit would
        # fail again and turn exit 2 into 120. Point the stream at the null device first.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        raise MetatestsError(f"cannot write the report to stdout: {exc.strerror or exc}") from None
    if args.junit:
        try:
            Path(args.junit).parent.mkdir(parents=True, exist_ok=True)
            Path(args.junit).write_text(junit_xml(report), encoding="utf-8")
        except OSError as exc:
            raise MetatestsError(
                f"cannot write --junit {args.junit}: {exc.strerror or exc}"
            ) from None


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the scan's cleanup (kill the child's tree,
    remove the temporary directory) runs as for Ctrl-C."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """The command. Run as a program (the console script, ``python -m metatests``) it owns
    its process: it becomes a child subreaper, so the scan's orphans (a daemon a scanned module
    detached) are re-parented to it and killed with the scan, and SIGTERM cleans up like
    Ctrl-C. Called from other code (tests, embedding) it leaves the process as it found it."""
    if not _is_program(argv) or threading.current_thread() is not threading.main_thread():
        return _interruptible(argv)
    from metatests import isolate
    from polyloop import _contain

    isolate.OWN_ADOPTED = _contain.become_subreaper()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _interruptible(argv)
    except _Terminated:
        print(f"{PROG}: terminated (SIGTERM)", file=sys.stderr)
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)


def _is_program(argv: Sequence[str] | None) -> bool:
    """This process runs the guard's command line itself (not pytest, not an embedding)."""
    if argv is not None and list(argv) != sys.argv[1:]:
        return False
    program = sys.argv[0] if sys.argv else ""
    name, folder = os.path.basename(program), os.path.basename(os.path.dirname(program))
    return name == PROG or (name == "__main__.py" and folder == "metatests")


def _interruptible(argv: Sequence[str] | None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
        excludes = _excludes(args.exclude)
        accepted = _pairs(getattr(args, "accept_break", []), "--accept-break")
    except _UsageError as exc:
        print(f"{PROG}: error: {exc} (see {PROG} --help)", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0

    try:
        if args.command == "check":
            report = check_package(
                args.package,
                args.baseline,
                exclude=list(excludes),
                max_positional=args.max_positional,
                timeout=args.timeout,
            )
            _emit(report, args)
            return 0 if report.ok else 1
        result = update_baseline(
            args.package,
            args.baseline,
            exclude=excludes,
            max_positional=args.max_positional,
            allow_existing=args.allow_existing,
            accept_break=accepted,
            timeout=args.timeout,
        )
        _emit(result.report, args, recorded=result.written)
    except MetatestsError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: error: cannot write baseline {args.baseline}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug of the guard: never exit 1, which means "check failed"
        print(f"{PROG}: internal error (please report it): {exc!r}", file=sys.stderr)
        return 2

    if args.format == "json":
        return 0 if result.report.ok else 1
    if not result.report.ok:
        print(f"baseline {args.baseline} not written: fix the problems above first")
        if any(f.clause == "M1" for f in result.report.failures):
            command = shlex.join(
                [PROG, "update", args.package, "--baseline", args.baseline, "--allow-existing"]
            )
            print(
                "to keep the classes M1 rejects positional, allowlist them with a reason:"
                f" {command} 'why they stay positional'"
            )
        breaking = sorted({f.subject for f in result.report.failures if f.kind == "breaking"})
        if breaking:
            command = shlex.join([PROG, "update", args.package, "--baseline", args.baseline])
            example = shlex.join(["--accept-break", f"{breaking[0]}=why callers may break"])
            print(
                f"to record the breaking changes of {len(breaking)}"
                f" class{'es' * (len(breaking) != 1)} without a breaking version step, accept"
                f" each with a reason: {command} {example}"
            )
        return 1
    if result.written:
        n = result.report.classes
        print(f"wrote {args.baseline}: {n} public dataclass{'es' * (n != 1)} recorded")
    else:
        print(f"baseline {args.baseline} is up to date")
    return 0
