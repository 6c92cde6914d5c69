"""The conventions every ``polyloop-conformance`` command shares: its flags (``--seed``,
``--only``, ``--profile``, ``--json``, ``--deadline``, the CI outputs, ``--allow-skips``,
``--timeout``), how they are parsed and checked, and how a report is written and progress
shown. `conformance.cli` registers the commands; a flag several commands take is one
``_add_<flag>`` helper here."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from conformance._core.hypo import PROFILES
from conformance._core.limits import TOOL_TIMEOUT
from conformance._core.report import BUDGET_SPENT, Report
from conformance._core.target import UsageError
from conformance._core.text import escape_name, json_dumps
from conformance.cli.ci_output import FORMATS, Case, github_annotations, junit_xml


class _ProgressLine:
    """Progress on stderr: the clause being checked before it runs, then its result. On a
    terminal the result replaces the "checking" line; otherwise each is its own line."""

    def __init__(self) -> None:
        self._tty = sys.stderr.isatty()

    def say(self, text: str) -> None:
        _progress(escape_name(text))

    def start(self, text: str) -> None:
        text = escape_name(text)
        if self._tty:
            _progress(f"\r\x1b[K{text}", end="")
        else:
            _progress(f"{text}checking")

    def finish(self, text: str) -> None:
        text = escape_name(text)
        _progress(f"\r\x1b[K{text}" if self._tty else text)


def _progress(text: str, end: str = "\n") -> None:
    """A progress line on stderr; a stderr that cannot take it (a full disk) costs the
    progress, never the run or its report."""
    try:
        print(text, end=end, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        drop_stderr()


def drop_stderr() -> None:
    """Send the rest of stderr to the null device. A failed write leaves its text in the
    stream's buffer, and the interpreter's last flush at exit would fail again and turn the
    exit status into 120 (seen on 3.10), hiding the run's own status."""
    with contextlib.suppress(OSError):
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives to exit


def _output_summary(report: Report, lines_per_clause: int = 5, *, show_all: bool = False) -> str:
    """The target's captured output, a few lines per clause (all of it is in the JSON): of the
    clauses that failed or errored, where it may explain the failure, or of every clause with
    `show_all` (``--show-output``); a passing clause's output only counted, on one line."""
    parts: list[str] = []
    hidden: list[str] = []
    for result in report.results:
        if not result.output:
            continue
        if not show_all and result.status not in ("fail", "error"):
            hidden.append(result.id)
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
    if hidden:
        parts += [
            "",
            f"the target printed during {len(hidden)} passing clause(s) ({', '.join(hidden)}); "
            "--show-output shows it, --json keeps it",
        ]
    return "\n".join(parts)


def _text_report(report: Report, *, show_all: bool = False) -> str:
    """The text report, then the target's output (`_output_summary`); a run ``--budget`` cut
    short says so on the last line, after the output too."""
    text = report.to_text()
    summary = _output_summary(report, show_all=show_all)
    if summary and report.unjudged():
        return text + summary + "\n\n" + text.splitlines()[-1]
    return text + summary


def _printable(text: str) -> str:
    """Target output as one safe line: control characters and lone surrogates escaped, so it
    can neither move the cursor nor forge report lines."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


OUTPUT_ERROR = 3
"""Exit status when the report could not be written (a full disk, a closed pipe): distinct from
1, a clause failed, and 2, a usage error."""


class OutputError(Exception):
    """The report, or part of it, could not be written: one line, exit `OUTPUT_ERROR`."""


def _check_output_path(path: str | None, flag: str) -> None:
    """Issue 11.8 and 24.4: an unwritable output path is a usage error before the run, not
    after it; a missing parent folder is created, as pytest's ``--junitxml`` does."""
    if not path or path == "-":
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"cannot write {flag} {path!r}: it is a directory; name a file in it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot create the folder of {flag} {path!r}: {exc.strerror or exc}"
        ) from None
    existed = target.exists()
    try:
        with target.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write {flag} {path!r}: {exc.strerror or exc}") from None
    if not existed:
        target.unlink(missing_ok=True)


def _check_json_path(path: str | None) -> None:
    _check_output_path(path, "--json")


