"""The conventions every ``polyloop-conformance`` command shares: its flags (``--seed``,
``--only``, ``--profile``, ``--json``, ``--deadline``, the CI outputs, ``--allow-skips``,
``--timeout``), how they are parsed and checked, and how a report is written and progress
shown. `conformance.cli` registers the commands; a flag several commands take is one
``_add_<flag>`` helper here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from conformance._core.hypo import PROFILES
from conformance._core.target import UsageError
from conformance._core.text import escape_name, json_dumps
from conformance.ci_output import FORMATS, Case, github_annotations, junit_xml
from conformance.report import Report


class _ProgressLine:
    """Progress on stderr: the clause being checked before it runs, then its result. On a
    terminal the result replaces the "checking" line; otherwise each is its own line."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()

    def say(self, text: str) -> None:
        print(escape_name(text), file=sys.stderr, flush=True)

    def start(self, text: str) -> None:
        text = escape_name(text)
        if self._tty:
            print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)
        else:
            print(f"{text}checking", file=sys.stderr, flush=True)

    def finish(self, text: str) -> None:
        text = escape_name(text)
        print(f"\r\x1b[K{text}" if self._tty else text, file=sys.stderr, flush=True)


def _output_summary(report: Report, lines_per_clause: int = 5) -> str:
    """The target's captured output, a few lines per clause (all of it is in the JSON)."""
    parts: list[str] = []
    for result in report.results:
        if not result.output:
            continue
        lines = result.output.splitlines()
        shown = [_printable(line)[:200] for line in lines[:lines_per_clause]]
        more = (
            f" (first {lines_per_clause} shown; --json keeps it all)"
            if len(lines) > lines_per_clause
            else ""
        )
        parts += ["", f"target output during {result.id}: {len(lines)} lines{more}"]
        parts += [f"  | {line}" for line in shown]
    return "\n".join(parts)


def _printable(text: str) -> str:
    """Target output as one safe line: control characters and lone surrogates escaped, so it
    can neither move the cursor nor forge report lines."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _check_json_path(path: str | None) -> None:
    """Issue 11.8: an unwritable ``--json PATH`` is a usage error before the run, not after."""
    if not path or path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"cannot write --json {path!r}: it is a directory")
    existed = target.exists()
    try:
        with target.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write --json {path!r}: {exc.strerror or exc}") from None
    if not existed:
        target.unlink(missing_ok=True)


def _emit(json_path: str | None, data: object, text: Callable[[], str], *, indent: int = 1) -> None:
    """The one way every command writes its report: text on stdout, and with ``--json PATH``
    also JSON to PATH, or with ``--json -`` JSON on stdout instead of the text."""
    if json_path == "-":
        print(json_dumps(data, indent=indent))  # json_dumps: a lone surrogate cannot crash it
        return
    print(text(), flush=True)  # before the JSON: a failed write must not lose the report
    if json_path:
        try:
            Path(json_path).write_text(json_dumps(data, indent=indent) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {json_path!r}: {exc.strerror or exc}") from None


def _clause_ids(text: str | None, command: str, checkable: Sequence[str]) -> list[str] | None:
    """``--only`` as a list of clause IDs (commas or spaces separate them, any case); None when
    absent. A `UsageError` for an empty list, or an ID `command` cannot check (with the closest
    IDs it can check)."""
    if text is None:
        return None
    ids = [part.upper() for part in text.replace(",", " ").split() if part]
    if not ids:
        raise UsageError(
            f"--only needs at least one clause ID (commas or spaces between them), got {text!r}; "
            f"{command} checks {', '.join(checkable)}"
        )
    for clause_id in ids:
        if clause_id not in checkable:
            raise UsageError(_unknown_clause(clause_id, command, checkable))
    return ids


def _unknown_clause(clause_id: str, command: str, checkable: Sequence[str]) -> str:
    from difflib import get_close_matches

    from conformance import catalog

    listed = f"{command} checks {', '.join(checkable)}"
    if clause_id in {clause.id for clause in catalog.CLAUSES}:
        return f"--only: {command} does not check {clause_id}; {listed}"
    close = get_close_matches(clause_id, checkable, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"--only: unknown clause ID {clause_id!r}{hint} ({listed})"


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _add_seed(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--seed", type=_seed, help=help_text)


def _add_only(parser: argparse.ArgumentParser, example: str) -> None:
    parser.add_argument(
        "--only",
        metavar="IDS",
        help=f"check only these clause IDs (commas or spaces), e.g. {example}",
    )


def _add_profile(parser: argparse.ArgumentParser, default: str | None, help_text: str) -> None:
    parser.add_argument("--profile", choices=tuple(PROFILES), default=default, help=help_text)


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        metavar="PATH",
        help="also write the report as JSON ('-': JSON on stdout instead of text)",
    )


def _add_deadline(parser: argparse.ArgumentParser, default: float, what: str) -> None:
    parser.add_argument(
        "--deadline",
        type=_positive,
        default=default,
        metavar="SECONDS",
        help=f"limit for each {what} (default {default:g})",
    )


def _add_ci_outputs(parser: argparse.ArgumentParser, case: str) -> None:
    parser.add_argument(
        "--junit",
        metavar="PATH",
        help=f"also write a JUnit XML report to PATH: one testcase per {case}, the failure "
        "text is the counterexample",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help=f"github: after the text report, one ::error annotation per failed {case}",
    )


def _ci_outputs(args: argparse.Namespace, cases: Callable[[], Sequence[Case]], suite: str) -> None:
    """``--junit PATH`` and ``--format github``, after the report itself was written."""
    if args.format == "github":
        annotations = github_annotations(cases())
        if annotations:  # GitHub reads both streams; keep `--json -` output pure JSON
            print(annotations, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.junit:
        try:
            Path(args.junit).write_text(junit_xml(cases(), suite), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.junit!r}: {exc.strerror or exc}") from None


def _add_allow_skips(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-skips",
        action="store_true",
        help="exit 0 even when every selected clause was skipped, or a black-box run could not "
        "check E6 (by default such a run checked nothing and exits 1)",
    )


def _add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="limit for the whole run, by the watchdog's clock (default: none); a run that "
        "reaches it reports what it checked and exits 2",
    )
