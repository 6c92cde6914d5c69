"""Read, compare and atomically write the committed API baseline (M1–M5).

The baseline is JSON with sorted keys and one field per object, so a change to the API shows
up as a small, reviewable diff. It records the package name and version, the allowlist of
classes that may stay positional (each with a reason), and per public dataclass its ordered
fields (name, has_default, kw_only) and ``__match_args__``.

Compatibility rules, and why:

* Appending a field with a default is the one compatible change to a class: every existing call
  still works. Anything else touching recorded fields (insert, remove, rename, reorder, drop a
  default, flip keyword-only) is *breaking*: it fails unless the package's major version is
  higher than the baseline's, in which case it is reported as allowed and ``update`` records it.
* ``__match_args__`` may only grow at the end (``case C(a)`` still matches when ``C`` gains a
  positional field with a default); any other change breaks positional ``case`` patterns.
  Keyword-only fields never appear in it, so appending one leaves it unchanged.
* M1 (keyword-only), M2 (stale or unknown allowlist entries) and M4 (import failures, empty
  scan) are failures no version bump excuses.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from metatests.scan import (
    ClassInfo,
    FieldInfo,
    MetatestsError,
    Scan,
    major_version,
    scan_package,
)

__all__ = [
    "FORMAT",
    "Baseline",
    "BaselineError",
    "Finding",
    "MetatestsError",
    "RecordedClass",
    "Report",
    "UpdateResult",
    "assert_api_stable",
    "check_package",
    "compare",
    "dumps_baseline",
    "load_baseline",
    "update_baseline",
    "write_baseline",
]

FORMAT = 1
"""Version of the baseline file layout, recorded in the file so a future layout can migrate."""

Kind = Literal["failure", "breaking", "note"]

_BUMP = "bump the major version to make this change"
_RECORD = "run `update` to record it"


class BaselineError(MetatestsError):
    """The baseline file is missing, malformed, or belongs to another package."""


@dataclass(frozen=True, kw_only=True)
class RecordedClass:
    fields: tuple[FieldInfo, ...]
    match_args: tuple[str, ...] | None


@dataclass(frozen=True, kw_only=True)
class Baseline:
    package: str
    version: str | None
    allowlist: dict[str, str] = field(default_factory=dict)
    """Qualified class name -> the reason it may stay positional."""
    classes: dict[str, RecordedClass] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One verdict line: which clause, what changed where, and how to fix it."""

    clause: str
    code: str
    """Stable machine name of the change, e.g. ``field-inserted``; tests and tools match on it."""
    subject: str
    """The class (or module, or allowlist entry) concerned."""
    field: str | None = None
    change: str
    fix: str
    kind: Kind

    def render(self, *, allowed: bool = False, recorded: bool = False) -> str:
        where = self.subject if self.field is None else f"{self.subject}, field `{self.field}`"
        if self.kind == "note":
            return f"[{self.clause}] {where}: {self.change}" + (
                "" if recorded else f" — {self.fix}"
            )
        if allowed:  # listed under a heading that says why it passes
            return f"[{self.clause}] {where}: {self.change}"
        fix = f"{self.fix}, or {_BUMP}" if self.kind == "breaking" else self.fix
        return f"[{self.clause}] {where}: {self.change} — fix: {fix}"