def _write_file(path: str, text: str, flag: str) -> str | None:
    """Write `text` to `path`; the one-line problem, or None."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        return f"cannot write {flag} {path!r}: {exc.strerror or exc}"
    return None


def _write_stream(text: str, stream: TextIO, name: str) -> str | None:
    """Print `text` on `stream`; the one-line problem, or None. A stream that failed is
    pointed at the null device, so that the interpreter's own flush at exit cannot print a
    traceback after the one line."""
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError) as exc:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        return f"cannot write the report to {name}: {getattr(exc, 'strerror', None) or exc}"
    return None


def _raise_problems(problems: Sequence[str | None]) -> None:
    found = [problem for problem in problems if problem]
    if found:
        raise OutputError("; ".join(found))


def _emit(json_path: str | None, data: object, text: Callable[[], str], *, indent: int = 1) -> None:
    """The one way every command writes its report: text on stdout, and with ``--json PATH``
    also JSON to PATH, or with ``--json -`` JSON on stdout instead of the text. The file is
    written first and either failing leaves the other alone (issue 22, item 2): a full disk
    under stdout still leaves the JSON report. `OutputError` when anything failed."""
    _raise_problems(_emit_parts(json_path, data, text, indent=indent))


def _emit_parts(
    json_path: str | None, data: object, text: Callable[[], str], *, indent: int = 1
) -> list[str | None]:
    if json_path == "-":  # json_dumps: a lone surrogate cannot crash it
        return [_write_stream(json_dumps(data, indent=indent), sys.stdout, "stdout")]
    problems = []
    if json_path:
        problems.append(_write_file(json_path, json_dumps(data, indent=indent) + "\n", "--json"))
    problems.append(_write_stream(text(), sys.stdout, "stdout"))
    return problems


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


def _check_ci_paths(args: argparse.Namespace) -> None:
    """Every output path a run will write, checked (and its folder made) before the run."""
    _check_output_path(args.json, "--json")
    _check_output_path(args.junit, "--junit")


def _write_reports(
    args: argparse.Namespace,
    data: object,
    text: Callable[[], str],
    cases: Callable[[], Sequence[Case]],
    suite: str,
    *,
    indent: int = 1,
) -> None:
    """The report in every form asked for: the files (``--json``, ``--junit``) first, then
    stdout (the text, ``--format github`` annotations); each is attempted even when another
    failed, and `OutputError` names every failure."""
    problems: list[str | None] = []
    if args.junit:
        problems.append(_write_file(args.junit, junit_xml(cases(), suite), "--junit"))
    problems += _emit_parts(args.json, data, text, indent=indent)
    if args.format == "github":
        annotations = github_annotations(cases())
        if annotations:  # GitHub reads both streams; keep `--json -` output pure JSON
            stream, name = (sys.stderr, "stderr") if args.json == "-" else (sys.stdout, "stdout")
            problems.append(_write_stream(annotations, stream, name))
    _raise_problems(problems)


EXIT_STATUSES = f"""exit status:
  0    every selected clause passed
  1    a clause failed or errored, an expected failure passed, or nothing was checked
  2    usage or import error (one line on stderr)
  {OUTPUT_ERROR}    the report could not be written: a full disk, a closed pipe (one line on
       stderr; files are written before stdout, so --json survives a failing stdout)
  {BUDGET_SPENT}    certify: nothing failed, but --budget was spent before every clause ran (the
       last line names the clauses not judged): not a pass
  130  interrupted; 143 terminated"""


def _examples(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _located(where: tuple[str, int] | None) -> dict[str, Any]:
    return {} if where is None else {"file": where[0], "line": where[1]}


def _tools_where(target: str) -> tuple[str, int] | None:
    """A tool file's own path, for annotations (a module's tools are located by the module
    name alone, which the parent never imports)."""
    if target.endswith(".json") or Path(target).is_file():
        return (target, 1)
    module = target.partition(":")[0]
    candidate = Path(*module.split(".")).with_suffix(".py")
    return (str(candidate), 1) if candidate.is_file() else None


_FLAGS: dict[str, dict[str, Any]] = {
    "--json": dict(
        metavar="PATH",
        help="also write the report as JSON ('-': JSON on stdout instead of text)",
    ),
    "--allow-skips": dict(
        action="store_true",
        help="exit 0 even when every selected clause was skipped, or a black-box run could not "
        "check E6 (by default such a run checked nothing and exits 1)",
    ),
    "--timeout": dict(
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="limit for the whole run, by the watchdog's clock (default: none); a run that "
        "reaches it reports what it checked and exits 2",
    ),
    "--fail-on-raise": dict(
        action="store_true",
        help="a handler raising an Exception on valid generated arguments fails H4 (default: "
        "an allowed observation the report counts)",
    ),
    "--examples": dict(
        type=_examples,
        default=None,
        metavar="N",
        help="generated examples per clause, instead of the profile's (fast 5, quick 15, "
        "ci 50, thorough 1000); the seed and everything else stay the profile's",
    ),
    "--show-output": dict(
        action="store_true",
        help="print what the target wrote during every clause after the report (by default only "
        "a failing clause's output is shown; --json always keeps all of it)",
    ),
    "--tool-timeout": dict(
        type=_positive,
        default=TOOL_TIMEOUT,
        metavar="SECONDS",
        help="limit for checking one tool, by the watchdog's clock; a tool that reaches it is "
        f"reported 'gave up' and the run goes on (default {TOOL_TIMEOUT:g})",
    ),
    "--budget": dict(
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="time for the whole run, by the watchdog's clock: once it is spent no further "
        "clause starts; those left are reported skipped ('not run: --budget') and the run "
        "exits as its results say (unlike --timeout, no clause is cut short)",
    ),
}
"""The flags that read the same in every command that has them: name -> `add_argument`'s
keywords. A command adds them with `_add_flags`; a flag whose help depends on the command
has its own ``_add_<flag>`` helper."""


def _add_flags(parser: argparse.ArgumentParser, *names: str) -> None:
    for name in names:
        parser.add_argument(name, **_FLAGS[name])


def _outside_cwd(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`run` with Hypothesis's storage (its Unicode tables cache, written even when no example
    database is used) moved to the user's cache directory, unless a database was asked for,
    ``HYPOTHESIS_STORAGE_DIRECTORY`` is set or the current directory already has a
    ``.hypothesis/``: checking someone's tools must not leave a directory behind."""

    def command(args: argparse.Namespace) -> int:
        if (
            args.database is not None
            or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY")
            or Path(".hypothesis").exists()
        ):
            return run(args)
        from hypothesis import configuration

        before = vars(configuration).get("__hypothesis_home_directory")
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        storage = cache / "polyloop" / "hypothesis"
        configuration.set_hypothesis_home_dir(storage)
        # The checks run in a child process (`conformance.cli.supervise`), which reads the
        # storage directory from its environment.
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(storage)
        try:
            return run(args)
        finally:
            del os.environ["HYPOTHESIS_STORAGE_DIRECTORY"]
            configuration.set_hypothesis_home_dir(before)

    return command
