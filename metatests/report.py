"""Verdicts and their text: one ``Finding`` per change, a ``Report`` per check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BUMP", "RECORD", "Finding", "Kind", "Report"]

Kind = Literal["failure", "breaking", "note"]

BUMP = "bump the major version to make this change"
RECORD = "run `update` to record it"


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
    max_positional: int = 0
    excluded: tuple[tuple[str, str], ...] = ()
    """(pattern, reason) of the modules left out of the scan."""
    output: tuple[str, ...] = ()
    """What the scanned modules printed, summarised."""
    migrated_from: int | None = None
    """The baseline file's older format, read and migrated (``update`` rewrites it)."""

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
        lines += self._context(recorded=recorded)
        return "\n".join(lines)

    def _context(self, *, recorded: bool) -> list[str]:
        lines = []
        if self.max_positional:
            lines.append(f"positional parameters allowed per class: {self.max_positional}")
        if len(self.excluded) > 3:  # the baseline lists them with their reasons
            n = len(self.excluded)
            lines.append(f"excluded from the scan: {n} module patterns (see the baseline)")
        elif self.excluded:
            lines.append(
                "excluded from the scan: "
                + "; ".join(f"{p} ({r})" if r else p for p, r in self.excluded)
            )
        if self.migrated_from is not None and not recorded:
            lines.append(
                f"the baseline is in format {self.migrated_from}, read by migration;"
                " `update` rewrites it in the current format"
            )
        lines += [f"the scanned modules printed {summary}" for summary in self.output]
        return lines