@dataclass(frozen=True, kw_only=True)
class Report:
    package: str
    version: str | None
    baseline_path: str
    baseline_version: str | None
    major_bump: bool
    """The package's major version is higher than the baseline's: breaking changes allowed."""
    classes: int
    findings: tuple[Finding, ...]

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(
            f
            for f in self.findings
            if f.kind == "failure" or (f.kind == "breaking" and not self.major_bump)
        )

    @property
    def allowed(self) -> tuple[Finding, ...]:
        """Breaking changes the major version bump permits."""
        return tuple(f for f in self.findings if f.kind == "breaking" and self.major_bump)

    @property
    def notes(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == "note")

    @property
    def ok(self) -> bool:
        return not self.failures

    def render(self, *, recorded: bool = False) -> str:
        """The report as text; ``recorded=True`` words it for an ``update`` that wrote the file."""
        failures = self.failures
        if failures:
            status = f"FAILED, {len(failures)} problem{'s' * (len(failures) != 1)}"
        else:
            status = "OK"
        at = f"recorded at {self.baseline_version}" if self.baseline_version else "no version"
        lines = [
            f"{self.package} {self.version or '(no version)'}: {status}"
            f" ({self.classes} public dataclass{'es' * (self.classes != 1)};"
            f" baseline {self.baseline_path}, {at})"
        ]
        lines += [f"  {f.render()}" for f in failures]
        if self.allowed:
            bump = f"the major version bump ({self.baseline_version} -> {self.version})"
            lines.append(
                f"breaking changes recorded, allowed by {bump}:"
                if recorded
                else f"allowed by {bump}; `update` records them:"
            )
            lines += [f"  {f.render(allowed=True)}" for f in self.allowed]
        notes = [f for f in self.notes if f.code != "class-added"]
        added = [f for f in self.notes if f.code == "class-added"]
        if len(added) > 3:  # a first run lists the whole package: one line, not a page
            names = ", ".join(f.subject for f in added)
            tail = "" if recorded else ", not in the baseline yet — run `update` to record them"
            lines_added = [f"  [M3] {len(added)} new public dataclasses{tail}: {names}"]
        else:
            lines_added = [f"  {f.render(recorded=recorded)}" for f in added]
        if notes or added:
            lines.append("recorded:" if recorded else "notes:")
            lines += [f"  {f.render(recorded=recorded)}" for f in notes] + lines_added
        return "\n".join(lines)


@dataclass(frozen=True, kw_only=True)
class UpdateResult:
    report: Report
    written: bool
    """False when the check failed (nothing recorded) or the file was already up to date."""


# -- reading and writing ------------------------------------------------------------------------


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Parse a baseline file; every problem becomes a one-line BaselineError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"malformed baseline {path}: not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
        ) from None
    try:
        return _parse(data)
    except _Malformed as exc:
        raise BaselineError(f"malformed baseline {path}: {exc}") from None


def dumps_baseline(baseline: Baseline) -> str:
    """The file's exact text: sorted keys, two-space indent, one field per line, final newline."""
    data = {
        "format": FORMAT,
        "package": baseline.package,
        "version": baseline.version,
        "allowlist": dict(baseline.allowlist),
        "classes": {
            name: {
                "fields": [
                    {"name": f.name, "has_default": f.has_default, "kw_only": f.kw_only}
                    for f in recorded.fields
                ],
                "match_args": None if recorded.match_args is None else list(recorded.match_args),
            }
            for name, recorded in baseline.classes.items()
        },
    }
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    text = _FIELD_OBJECT.sub(r'{"has_default": \1, "kw_only": \2, "name": \3}', text)
    return (
        _MATCH_ARGS.sub(
            lambda m: f'"match_args": {json.dumps(json.loads(m[1]), ensure_ascii=False)}', text
        )
        + "\n"
    )


# One field per line, so adding, renaming or reordering a field is a one-line diff. Raw newlines
# never occur inside JSON strings, so these multi-line patterns only ever match structure.
_STRING = r'"(?:[^"\\]|\\.)*"'
_FIELD_OBJECT = re.compile(
    r'\{\n\s*"has_default": (true|false),\n\s*"kw_only": (true|false),'
    rf"\n\s*\"name\": ({_STRING})\n\s*\}}"
)
_MATCH_ARGS = re.compile(rf'"match_args": (\[\n(?:\s*{_STRING},?\n)+\s*\])')


def write_baseline(path: str | os.PathLike[str], baseline: Baseline) -> None:
    """Replace the file atomically: a crash or error mid-write leaves the old file intact.

    The text goes to a temporary file in the same directory (so ``os.replace`` is a rename on
    one filesystem), is flushed to disk, and only then replaces the baseline.
    """
    path = Path(path)
    text = dumps_baseline(baseline)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _Malformed(Exception):
    pass


