"""``polyloop-conformance`` / ``python -m conformance``.

The one command-line module: ``certify [module:factory]`` certifies an executor (polyloop's own
`RegistryExecutor` when no target is given), ``check-tools TARGET`` checks tool definitions,
``catalog`` lists the clauses. Every command follows the same conventions: ``--only`` takes
clause IDs separated by commas or spaces, ``--seed`` a non-negative int, ``--profile`` one of
the kit's profiles, ``--json PATH`` writes the report as JSON (``-``: JSON on stdout instead of
text). Exit status: 0 every selected clause passed, 1 a clause failed (or an expected failure
now passes), 2 a usage or import error, reported in one line after ``polyloop-conformance:
error:``, 3 the report could not be written (a full disk, a closed pipe; one line too), 130
interrupted, 143 terminated.

A new subcommand is one ``_add_<name>_command(subparsers)`` function registered in `COMMANDS`;
a new flag shared by several commands is one entry in `conformance.cli.shared._FLAGS` (or an
``_add_<flag>`` helper there when its help depends on the command), added by each of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from conformance._core.hypo import DEFAULT_PROFILE
from conformance._core.limits import EXECUTE_DEADLINE, HANDLER_DEADLINE
from conformance._core.report import Report
from conformance._core.runs import campaign_seed as _campaign_seed
from conformance._core.target import UsageError, resolve
from conformance._core.text import describe_exception, escape_name
from conformance.catalog import CONTRACT_VERSION, LEVELS
from conformance.cli.ci_output import certify_cases, tool_cases
from conformance.cli.shared import (
    EXIT_STATUSES,
    OUTPUT_ERROR,
    OutputError,
    _add_ci_outputs,
    _add_deadline,
    _add_flags,
    _add_only,
    _add_profile,
    _add_seed,
    _check_ci_paths,
    _clause_ids,
    _emit,
    _located,
    _outside_cwd,
    _printable,
    _progress,
    _ProgressLine,
    _text_report,
    _tools_where,
    _write_reports,
    drop_stderr,
)
from conformance.engine import ANY, CERTIFIABLE, _checked_arguments, select_clauses
from conformance.engine import is_instance as _executes
from conformance.engine import through_clauses as _through
from polyloop import RegistryExecutor, ToolRegistry, ToolSpec, __version__

if TYPE_CHECKING:
    from hypothesis.database import ExampleDatabase

__all__ = [
    "COMMANDS",
    "UsageError",
    "add_check_tools_command",
    "build_parser",
    "load_expected_failures",
    "main",
    "resolve",
]

_PROG = "polyloop-conformance"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def load_expected_failures(path: str) -> dict[str, str]:
    """Read an expected-failures file: clause ID -> reason.

    JSON: ``{"E4": "reason", ...}``, ``[{"id": "E4", "reason": "..."}]``, or either under an
    ``"expected_failures"`` key. Otherwise one entry per line, ``E4: reason``; a line whose first
    non-blank character is ``#`` is a comment, and a ``#`` anywhere else belongs to the reason
    (``E12: tracked in #123``). Every entry needs a reason."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read expected failures {path!r}: {exc.strerror or exc}") from None
    entries: list[tuple[str, Any]] = []
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if data is None:
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            clause, _, reason = line.replace(":", " ", 1).partition(" ")
            if not reason.strip():
                raise UsageError(
                    f"{path}:{number}: {clause} has no reason (write "
                    f"'{clause}: why it is expected to fail')"
                )
            entries.append((clause.strip(), reason.strip().lstrip("-").strip()))
    else:
        if isinstance(data, dict) and "expected_failures" in data:
            data = data["expected_failures"]
        if isinstance(data, dict):
            entries = list(data.items())
        elif isinstance(data, list) and all(isinstance(item, dict) for item in data):
            entries = [(item.get("id", item.get("clause")), item.get("reason")) for item in data]
        else:
            raise UsageError(
                f"{path}: expected a JSON object of clause -> reason, or a list "
                'of {"id", "reason"} objects'
            )
    reasons: dict[str, str] = {}
    for clause, reason in entries:
        if not isinstance(clause, str) or not isinstance(reason, str) or not reason.strip():
            raise UsageError(
                f"{path}: every entry needs a clause ID and a reason; got {clause!r}: {reason!r}"
            )
        reasons[clause] = reason.strip()
    return reasons


def _target(args: argparse.Namespace) -> tuple[Any, ToolRegistry | None, str]:
    if args.target is None:
        if args.registry is not None:
            raise UsageError("--registry needs an executor target (module:attr)")
        return RegistryExecutor, None, "polyloop:RegistryExecutor"
    found = resolve(args.target)
    name = args.target
    if args.registry is not None:
        registry = resolve(args.registry)
        if not isinstance(registry, ToolRegistry):
            raise UsageError(f"{args.registry} is a {type(registry).__name__}, not a ToolRegistry")
        if isinstance(found, type) or not _executes(found):
            raise UsageError(
                f"{args.target} is not an executor instance; with --registry "
                "the target is the executor serving that registry (black-box)"
            )
        return found, registry, f"{name} --registry {args.registry}"
    if not isinstance(found, type) and _executes(found):
        registry = getattr(found, "registry", None)
        if not isinstance(registry, ToolRegistry):
            raise UsageError(
                f"{args.target} is an executor instance: give the registry it "
                "serves with --registry module:attr (black-box), or name a "
                "factory instead"
            )
        return found, registry, name
    if not callable(found):
        raise UsageError(
            f"{args.target} is a {type(found).__name__}: name a factory "
            "Callable[[ToolRegistry], ActionExecutor] or an executor instance"
        )
    return found, None, name


def _certify_report(args: argparse.Namespace, run: Any, seed: int) -> Report:
    """The parent's report of a supervised run, its results in contract order."""
    order = {clause: index for index, clause in enumerate(CERTIFIABLE)}  # contract order
    results = tuple(sorted(run.results, key=lambda r: order[r.id]))
    return Report(
        kit_version=__version__,
        contract_version=CONTRACT_VERSION,
        target=run.name,
        level=args.level,
        profile=args.profile,
        seed=seed,
        python=platform.python_version(),
        results=results,
        mode=run.mode,
        subject=run.subject,
        through_one_call_batches=_through(run.subject, (r.id for r in results)),
    )


def _run_certify(args: argparse.Namespace) -> int:
    """Certify in a child process watched by this one (`conformance.cli.supervise`): this
    process imports nothing of the target; it owns stdout/stderr, the report and the clock."""
    from conformance.cli.supervise import certify_in_child

    if args.target is None and args.registry is not None:
        raise UsageError("--registry needs an executor target (module:attr)")
    reasons = load_expected_failures(args.expected_failures) if args.expected_failures else None
    only = _clause_ids(args.only, "certify", CERTIFIABLE)
    try:
        # The child narrows this to the subject it finds (this process never imports it)
        selected = select_clauses(args.level, only, *(() if only is None else (ANY,)))
        seed, checked = _checked_arguments(
            args.profile, args.deadline, _campaign_seed(args.seed, args.database), reasons
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_ci_paths(args)
    name = args.target or "polyloop:RegistryExecutor"
    line = _ProgressLine()

    def ready(name: str, mode: str) -> None:
        line.say(
            f"certifying {name} ({mode}), level {args.level}, profile {args.profile}"
            + (f", seed {args.seed}" if args.seed is not None else "")
        )

    request = {
        "command": "certify",
        "target": args.target,
        "registry": args.registry,
        "level": args.level,
        "profile": args.profile,
        "seed": seed,
        "replay": args.seed is None,
        "reasons": checked,
        "deadline": args.deadline,
        "database": args.database,
        "fail_fast": args.fail_fast,
        "examples": args.examples,
        "only_given": only is not None,
        "share": args.budget is not None,
    }
    run = certify_in_child(
        request,
        selected,
        name=name,
        timeout=args.timeout,
        budget=args.budget,
        ready=ready,
        started=lambda clause, index, total: line.start(f"[{index:>2}/{total}] {clause:<4} ... "),
        finished=lambda result, index, total: line.finish(
            f"[{index:>2}/{total}] {result.id:<4} ... {result.status} "
            f"({result.examples} examples, {result.seconds:.1f}s)"
        ),
    )
    if run.problem is not None and (run.mode == "usage" or not run.results):
        raise UsageError(run.problem)
    report = _certify_report(args, run, seed)
    _write_reports(
        args,
        report.to_json(),
        lambda: _text_report(report, show_all=args.show_output),
        lambda: certify_cases(report, **_located(run.where)),
        f"polyloop-conformance certify {name}",
        indent=2,
    )
    if run.problem is not None:
        return _usage_error(run.problem)
    return report.exit_status(allow_skips=args.allow_skips)


def _add_certify_command(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "certify",
        help="certify an action executor against the contract",
        description="Certify an action executor against the polyloop tool contract. With no "
        "target, certifies polyloop's own RegistryExecutor.",
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="module:factory",
        help="a factory Callable[[ToolRegistry], ActionExecutor] (white-box), "
        "or an executor instance with --registry (black-box)",
    )
    parser.add_argument(
        "--registry", metavar="module:attr", help="the ToolRegistry a black-box executor serves"
    )
    parser.add_argument(
        "--level",
        choices=LEVELS,
        default="strict",
        help="core: design 0008's clauses; strict (default): plus hardening",
    )
    _add_profile(parser, DEFAULT_PROFILE, f"Hypothesis settings (default {DEFAULT_PROFILE})")
    _add_seed(parser, "reproduce a run (default: 0 for ci, random otherwise, shown in the report)")
    _add_only(parser, "E4,V1")
    _add_flags(parser, "--examples")
    parser.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="clauses known to fail, each with a reason; one that passes "
        "fails the run, so the list only shrinks",
    )
    _add_flags(parser, "--json")
    _add_deadline(parser, EXECUTE_DEADLINE, "execute call")
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop at the first failing clause (the rest are reported skipped)",
    )
    parser.add_argument(
        "--database",
        metavar="DIR",
        help="keep every counterexample in this Hypothesis example database and replay them "
        "first next time; without --seed each run then takes a fresh random seed (reported), "
        "with --seed it reproduces that run exactly",
    )
    _add_flags(parser, "--allow-skips")
    _add_ci_outputs(parser, "clause")
    _add_flags(parser, "--timeout", "--budget", "--show-output")
    parser.set_defaults(func=_command(_outside_cwd(_run_certify)))


