"""The operations: ``check``, ``update`` and the pytest one-liner ``assert_api_stable``.

A relative baseline path means the same thing everywhere: relative to the **current working
directory** (the CLI's convention, and what its messages print). A test that must pass from any
directory passes an absolute path, e.g. ``Path(__file__).with_name("api.json")``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from metatests.errors import BaselineError, MetatestsError, PackageNotFoundError
from metatests.fileformat import (
    FORMAT,
    AcceptedBreak,
    Baseline,
    RecordedClass,
    clean_stale_temporaries,
    dumps_baseline,
    load_baseline,
    refuse_read_only,
    write_baseline,
)
from metatests.isolate import DEFAULT_TIMEOUT, scan_package
from metatests.report import Report
from metatests.rules import compare

__all__ = ["UpdateResult", "assert_api_stable", "check_package", "update_baseline"]


@dataclass(frozen=True, kw_only=True)
class UpdateResult:
    report: Report
    written: bool
    """False when the check failed (nothing recorded) or the file was already up to date."""


def _missing(package: str, path: Path) -> BaselineError:
    return BaselineError(
        f"baseline {path} does not exist; create it with"
        f" `polyloop-metatests update {package} --baseline {path}`"
    )


def _checked_package(baseline: Baseline, package: str, path: Path) -> None:
    if baseline.package != package:
        raise BaselineError(
            f"baseline {path} records package {baseline.package!r}, not {package!r}"
        )


def _package_exists(package: str, path: Path) -> None:
    """Fail with the right hint before suggesting to ``update`` a package that is not there."""
    import importlib.util

    top = package.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise PackageNotFoundError(
            f"no importable package named {top!r} (is it installed or on sys.path?);"
            f" nothing to check against {path}"
        )


def check_package(
    package: str,
    baseline: str | os.PathLike[str],
    *,
    exclude: Sequence[str] = (),
    max_positional: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Report:
    """Scan ``package`` and judge it against the baseline file (which must exist).

    ``exclude`` adds module patterns to those the baseline records. ``max_positional``, when
    given, must equal the baseline's: the threshold is recorded so that every run agrees.
    """
    path = Path(baseline)
    if not path.exists():
        _package_exists(package, path)
        raise _missing(package, path)
    clean_stale_temporaries(path)
    recorded = load_baseline(path)
    _checked_package(recorded, package, path)
    if max_positional is not None and max_positional != recorded.max_positional:
        raise BaselineError(
            f"baseline {path} records max_positional {recorded.max_positional}, not"
            f" {max_positional}; change it with"
            f" `polyloop-metatests update {package} --baseline {path} --max-positional"
            f" {max_positional}`"
        )
    patterns = list(dict.fromkeys([*recorded.exclude, *exclude]))
    scan = scan_package(package, exclude=patterns, timeout=timeout)
    extra = [p for p in dict.fromkeys(exclude) if p not in recorded.exclude]
    return compare(scan, recorded, baseline_path=str(path), extra_exclude=extra)


def update_baseline(
    package: str,
    baseline: str | os.PathLike[str],
    *,
    exclude: Mapping[str, str] | None = None,
    max_positional: int | None = None,
    allow_existing: str | None = None,
    accept_break: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> UpdateResult:
    """Record the package's current API, unless that would hide a problem.

    Refuses (writes nothing) whenever ``check`` would fail: the baseline only ever records
    compatible evolutions, or breaking ones the major version bump announces. ``exclude``
    (pattern -> reason) and ``max_positional`` are recorded in the file. ``allow_existing``
    adopts the guard on a package that already has positional dataclasses: each class M1
    rejects today goes into the allowlist with that reason. Otherwise the allowlist is kept as
    written; entries are removed by hand. ``accept_break`` (class -> reason) lets the breaking
    changes of those classes be recorded without a breaking version step (a 0.x library's
    patch release, say); each is added to the baseline's ``accepted`` history with its reason
    and the version, and naming a class without a breaking change is refused.
    """
    path = Path(baseline)
    for pattern, reason in (exclude or {}).items():
        if not reason.strip():
            raise MetatestsError(
                f"--exclude {pattern} needs a reason to be recorded: --exclude '{pattern}=why'"
            )
    if allow_existing is not None and not allow_existing.strip():
        raise MetatestsError(
            "--allow-existing needs a reason, e.g. --allow-existing 'public since 1.0'"
        )
    for name, reason in (accept_break or {}).items():
        if not reason.strip():
            raise MetatestsError(
                f"--accept-break {name} needs a reason to be recorded: --accept-break '{name}=why'"
            )
    if max_positional is not None and max_positional < 0:
        raise MetatestsError(f"--max-positional must be 0 or more, not {max_positional}")
    if path.exists():
        clean_stale_temporaries(path)
        recorded = load_baseline(path)
        _checked_package(recorded, package, path)
        refuse_read_only(path)
    else:
        _package_exists(package, path)
        recorded = Baseline(package=package, version=None)
    recorded = replace(
        recorded,
        exclude={**recorded.exclude, **(exclude or {})},
        max_positional=recorded.max_positional if max_positional is None else max_positional,
    )
    scan = scan_package(package, exclude=list(recorded.exclude), timeout=timeout)
    accept = dict(accept_break or {})

    def judge(baseline: Baseline) -> Report:
        return compare(scan, baseline, baseline_path=str(path), accept=accept, updating=True)

    report = judge(recorded)
    if allow_existing is not None:
        rejected = {f.subject for f in report.failures if f.clause == "M1"}
        if rejected:
            recorded = replace(
                recorded,
                allowlist={**recorded.allowlist, **dict.fromkeys(sorted(rejected), allow_existing)},
            )
            report = judge(recorded)
    _check_accepted(report, accept, path)
    if not report.ok:
        return UpdateResult(report=report, written=False)
    new = replace(
        recorded,
        version=scan.version,
        classes={
            name: RecordedClass(
                parameters=info.parameters,
                fields=info.fields,
                match_args=info.match_args,
                judged=info.judged,
                outer=info.outer,
            )
            for name, info in scan.classes.items()
        },
        accepted=(
            *recorded.accepted,
            *(
                AcceptedBreak(subject=name, reason=reason, version=scan.version)
                for name, reason in sorted(accept.items())
            ),
        ),
        format=FORMAT,
    )
    text = dumps_baseline(new)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text(encoding="utf-8") == text:
            return UpdateResult(report=report, written=False)
    write_baseline(path, new)
    return UpdateResult(report=report, written=True)


def _check_accepted(report: Report, accept: Mapping[str, str], path: Path) -> None:
    """An accepted break must name a class with a breaking change: a typo would otherwise be
    recorded as a reason for nothing, and the real break refused without saying why."""
    breaking = {f.subject for f in report.findings if f.kind == "breaking"}
    unknown = sorted(set(accept) - breaking)
    if unknown:
        listed = ", ".join(unknown)
        candidates = ", ".join(sorted(breaking)[:5]) or "none"
        raise MetatestsError(
            f"--accept-break {listed}: no breaking change of it against {path} to accept"
            f" (classes with breaking changes: {candidates})"
        )


def assert_api_stable(
    package: str,
    *,
    baseline: str | os.PathLike[str],
    exclude: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
) -> Report:
    """One-line pytest guard: raise AssertionError with the readable report when M1–M5 fail.

    A relative ``baseline`` is resolved against the current working directory, exactly as the
    CLI does. Returns the report (with its notes) when the check passes. A failure points at
    the caller's test: pytest hides this frame (``__tracebackhide__``), and the message is the
    report itself, raised outside any ``except`` so no chained traceback of the guard shows.
    """
    __tracebackhide__ = True
    try:
        report = check_package(package, baseline, exclude=exclude, timeout=timeout)
    except MetatestsError as exc:
        error: str | None = str(exc)
    else:
        error = None
    if error is not None:
        raise AssertionError(error)
    if not report.ok:
        raise AssertionError("API evolution check failed:\n" + report.render())
    return report