def _parse(data: Any) -> Baseline:
    obj = _object(data, "the top level", {"format", "package", "version", "allowlist", "classes"})
    if obj["format"] != FORMAT or isinstance(obj["format"], bool):
        raise _Malformed(f"'format' is {obj['format']!r}; this metatests reads format {FORMAT}")
    package = _string(obj["package"], "'package'")
    version = obj["version"]
    if version is not None:
        version = _string(version, "'version'")
    allowlist: dict[str, str] = {}
    for name, reason in _object(obj["allowlist"], "'allowlist'", None).items():
        reason = _string(reason, f"the reason of allowlist entry {name!r}")
        if not reason.strip():
            raise _Malformed(f"allowlist entry {name!r} has an empty reason; say why it is there")
        allowlist[name] = reason
    classes: dict[str, RecordedClass] = {}
    for name, entry in _object(obj["classes"], "'classes'", None).items():
        where = f"class {name!r}"
        recorded = _object(entry, where, {"fields", "match_args"})
        raw_fields = recorded["fields"]
        if not isinstance(raw_fields, list):
            raise _Malformed(f"{where}: 'fields' must be a list")
        fields = []
        for i, raw in enumerate(raw_fields):
            item = _object(raw, f"{where} field {i}", {"name", "has_default", "kw_only"})
            fields.append(
                FieldInfo(
                    name=_string(item["name"], f"{where} field {i} 'name'"),
                    has_default=_bool(item["has_default"], f"{where} field {i} 'has_default'"),
                    kw_only=_bool(item["kw_only"], f"{where} field {i} 'kw_only'"),
                )
            )
        match_args = recorded["match_args"]
        if match_args is not None:
            if not isinstance(match_args, list):
                raise _Malformed(f"{where}: 'match_args' must be a list of strings or null")
            match_args = tuple(_string(a, f"{where} 'match_args' item") for a in match_args)
        classes[name] = RecordedClass(fields=tuple(fields), match_args=match_args)
    return Baseline(package=package, version=version, allowlist=allowlist, classes=classes)


