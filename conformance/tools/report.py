"""Reports of the tool authors' checks: findings, per-tool and per-run results, text and JSON.

Re-exported by `conformance.tools`; import them from there. (The executor half's report is
`conformance._core.report`; both write text through `conformance._core.text`.)
"""

from __future__ import annotations

import json
import platform
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from conformance._core.catalog import CONTRACT_VERSION
from conformance._core.data import thaw
from conformance._core.report import count, library_versions
from conformance._core.text import escape_name, json_text
from conformance.tools.rows import ROWS
from polyloop import __version__

__all__ = [
    "CLAUSES",
    "CLAUSE_IDS",
    "Finding",
    "HandlerStats",
    "ToolCheckFailed",
    "ToolCheckReport",
    "ToolReport",
    "tools_report_schema",
]

CLAUSE_IDS: tuple[str, ...] = tuple(clause.id for clause in ROWS)
"""The IDs of the tool authors' clauses (CONTRACT.md section 8), in order, read from their
catalog rows (`conformance.tools.rows`)."""

CLAUSES = CLAUSE_IDS
"""The same IDs under the name this module published first (`conformance.catalog.CLAUSES` holds
the clause rows)."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One failed check: which clause, which tool, where, what is wrong and how to fix it."""

    clause: str
    tool: str
    path: str
    """A JSON path (`parameters['properties']['x']['type']`), or `handler`."""
    code: str
    """A short stable kind, e.g. `unknown-type`, `deadline`, `non-str-return`."""
    message: str
    fix: str
    example: Mapping[str, object] | None = None
    """The smallest arguments found that show the problem (H4, H6)."""

    def __str__(self) -> str:
        e = escape_name  # text from the tool file: escaped (issue 13); to_json keeps it exact
        text = f"{self.clause} {e(repr(self.tool))} at {e(self.path)}: {e(self.message)}; "
        text += e(self.fix)
        if self.example is not None:
            text += f" (arguments: {e(json_text(self.example))})"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "clause": self.clause,
            "tool": self.tool,
            "path": self.path,
            "code": self.code,
            "message": self.message,
            "fix": self.fix,
            "example": None if self.example is None else thaw(self.example),
        }


@dataclass(frozen=True, kw_only=True)
class HandlerStats:
    """How the handler behaved on the valid arguments H4 generated (before any failure)."""

    calls: int
    raised: int
    """Calls that raised an `Exception` (allowed: it becomes an observation, E4)."""
    exceptions: Mapping[str, int] = field(default_factory=dict)
    """Exception class name -> how many calls raised it."""
    smallest_raising: Mapping[str, object] | None = None
    smallest_observation: str | None = None
    """What the model would have seen for `smallest_raising` (`"ValueError: ..."`)."""

    def to_text(self) -> str:
        if self.calls == 0:
            return "handler not called"
        text = f"handler raised on {self.raised} of {self.calls} valid calls"
        if self.exceptions:
            text += " (" + ", ".join(f"{k} ×{v}" for k, v in sorted(self.exceptions.items())) + ")"
        if self.smallest_raising is not None:
            text += f"; smallest: {json_text(self.smallest_raising)} -> {self.smallest_observation}"
        return escape_name(text)

    def to_json(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "raised": self.raised,
            "exceptions": dict(self.exceptions),
            "smallest_raising": (
                None if self.smallest_raising is None else thaw(self.smallest_raising)
            ),
            "smallest_observation": self.smallest_observation,
        }


class ToolCheckFailed(AssertionError):
    """A tool check found a problem. `str()` is the readable summary; `.report` has the rest."""

    def __init__(self, report: ToolReport | ToolCheckReport) -> None:
        super().__init__(report.summary())
        self.report = report


