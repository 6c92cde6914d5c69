"""``polyloop-metatests check|update PACKAGE --baseline FILE`` (also ``python -m metatests``).

Exit status: 0 the API is compatible with the baseline (notes may say what ``update`` would
record), 1 the check failed (or ``update`` refused to record a breaking change), 2 usage error or
unusable input (missing or malformed baseline, unknown package), always as one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from metatests.baseline import FORMAT, MetatestsError, Report, check_package, update_baseline

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
        " baseline: keyword-only constructors, fields only appended with a default.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{check,update}")
    for name, help_text in (
        ("check", "compare the package with the baseline (exit 0 ok, 1 failed, 2 bad input)"),
        (
            "update",
            "record the package's API in the baseline; refuses breaking changes unless"
            " the major version rose",
        ),
    ):
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument("package", metavar="PACKAGE", help="importable package name")
        command.add_argument(
            "--baseline", metavar="FILE", required=True, help="the committed baseline JSON file"
        )
    return parser


def _starter_hint(package: str, baseline: str, report: Report) -> str:
    """How to adopt the guard on a package that already has positional dataclasses.

    The allowlist needs a human reason per class, so the tool cannot write it; it prints the
    file to start from instead, with empty reasons that the baseline reader rejects until filled.
    """
    positional = sorted({f.subject for f in report.failures if f.code == "positional"})
    if not positional:
        return ""
    starter = {
        "allowlist": dict.fromkeys(positional, ""),
        "classes": {},
        "format": FORMAT,
        "package": package,
        "version": None,
    }
    return (
        f"to keep them positional, create {baseline} with a reason for each, then run update:"
        f" {json.dumps(starter, sort_keys=True)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except _UsageError as exc:
        print(f"{PROG}: error: {exc} (see {PROG} --help)", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0

    try:
        if args.command == "check":
            report = check_package(args.package, args.baseline)
            print(report.render())
            return 0 if report.ok else 1
        result = update_baseline(args.package, args.baseline)
    except MetatestsError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: error: cannot write baseline {args.baseline}: {exc}", file=sys.stderr)
        return 2

    print(result.report.render(recorded=result.written))
    if not result.report.ok:
        print(f"baseline {args.baseline} not written: fix the problems above first")
        hint = _starter_hint(args.package, args.baseline, result.report)
        if hint and not Path(args.baseline).exists():
            print(hint)
        return 1
    if result.written:
        n = result.report.classes
        print(f"wrote {args.baseline}: {n} public dataclass{'es' * (n != 1)} recorded")
    else:
        print(f"baseline {args.baseline} is up to date")
    return 0
