"""Verdicts and their text: one ``Finding`` per change, a ``Report`` per check.

The text report is written for a maintainer of a large package: a summary first (classes, counts
per rule, exclusions and where they came from), then the problems, the few individual ones
before the groups. Findings that share a cause are printed as one group: the same change in
many classes deriving from one base is named after that base, and modules failing to import
with the same error are one line. Long lines are folded and long lists cut, each with the count
left out. ``to_json`` (``--format json``, schema ``report.schema.json``) holds every finding.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "BUMP",
    "RECORD",
    "SCHEMA",
    "Finding",
    "Kind",
    "Report",
    "Verdict",
    "group_entries",
    "short_version",
    "template",
]

Kind = Literal["failure", "breaking", "note"]
Verdict = Literal["failure", "allowed", "accepted", "note"]

BUMP = (
    "bump the major version (the minor at 0.x) or accept it: `update --accept-break CLASS=REASON`"
)
RECORD = "run `update` to record it"
SCHEMA = "polyloop-metatests-report/1"
"""The ``schema`` value of the JSON report; ``metatests/report.schema.json`` describes it."""

FOLD_AT = 240
WIDTH = 120
"""A line of the text report longer than ``FOLD_AT`` (a long fix-it, say) is folded at
``WIDTH``; shorter ones stay whole, so that one finding is one line a reader can grep."""

SHOWN = {"failures": 40, "allowed": 15, "notes": 15, "excluded": 8}
"""At most this many entries (single findings or groups) per section of the text report."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One verdict line: which clause, what changed where, and how to fix it."""

    clause: str
    code: str
    """Stable machine name of the change, e.g. ``parameter-inserted``; tests and tools match it."""
    subject: str
    """The class (or module, or allowlist entry) concerned."""
    parameter: str | None = None
    """The constructor parameter concerned, if one."""
    change: str
    fix: str
    kind: Kind
    cause: str | None = None
    """The base class whose change many classes share (set when the report groups them)."""

    def render(self, *, allowed: bool = False, recorded: bool = False) -> str:
        where = (
            self.subject
            if self.parameter is None
            else f"{self.subject}, parameter `{self.parameter}`"
        )
        if self.kind == "note":
            return f"[{self.clause}] {where}: {self.change}" + (
                "" if recorded else f" — {self.fix}"
            )
        if allowed:  # listed under a heading that says why it passes
            return f"[{self.clause}] {where}: {self.change}"
        fix = f"{self.fix}, or {BUMP}" if self.kind == "breaking" else self.fix
        return f"[{self.clause}] {where}: {self.change} — fix: {fix}"


def _fold(line: str) -> list[str]:
    if len(line) <= FOLD_AT:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(
        line,
        width=WIDTH,
        subsequent_indent=indent + "    ",
        break_long_words=True,
        break_on_hyphens=False,
    )