@dataclass(frozen=True, kw_only=True)
class ToolReport:
    """The result of checking one tool."""

    tool: str
    statuses: Mapping[str, str]
    """Clause ID -> `pass`, `fail` or `skipped`, for every clause that was asked for."""
    reasons: Mapping[str, str] = field(default_factory=dict)
    """Clause ID -> why it was skipped."""
    findings: tuple[Finding, ...] = ()
    examples: int = 0
    """Valid argument sets H4 tried (until its first failure)."""
    notes: tuple[str, ...] = ()
    """`"H2 <path>: <doubt>; <what to do>"`: what the kit could not decide, never a failure."""
    handler_stats: HandlerStats | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return "fail" not in self.statuses.values()

    def findings_for(self, clause: str) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.clause == clause)

    def failed_clauses(self) -> tuple[str, ...]:
        return tuple(clause for clause, status in self.statuses.items() if status == "fail")

    def to_text(self) -> str:
        head = "pass" if self.passed else "FAIL"
        e = escape_name  # text from the tool file: escaped (issue 13); to_json keeps it exact
        lines = [f"{head} {e(self.tool)}"]
        for finding in self.findings:
            lines.append(
                f"  {finding.clause} {e(finding.path)}: {e(finding.message)}; {e(finding.fix)}"
            )
            if finding.example is not None:
                lines.append(f"     arguments: {e(json_text(finding.example))}")
        if self.handler_stats is not None and self.handler_stats.raised:
            lines.append(f"  H4 {self.handler_stats.to_text()}")
        lines.extend(f"  note {e(note)}" for note in self.notes)
        return "\n".join(lines)

    def summary(self) -> str:
        name = escape_name(repr(self.tool))
        if self.passed:
            return f"tool {name} passed {', '.join(self.statuses)}"
        return f"tool {name} failed {', '.join(self.failed_clauses())}\n" + self.to_text()

    def raise_for_failures(self) -> None:
        if not self.passed:
            raise ToolCheckFailed(self)

    def to_json(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "passed": self.passed,
            "statuses": dict(self.statuses),
            "reasons": dict(self.reasons),
            "findings": [finding.to_json() for finding in self.findings],
            "examples": self.examples,
            "handler_stats": None if self.handler_stats is None else self.handler_stats.to_json(),
            "notes": list(self.notes),
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True, kw_only=True)
class ToolCheckReport:
    """The result of checking several tools (a registry, a list, a schema file)."""

    target: str
    tools: tuple[ToolReport, ...]
    examples: int
    deadline: float
    seed: int | None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(tool.passed for tool in self.tools)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(finding for tool in self.tools for finding in tool.findings)

    def tool(self, label: str) -> ToolReport:
        for report in self.tools:
            if report.tool == label:
                return report
        raise KeyError(f"no tool {label!r}; checked: {[r.tool for r in self.tools]}")

    def exit_status(self) -> int:
        return 0 if self.passed else 1

    def clause_counts(self) -> dict[str, dict[str, int]]:
        """Clause ID -> {"pass": n, "fail": n, "skipped": n} over the tools."""
        counts: dict[str, dict[str, int]] = {}
        for report in self.tools:
            for clause, status in report.statuses.items():
                row = counts.setdefault(clause, {"pass": 0, "fail": 0, "skipped": 0})
                row[status] += 1
        return {clause: counts[clause] for clause in CLAUSE_IDS if clause in counts}

    def finding_counts(self) -> dict[str, int]:
        """`"<clause> <message> -> <fix>"` -> occurrences, most frequent first."""
        counter = Counter(
            f"{finding.clause} {finding.message} -> {finding.fix}" for finding in self.findings
        )
        return dict(counter.most_common())

    def summary(self, limit: int = 10) -> str:
        failed = [report for report in self.tools if not report.passed]
        target = escape_name(self.target)
        lines = [f"{len(failed)} of {len(self.tools)} tools failed the tool checks ({target})"]
        for report in failed[:limit]:
            lines.append(report.to_text())
        if len(failed) > limit:
            lines.append(f"... and {len(failed) - limit} more tools")
        return "\n".join(lines)

    def raise_for_failures(self) -> None:
        if not self.passed:
            raise ToolCheckFailed(self)

    def to_text(self, *, verbose: bool = False) -> str:
        mode = (
            f"{count(self.examples, 'example')} per tool, deadline {self.deadline:g}s"
            if self.examples
            else "schema checks only (no generation)"
        )
        seed = "" if self.seed is None else f", seed {self.seed}"
        tools = count(len(self.tools), "tool")
        lines = [f"check-tools {escape_name(self.target)}: {tools}, {mode}{seed}"]
        for report in self.tools:
            stats = report.handler_stats
            shown = not report.passed or report.notes or (stats is not None and stats.raised)
            if verbose or shown:
                if len(lines) == 1:
                    lines.append("")
                lines.append(report.to_text())
        lines += ["", "clause  pass  fail  skipped"]
        for clause, row in self.clause_counts().items():
            lines.append(f"{clause:<6}{row['pass']:>6}{row['fail']:>6}{row['skipped']:>9}")
        counts = self.finding_counts()
        if counts:
            lines += ["", "findings (count, clause, problem -> fix):"]
            lines += [f"{n:>6}  {escape_name(key)}" for key, n in counts.items()]
        passed = sum(report.passed for report in self.tools)
        lines += [
            "",
            f"{count(len(self.tools), 'tool')}: {passed} passed, {len(self.tools) - passed} failed",
        ]
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        """The report as JSON data, valid against `tools_report_schema()`."""
        versions = {
            "kit": __version__,
            "contract": CONTRACT_VERSION,
            "python": platform.python_version(),
            **dict(library_versions()),
        }
        return {
            "kit_version": __version__,
            "contract_version": CONTRACT_VERSION,
            "versions": versions,
            "target": self.target,
            "passed": self.passed,
            "examples": self.examples,
            "deadline": self.deadline,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            "clauses": self.clause_counts(),
            "finding_counts": self.finding_counts(),
            "tools": [report.to_json() for report in self.tools],
        }


def tools_report_schema() -> dict[str, Any]:
    """The published JSON Schema (``conformance/tools-report.schema.json``) that every
    `ToolCheckReport.to_json()` validates against."""
    text = resources.files("conformance").joinpath("tools-report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