def _object(value: Any, where: str, keys: set[str] | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed(f"{where} must be a JSON object")
    if keys is not None:
        missing, unknown = sorted(keys - value.keys()), sorted(value.keys() - keys)
        if missing:
            raise _Malformed(f"{where} lacks {', '.join(map(repr, missing))}")
        if unknown:
            raise _Malformed(f"{where} has unknown {', '.join(map(repr, unknown))}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"{where} must be a string, not {json.dumps(value)}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Malformed(f"{where} must be true or false, not {json.dumps(value)}")
    return value


# -- comparing ----------------------------------------------------------------------------------


def compare(scan: Scan, baseline: Baseline, *, baseline_path: str = "") -> Report:
    """Judge a scan against a baseline; pure, so tests can feed it hand-made baselines."""
    current, recorded = major_version(scan.version), major_version(baseline.version)
    bump = current is not None and recorded is not None and current > recorded
    complete = not scan.import_failures  # "missing" means nothing while a module is unreadable
    findings: list[Finding] = []

    for failure in scan.import_failures:
        findings.append(
            Finding(
                clause="M4",
                code="import-failed",
                subject=failure.module,
                change=f"failed to import ({failure.error})",
                fix="make it importable (until every module imports, removed classes and"
                " unknown allowlist entries are not judged)",
                kind="failure",
            )
        )
    if not scan.classes:
        findings.append(
            Finding(
                clause="M4",
                code="empty-scan",
                subject=scan.package,
                change="no public dataclass found (an empty scan guards nothing)",
                fix="check the package name, and that its modules import",
                kind="failure",
            )
        )

    for name, info in scan.classes.items():
        if name not in baseline.allowlist:
            findings += _keyword_only(info)
    findings += _allowlist(scan, baseline, complete=complete)

    for name, old in baseline.classes.items():
        now = scan.classes.get(name)
        if now is None:
            if complete:
                findings.append(
                    Finding(
                        clause="M3",
                        code="class-removed",
                        subject=name,
                        change="public dataclass was removed (or is no longer public)",
                        fix=f"restore `{name}`",
                        kind="breaking",
                    )
                )
            continue
        findings += _fields(name, old.fields, now.fields)
        findings += _match_args(name, old.match_args, now.match_args)
    for name in scan.classes.keys() - baseline.classes.keys():
        findings.append(
            Finding(
                clause="M3",
                code="class-added",
                subject=name,
                change="new public dataclass",
                fix=_RECORD,
                kind="note",
            )
        )

    return Report(
        package=scan.package,
        version=scan.version,
        baseline_path=baseline_path,
        baseline_version=baseline.version,
        major_bump=bump,
        classes=len(scan.classes),
        findings=tuple(sorted(findings, key=_order)),
    )


_CLAUSES = ("M4", "M1", "M2", "M3", "M5")


def _order(finding: Finding) -> tuple[int, str, int]:
    return (_CLAUSES.index(finding.clause), finding.subject, 0 if finding.field is None else 1)


def _ticks(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "nothing"


def _keyword_only(info: ClassInfo) -> list[Finding]:
    if info.signature_error is not None:
        return [
            Finding(
                clause="M1",
                code="signature-unreadable",
                subject=info.name,
                change=f"its constructor signature cannot be read ({info.signature_error})",
                fix="give it an inspectable `__init__`, or list it in the baseline's allowlist"
                " with a reason",
                kind="failure",
            )
        ]
    if not info.positional:
        return []
    declared = {f.name: f.declared_in for f in info.fields}
    inherited_from = {
        p: declared[p] for p in info.positional if declared.get(p, info.name) != info.name
    }
    inherited = sorted(set(inherited_from.values()))
    detail = "".join(f" (`{p}` inherited from `{c}`)" for p, c in inherited_from.items())
    if inherited:
        # kw_only=True on a subclass leaves the base's fields positional: the base must change.
        fix = f"make {_ticks(inherited)} keyword-only too (`@dataclass(kw_only=True)`)"
    else:
        fix = "declare it `@dataclass(kw_only=True)` (or put `_: KW_ONLY` before its first field)"
    plural = "s" if len(info.positional) > 1 else ""
    return [
        Finding(
            clause="M1",
            code="positional",
            subject=info.name,
            change=f"takes positional parameter{plural} {_ticks(info.positional)}{detail}",
            fix=fix + ", or list it in the baseline's allowlist with a reason",
            kind="failure",
        )
    ]


def _allowlist(scan: Scan, baseline: Baseline, *, complete: bool) -> list[Finding]:
    findings = []
    for name in baseline.allowlist:
        info = scan.classes.get(name)
        if info is None:
            if complete:
                findings.append(
                    Finding(
                        clause="M2",
                        code="allowlist-unknown",
                        subject=name,
                        change=f"allowlist entry names no public dataclass of {scan.package}",
                        fix="remove the unknown allowlist entry (or correct its name)",
                        kind="failure",
                    )
                )
        elif not info.positional and info.signature_error is None:
            findings.append(
                Finding(
                    clause="M2",
                    code="allowlist-stale",
                    subject=name,
                    change="allowlisted, but it is keyword-only now",
                    fix="remove the stale allowlist entry",
                    kind="failure",
                )
            )
    return findings


def _fields(name: str, old: Sequence[FieldInfo], new: Sequence[FieldInfo]) -> list[Finding]:
    old_names, new_names = [f.name for f in old], [f.name for f in new]
    old_set, new_set = set(old_names), set(new_names)
    by_new = {f.name: f for f in new}
    findings: list[Finding] = []

    def breaking(code: str, field_name: str | None, change: str, fix: str) -> None:
        findings.append(
            Finding(
                clause="M3",
                code=code,
                subject=name,
                field=field_name,
                change=change,
                fix=fix,
                kind="breaking",
            )
        )

    # A recorded field and a new one at the same position, neither found elsewhere: a rename.
    renamed = {
        o: n
        for o, n in zip(old_names, new_names, strict=False)
        if o not in new_set and n not in old_set
    }
    for o, n in renamed.items():
        breaking("field-renamed", o, f"renamed to `{n}`", f"restore the name `{o}`")
    for o in old_names:
        if o not in new_set and o not in renamed:
            breaking("field-removed", o, "removed", f"restore `{o}`")

    survivors = [i for i, n in enumerate(new_names) if n in old_set or n in renamed.values()]
    last = max(survivors, default=-1)
    for i, n in enumerate(new_names):
        if n in old_set or n in renamed.values():
            continue
        if i > last:
            if by_new[n].has_default:
                findings.append(
                    Finding(
                        clause="M3",
                        code="field-appended",
                        subject=name,
                        field=n,
                        change="appended with a default",
                        fix=_RECORD,
                        kind="note",
                    )
                )
            else:
                breaking(
                    "field-appended-without-default",
                    n,
                    "appended without a default (calls that omit it break)",
                    f"append `{n}` with a default",
                )
        else:
            before = next(new_names[j] for j in survivors if j > i)
            breaking(
                "field-inserted",
                n,
                f"inserted in the middle, before `{before}`"
                + (" (with a default)" if by_new[n].has_default else " (without a default)"),
                f"remove it from there and append `{n}` with a default after the last field",
            )

    common_old = [o for o in old_names if o in new_set]
    common_new = [n for n in new_names if n in old_set]
    if common_old != common_new:
        breaking(
            "fields-reordered",
            None,
            f"fields reordered: recorded {_ticks(common_old)}, now {_ticks(common_new)}",
            f"restore the order {_ticks(common_old)}",
        )

    for f in old:
        g = by_new.get(f.name)
        if g is None:
            continue
        if f.has_default and not g.has_default:
            breaking(
                "default-removed", f.name, "lost its default", f"give `{f.name}` its default back"
            )
        elif g.has_default and not f.has_default:
            findings.append(
                Finding(
                    clause="M3",
                    code="default-added",
                    subject=name,
                    field=f.name,
                    change="gained a default",
                    fix=_RECORD,
                    kind="note",
                )
            )
        if f.kw_only != g.kw_only:
            now = "keyword-only" if g.kw_only else "positional"
            was = "positional" if g.kw_only else "keyword-only"
            breaking("kw-only-changed", f.name, f"became {now}", f"make `{f.name}` {was} again")
    return findings


def _match_args(
    name: str, old: tuple[str, ...] | None, new: tuple[str, ...] | None
) -> list[Finding]:
    if old == new:
        return []
    if new is not None and (old is None or new[: len(old)] == old):
        return [
            Finding(
                clause="M5",
                code="match-args-extended",
                subject=name,
                change=f"`__match_args__` grew from {_tuple(old)} to {_tuple(new)}",
                fix=_RECORD,
                kind="note",
            )
        ]
    return [
        Finding(
            clause="M5",
            code="match-args-changed",
            subject=name,
            change=f"`__match_args__` changed from {_tuple(old)} to {_tuple(new)}"
            " (positional `case` patterns break)",
            fix=f"restore `__match_args__` to {_tuple(old)} (it may only grow at the end)",
            kind="breaking",
        )
    ]


def _tuple(value: tuple[str, ...] | None) -> str:
    return "None" if value is None else repr(value)


# -- the operations -----------------------------------------------------------------------------


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


def check_package(package: str, baseline: str | os.PathLike[str]) -> Report:
    """Scan ``package`` and judge it against the baseline file (which must exist)."""
    path = Path(baseline)
    if not path.exists():
        raise _missing(package, path)
    recorded = load_baseline(path)
    _checked_package(recorded, package, path)
    return compare(scan_package(package), recorded, baseline_path=str(path))


def update_baseline(package: str, baseline: str | os.PathLike[str]) -> UpdateResult:
    """Record the package's current API, unless that would hide a problem.

    Refuses (writes nothing) whenever ``check`` would fail: the baseline only ever records
    compatible evolutions, or breaking ones the major version bump announces. The allowlist is
    kept as written; entries are added and removed by hand because each needs a human reason.
    """
    path = Path(baseline)
    if path.exists():
        recorded = load_baseline(path)
        _checked_package(recorded, package, path)
    else:
        recorded = Baseline(package=package, version=None)
    scan = scan_package(package)
    report = compare(scan, recorded, baseline_path=str(path))
    if not report.ok:
        return UpdateResult(report=report, written=False)
    new = Baseline(
        package=package,
        version=scan.version,
        allowlist=dict(recorded.allowlist),
        classes={
            name: RecordedClass(fields=info.fields, match_args=info.match_args)
            for name, info in scan.classes.items()
        },
    )
    text = dumps_baseline(new)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text(encoding="utf-8") == text:
            return UpdateResult(report=report, written=False)
    write_baseline(path, new)
    return UpdateResult(report=report, written=True)


def assert_api_stable(package: str, *, baseline: str | os.PathLike[str]) -> Report:
    """One-line pytest guard: raise AssertionError with the readable report when M1–M5 fail.

    A relative ``baseline`` is resolved against the directory of the calling file, so the test
    passes from any working directory. Returns the report (with its notes) when the check passes.
    """
    path = Path(baseline)
    if not path.is_absolute():
        caller = sys._getframe(1).f_globals.get("__file__")
        if isinstance(caller, str):
            path = Path(caller).resolve().parent / path
    try:
        report = check_package(package, path)
    except MetatestsError as exc:
        raise AssertionError(str(exc)) from None
    if not report.ok:
        raise AssertionError("API evolution check failed: " + report.render())
    return report
