"""``polyloop-conformance`` / ``python -m conformance``.

``certify [module:factory]`` certifies an executor (polyloop's own `RegistryExecutor` when no
target is given); ``check-tools`` and ``catalog`` come from `conformance.toolcheck` and
`conformance.docs`. Exit status: 0 every selected clause passed, 1 a clause failed (or an
expected failure now passes), 2 a usage or import error, reported in one line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from conformance.certify import LEVELS, certify, select_clauses
from conformance.profiles import DEFAULT_PROFILE, PROFILES
from polyloop import RegistryExecutor, ToolRegistry

__all__ = ["UsageError", "load_expected_failures", "main", "resolve"]

_PROG = "polyloop-conformance"


class UsageError(Exception):
    """A problem with what the user asked for: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def resolve(spec: str) -> Any:
    """The object named by ``module:attr`` (attr may be dotted)."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise UsageError(f"{spec!r} is not module:attr (e.g. mypackage.tools:make_executor)")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name!r}: {exc}") from None
    except Exception as exc:
        raise UsageError(f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise UsageError(f"{module_name!r} has no attribute {attribute!r}") from None
    return found


def load_expected_failures(path: str) -> dict[str, str]:
    """Read an expected-failures file: clause ID -> reason.

    JSON: ``{"E4": "reason", ...}``, ``[{"id": "E4", "reason": "..."}]``, or either under an
    ``"expected_failures"`` key. Otherwise one entry per line, ``E4: reason`` (``#`` starts a
    comment). Every entry needs a reason."""
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
            line = raw.split("#", 1)[0].strip()
            if not line:
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
        if isinstance(found, type) or not callable(getattr(found, "execute", None)):
            raise UsageError(
                f"{args.target} is not an executor instance; with --registry "
                "the target is the executor serving that registry (black-box)"
            )
        return found, registry, f"{name} --registry {args.registry}"
    if not isinstance(found, type) and callable(getattr(found, "execute", None)):
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


def _run_certify(args: argparse.Namespace) -> int:
    target, registry, name = _target(args)
    reasons = load_expected_failures(args.expected_failures) if args.expected_failures else None
    only = [part for part in (args.only or "").replace(",", " ").split() if part] or None
    try:
        select_clauses(args.level, only)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    mode = "black-box" if registry is not None else "white-box"
    progress(
        f"certifying {name} ({mode}), level {args.level}, profile {args.profile}"
        + (f", seed {args.seed}" if args.seed is not None else "")
    )
    try:
        report = certify(
            target,
            registry=registry,
            level=args.level,
            profile=args.profile,
            seed=args.seed,
            only=only,
            expected_failures=reasons,
            deadline=args.deadline,
            progress=progress,
            target_name=name,
            database=args.database,
        )
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        text = json.dumps(report.to_json(), indent=2, ensure_ascii=False)
        if args.json == "-":
            print(text)
        else:
            try:
                Path(args.json).write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {args.json!r}: {exc.strerror or exc}") from None
    if args.json != "-":
        print(report.to_text())
    return report.exit_status()


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
    parser.add_argument(
        "--profile",
        choices=tuple(PROFILES),
        default=DEFAULT_PROFILE,
        help=f"Hypothesis settings (default {DEFAULT_PROFILE})",
    )
    parser.add_argument(
        "--seed",
        type=_seed,
        help="reproduce a run (default: 0 for ci, random otherwise, shown in the report)",
    )
    parser.add_argument("--only", metavar="IDS", help="comma-separated clause IDs, e.g. E4,V1")
    parser.add_argument(
        "--expected-failures",
        metavar="FILE",
        help="clauses known to fail, each with a reason; one that passes "
        "fails the run, so the list only shrinks",
    )
    parser.add_argument(
        "--json",
        metavar="PATH",
        help="also write the report as JSON ('-': JSON on stdout instead of text)",
    )
    parser.add_argument(
        "--deadline",
        type=_positive,
        default=5.0,
        metavar="SECONDS",
        help="limit for each execute call (default 5)",
    )
    parser.add_argument(
        "--database",
        metavar="DIR",
        help="a Hypothesis example database shared between runs and workers",
    )
    parser.set_defaults(func=_run_certify)


def _optional_commands(subparsers: Any) -> None:
    registrations: list[Callable[[Any], Any]] = []
    try:
        from conformance.toolcheck import add_check_tools_command
    except ModuleNotFoundError as exc:  # pragma: no cover - until the module lands
        if exc.name != "conformance.toolcheck":
            raise
    else:
        registrations.append(add_check_tools_command)
    try:
        from conformance.docs import add_catalog_command
    except ModuleNotFoundError as exc:  # pragma: no cover - until the module lands
        if exc.name != "conformance.docs":
            raise
    else:
        registrations.append(add_catalog_command)
    for register in registrations:
        register(subparsers)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=_PROG, description="The polyloop conformance kit.")
    subparsers = parser.add_subparsers(dest="command", metavar="command")
    subparsers.required = True
    _add_certify_command(subparsers)
    _optional_commands(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        status: int = args.func(args)
        return status
    except UsageError as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