COMMANDS: tuple[Callable[[Any], Any], ...] = ()
"""Set below: the function registering each subcommand, in `--help` order."""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_PROG,
        description="The polyloop conformance kit.",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{_PROG} {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="command")
    subparsers.required = True
    for register in COMMANDS:
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        with _terminated_on_sigterm():
            status: int = args.func(args)
        return status
    except UsageError as exc:
        return _usage_error(str(exc))
    except OutputError as exc:
        _usage_error(str(exc))
        return OUTPUT_ERROR
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except _Terminated:
        print(f"{_PROG}: terminated", file=sys.stderr)
        return 143


class _Terminated(BaseException):
    """SIGTERM arrived: unwind (killing the child process's group on the way), exit 143."""


@contextlib.contextmanager
def _terminated_on_sigterm() -> Iterator[None]:
    """While a command runs, SIGTERM unwinds like Ctrl-C does, so the child process and
    everything the target forked are killed rather than orphaned (only in the main thread,
    where Python lets a handler be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _usage_error(message: str) -> int:
    try:
        print(f"{_PROG}: error: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr itself may be the full device
        drop_stderr()
    return 2


def _command(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`run` with the shared convention: a `UsageError` is one line on stderr and exit 2."""

    def command(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except UsageError as exc:
            return _usage_error(str(exc))
        except OutputError as exc:
            _usage_error(str(exc))
            return OUTPUT_ERROR

    return command


# --- check-tools ---------------------------------------------------------------------------------


def _tools_target(target: str) -> object:
    """A JSON file of tool definitions, or ``module:attr`` naming tools or a zero-argument
    factory of them."""
    from conformance.tools import load_tool_file

    if target.endswith(".json") or Path(target).is_file():
        try:
            return load_tool_file(target)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read {target}: {exc}") from None
    value = resolve(
        target,
        what="module:attr (a ToolRegistry, ToolSpec or iterable of specs) or a path to a JSON "
        "file of tool schemas",
    )
    if callable(value) and not isinstance(value, (ToolRegistry, ToolSpec, type)):
        try:
            value = value()  # a zero-argument factory such as make_registry
        except Exception as exc:
            raise UsageError(f"calling {target}() failed: {describe_exception(exc)}") from None
    return value


def _tools_database(path: str | None) -> ExampleDatabase | None:
    """No example database unless ``--database DIR`` asks for one, so a check of someone's
    tools leaves no ``.hypothesis/`` behind in the current directory."""
    if path is None:
        return None
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(path)


def _tool_clause_ids() -> tuple[str, ...]:
    from conformance.tools.report import CLAUSE_IDS

    return tuple(CLAUSE_IDS)


def _run_check_tools(args: argparse.Namespace) -> int:
    """check-tools one tool at a time in a child process watched by this one: a tool whose
    checks hang (a ReDoS pattern, a huge enum) costs that tool, never the run."""
    from conformance.cli.supervise import check_tools_in_child
    from conformance.tools.api import select_tool_clauses
    from conformance.tools.report import ToolCheckReport

    only = _clause_ids(args.only, "check-tools", _tool_clause_ids())
    try:
        chosen = select_tool_clauses(only)
    except ValueError as exc:
        raise UsageError(describe_exception(exc)) from None
    _check_ci_paths(args)
    started = time.monotonic()
    request = {
        "command": "check-tools",
        "target": args.target,
        "examples": args.examples,
        "deadline": args.deadline,
        "seed": args.seed,
        "profile": args.profile,
        "replay": args.replay,
        "only": only,
        "database": args.database,
        "fail_on_raise": args.fail_on_raise,
    }
    run = check_tools_in_child(
        request,
        only=chosen,
        tool_limit=args.tool_timeout,
        timeout=args.timeout,
        progress=None if args.quiet else lambda line: _progress(escape_name(line)),
    )
    if run.problem is not None and (run.usage or not run.reports):
        raise UsageError(run.problem)
    report = ToolCheckReport(
        target=args.target,
        tools=tuple(run.reports),
        examples=run.examples,
        deadline=run.deadline,
        seed=args.seed,
        seconds=time.monotonic() - started,
    )
    gave_up = "".join(
        f"\ngave up on tool {_printable(label)!r} after {args.tool_timeout:g}s"
        for label in run.gave_up
    )
    _write_reports(
        args,
        report.to_json(),
        lambda: report.to_text(verbose=args.verbose) + gave_up,
        lambda: tool_cases(report, **_located(_tools_where(args.target))),
        f"polyloop-conformance check-tools {args.target}",
    )
    if run.problem is not None:
        return _usage_error(run.problem)
    return max(report.exit_status(), 1 if run.gave_up else 0)


def add_check_tools_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `check-tools` on a `parser.add_subparsers()` object."""
    from conformance.tools.engine import DEFAULT_EXAMPLES

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check-tools",
        help="check tool definitions against H1-H6 (tool authors' checks)",
        description=(
            "Check tools against the contract's tool authors' clauses H1-H6. TARGET is "
            "module:attr naming a ToolRegistry, a ToolSpec, an iterable of specs or a "
            "zero-argument function returning one, or a JSON file of tool schemas in MCP "
            "(inputSchema) or OpenAI/BFCL (parameters) form. H4 (and H6 with --replay) call "
            "each tool's real handler on generated arguments: for tools with side effects, "
            "point TARGET at the same specs with stub handlers (docs/tool-authors.md) or use "
            "--examples 0. Exit 0: every tool passed; 1: a finding; 2: usage or import error."
        ),
    )
    parser.add_argument("target", metavar="TARGET", help="module:attr or a .json file")
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        help=f"generated calls per tool for H4 (default {DEFAULT_EXAMPLES}; 0: schema checks only)",
    )
    _add_deadline(parser, HANDLER_DEADLINE, "handler call")
    _add_seed(parser, "Hypothesis seed, to reproduce a run")
    _add_profile(parser, None, "kit profile to take Hypothesis settings from")
    parser.add_argument("--replay", action="store_true", help="also run the opt-in H6 replay check")
    _add_flags(parser, "--fail-on-raise")
    _add_only(parser, "H1,H2")
    _add_flags(parser, "--json")
    parser.add_argument("--verbose", "-v", action="store_true", help="list passing tools too")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.add_argument(
        "--database",
        metavar="DIR",
        help="keep a Hypothesis example database in DIR (failing examples are replayed first "
        "next time); by default none is kept",
    )
    _add_ci_outputs(parser, "tool and clause")
    _add_flags(parser, "--tool-timeout", "--timeout")
    parser.set_defaults(func=_command(_outside_cwd(_run_check_tools)))
    return parser


# --- catalog -------------------------------------------------------------------------------------


def _run_catalog(args: argparse.Namespace) -> int:
    from conformance.docs import catalog_json, catalog_text

    path = "-" if args.json is True else args.json
    _emit(path, catalog_json(), catalog_text)
    return 0


def add_catalog_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `catalog` on a `parser.add_subparsers()` object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "catalog",
        help="list every contract clause (ID, level, title, who checks it)",
        description="List every clause of the polyloop tool contract.",
    )
    parser.add_argument(
        "--json",
        metavar="PATH",
        nargs="?",
        const=True,
        help="print the catalog as JSON (or write it to PATH; '-': stdout)",
    )
    parser.set_defaults(func=_command(_run_catalog))
    return parser


COMMANDS = (_add_certify_command, add_check_tools_command, add_catalog_command)