def _names(names: Sequence[str], shown: int = 3) -> str:
    listed = ", ".join(f"`{n}`" for n in names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _pattern(modules: Sequence[str]) -> str:
    """An ``fnmatch`` pattern covering ``modules``: their longest common prefix and ``*``."""
    prefix = modules[0]
    for name in modules[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix if len(modules) == 1 else f"{prefix}*"


_NAMES = re.compile(r"(`[^`]*`|\((?:'[^']*'(?:, )?)*,?\))")


def common(texts: Sequence[str]) -> str:
    """What a group's texts share: names that differ between them become `…` (or (…) for a
    tuple of names), names they all have stay."""
    split = [_NAMES.split(t) for t in dict.fromkeys(texts)]
    if len(split) == 1:
        return texts[0]
    if (
        len({len(parts) for parts in split}) != 1
        or len({tuple(parts[::2]) for parts in split}) != 1
    ):
        return template(texts[0])
    out = []
    for i, variants in enumerate(zip(*split, strict=True)):
        if i % 2 == 0 or len(set(variants)) == 1:
            out.append(variants[0])
        else:
            out.append("(…)" if variants[0].startswith("(") else "`…`")
    return "".join(out)


def template(text: str) -> str:
    """The change with its names abstracted: backticked names and tuples of names."""
    text = re.sub(r"`[^`]*`", "`…`", text)
    return re.sub(r"\((?:'[^']*'(?:, )?)*,?\)", "(…)", text)


@dataclass(frozen=True, kw_only=True)
class _Entry:
    """A single finding, or a group sharing a cause, as the text report prints it."""

    findings: tuple[Finding, ...]
    label: str | None = None
    """The group's description; None for a single finding."""
    fix: str = ""
    """The group's fix-it."""


def group_entries(findings: Iterable[Finding]) -> list[_Entry]:
    """Single findings first (the few real breaks), then the groups, largest first."""
    by_cause: dict[tuple[str, ...], list[Finding]] = {}
    singles: list[Finding] = []
    for f in findings:
        if f.code == "import-failed":
            by_cause.setdefault(("import", f.change), []).append(f)
        elif f.cause is not None:
            by_cause.setdefault((f.cause, f.clause, f.code, template(f.change)), []).append(f)
        else:
            singles.append(f)
    groups: list[_Entry] = []
    for key, members in by_cause.items():
        if len(members) < 2:
            singles += members
            continue
        subjects = list(dict.fromkeys(f.subject for f in members))
        if key[0] == "import":
            label = f"{len(subjects)} modules {members[0].change}: {_names(subjects)}"
            fix = (
                "make them importable, or leave them out with a recorded reason, e.g."
                f" `--exclude '{_pattern(subjects)}=why'` (check that it matches only these)"
            )
        else:
            base = key[0]
            others = [s for s in subjects if s != base]
            who = f"`{base}` and {len(others)}" if base in subjects else f"{len(others)}"
            change = common([f.change for f in members])
            label = (
                f"{who} classes deriving from it ({len(members)} findings, e.g."
                f" {_names(others, 2)}): {change}"
            )
            if base not in subjects:
                label = label.replace("deriving from it", f"deriving from `{base}`", 1)
            fix = f"{common([f.fix for f in members])} (for each)"
        groups.append(_Entry(findings=tuple(members), label=label, fix=fix))
    singles.sort(key=lambda f: (f.clause, f.subject, f.parameter or ""))
    groups.sort(key=lambda e: -len(e.findings))
    return [_Entry(findings=(f,)) for f in singles] + groups


@dataclass(frozen=True, kw_only=True)
class Report:
    package: str
    version: str | None
    baseline_path: str
    baseline_version: str | None
    major_bump: bool
    """The version rose by a breaking step (major, or minor while the major is 0): breaking
    changes are allowed."""
    classes: int
    findings: tuple[Finding, ...]
    max_positional: int = 0
    excluded: tuple[tuple[str, str, str], ...] = ()
    """(pattern, reason, source) of the modules left out: source is ``baseline`` or
    ``command line``."""
    output: tuple[str, ...] = ()
    """What the scanned modules printed, summarised."""
    migrated_from: int | None = None
    """The baseline file's older format, read and migrated (``update`` rewrites it)."""
    step: str = "unknown"
    """How the version moved: breaking, compatible, same, backwards or unknown."""
    accepted: tuple[tuple[str, str], ...] = ()
    """(class, reason) whose breaking changes ``update --accept-break`` lets pass."""
    fresh: bool = False
    """No baseline recorded yet (a first ``update``)."""
    unexported: tuple[str, ...] = ()
    """Dataclasses of private modules that public modules bind without an ``__all__``."""
    locations: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """Class -> (file, line of its ``class`` statement), where the scan could tell: where a
    ``--format github`` annotation points."""

    def verdict(self, finding: Finding) -> Verdict:
        if finding.kind == "note":
            return "note"
        if finding.kind == "failure":
            return "failure"
        if finding.subject in dict(self.accepted):
            return "accepted"
        return "allowed" if self.major_bump else "failure"

    @property
    def failures(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if self.verdict(f) == "failure")

    @property
    def allowed(self) -> tuple[Finding, ...]:
        """Breaking changes the version step or an accepted break permits."""
        return tuple(f for f in self.findings if self.verdict(f) in ("allowed", "accepted"))

    @property
    def notes(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind == "note")

    @property
    def ok(self) -> bool:
        return not self.failures

    def counts(self) -> dict[str, dict[str, int]]:
        """Per clause: findings by verdict, and the classes (subjects) failing."""
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            entry = out.setdefault(f.clause, {})
            entry[self.verdict(f)] = entry.get(self.verdict(f), 0) + 1
        for clause, entry in out.items():
            entry["failing_subjects"] = len(
                {f.subject for f in self.failures if f.clause == clause}
            )
        return dict(sorted(out.items()))

    def _header(self) -> str:
        failures = self.failures
        if failures:
            status = f"FAILED, {len(failures)} problem{'s' * (len(failures) != 1)}"
        else:
            status = "OK"
        if self.fresh:
            at = "new"
        elif self.baseline_version:
            at = f"recorded at {short_version(self.baseline_version)}"
        else:
            at = "recorded without a package version"
        return (
            f"{self.package} {short_version(self.version) if self.version else '(no version)'}:"
            f" {status} ({self.classes} public dataclass{'es' * (self.classes != 1)};"
            f" baseline {self.baseline_path}, {at})"
        )

    def _summary(self) -> list[str]:
        if not self.failures and not self.allowed:
            return []
        parts = []
        for clause, entry in self.counts().items():
            bits = []
            if entry.get("failure"):
                bits.append(
                    f"{entry['failure']} failing in {entry['failing_subjects']}"
                    f" {'class' if clause != 'M4' else 'module'}"
                    f"{'es' * (entry['failing_subjects'] != 1 and clause != 'M4')}"
                    f"{'s' * (entry['failing_subjects'] != 1 and clause == 'M4')}"
                )
            allowed = entry.get("allowed", 0) + entry.get("accepted", 0)
            if allowed:
                bits.append(f"{allowed} allowed")
            if entry.get("note"):
                bits.append(f"{entry['note']} note{'s' * (entry['note'] != 1)}")
            parts.append(f"{clause} " + ", ".join(bits))
        return [f"by rule: {'; '.join(parts)}"]

    def render(self, *, recorded: bool = False) -> str:
        """The report as text; ``recorded=True`` words it for an ``update`` that wrote the file."""
        lines = [self._header(), *self._summary(), *self._exclusions()]
        lines += self._section(self.failures, "failures", lambda f: f.render())
        if self.allowed:
            lines.append(self._allowed_heading(recorded=recorded))
            lines += self._section(self.allowed, "allowed", lambda f: f.render(allowed=True))
        notes = [f for f in self.notes if f.code != "class-added"]
        added = [f for f in self.notes if f.code == "class-added"]
        if len(added) > 3:  # a first run lists the whole package: one line, not a page
            names = _names([f.subject for f in added], 10)
            tail = "" if recorded else ", not in the baseline yet — run `update` to record them"
            lines_added = [f"  [M3] {len(added)} new public dataclasses{tail}: {names}"]
        else:
            lines_added = [f"  {f.render(recorded=recorded)}" for f in added]
        if notes or added:
            lines.append("recorded:" if recorded else "notes:")
            lines += self._section(notes, "notes", lambda f: f.render(recorded=recorded))
            lines += lines_added
        lines += self._context(recorded=recorded)
        return "\n".join([lines[0], *(folded for line in lines[1:] for folded in _fold(line))])

    def _allowed_heading(self, *, recorded: bool) -> str:
        reasons = []
        if any(self.verdict(f) == "allowed" for f in self.allowed):
            reasons.append(
                f"the breaking version step ({short_version(self.baseline_version)} ->"
                f" {short_version(self.version)})"
            )
        accepted = dict(self.accepted)
        if any(self.verdict(f) == "accepted" for f in self.allowed):
            reasons.append(
                "the accepted breaks ("
                + "; ".join(f"{c}: {r}" for c, r in sorted(accepted.items()))
                + ")"
            )
        why = " and ".join(reasons)
        return (
            f"breaking changes recorded, allowed by {why}:"
            if recorded
            else f"allowed by {why}; `update` records them:"
        )

    @staticmethod
    def _section(findings: Sequence[Finding], name: str, render: Any) -> list[str]:
        entries = group_entries(findings)
        limit = SHOWN[name]
        lines = []
        for entry in entries[:limit]:
            if entry.label is None:
                lines.append(f"  {render(entry.findings[0])}")
                continue
            first = entry.findings[0]
            lines.append(f"  [{first.clause}] {entry.label}")
            if first.kind != "note":
                lines.append(f"      fix: {entry.fix}")
        if len(entries) > limit:
            rest = sum(len(e.findings) for e in entries[limit:])
            lines.append(
                f"  … and {rest} more {name} in {len(entries) - limit} entries"
                " (`--format json` lists every finding)"
            )
        return lines

    def _exclusions(self) -> list[str]:
        """Each pattern on its own line with its reason and where it came from (the first
        ``SHOWN["excluded"]``; the JSON report lists all)."""
        if not self.excluded:
            return []
        n = len(self.excluded)
        lines = [f"excluded from the scan ({n} pattern{'s' * (n != 1)}):"]
        limit = SHOWN["excluded"]
        lines += [
            f"  {p} ({source}{': ' + r if r else ', no reason recorded'})"
            for p, r, source in self.excluded[:limit]
        ]
        if n > limit:
            rest = self.excluded[limit:]
            from_cli = sum(source != "baseline" for _p, _r, source in rest)
            lines.append(
                f"  … and {len(rest)} more ({len(rest) - from_cli} from the baseline,"
                f" {from_cli} from the command line; `--format json` lists each with its reason)"
            )
        return lines

    def _context(self, *, recorded: bool) -> list[str]:
        lines = []
        if self.max_positional:
            lines.append(f"positional parameters allowed per class: {self.max_positional}")
        if self.unexported:
            n = len(self.unexported)
            lines.append(
                f"not scanned (M4): {n} dataclass{'es' * (n != 1)} defined in private modules"
                f" and bound by public modules without `__all__`, e.g. {_names(self.unexported)};"
                " to guard them, list them in the public module's `__all__`"
            )
        if self.migrated_from is not None and not recorded:
            lines.append(
                f"the baseline is in format {self.migrated_from}, read by migration;"
                " `update` rewrites it in the current format"
            )
        lines += [f"the scanned modules printed {summary}" for summary in self.output]
        return lines

    def to_json(self) -> dict[str, Any]:
        """Every finding, machine-readable (``metatests/report.schema.json``)."""
        return {
            "schema": SCHEMA,
            "package": self.package,
            "version": self.version,
            "baseline": {
                "path": self.baseline_path,
                "version": self.baseline_version,
                "fresh": self.fresh,
                "migrated_from": self.migrated_from,
            },
            "ok": self.ok,
            "version_step": self.step,
            "classes": self.classes,
            "counts": self.counts(),
            "max_positional": self.max_positional,
            "excluded": [{"pattern": p, "reason": r, "source": s} for p, r, s in self.excluded],
            "accepted": [{"class": c, "reason": r} for c, r in self.accepted],
            "unexported": list(self.unexported),
            "output": list(self.output),
            "findings": [
                {
                    "clause": f.clause,
                    "code": f.code,
                    "subject": f.subject,
                    "parameter": f.parameter,
                    "change": f.change,
                    "fix": f.fix,
                    "kind": f.kind,
                    "verdict": self.verdict(f),
                    "cause": f.cause,
                }
                for f in self.findings
            ],
        }


def short_version(version: str | None) -> str:
    if version is None:
        return "(no version)"
    return version if len(version) <= 40 else f"{version[:37]}… ({len(version)} characters)"
