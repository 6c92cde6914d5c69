"""The tools subject (`conformance._core.subject.Subject`): tool definitions, H1-H6.

Its targets are tools (a `ToolRegistry`, specs, drafts, JSON tool files), checked by their own
entry points (`check_tool`, `check_registry`, ``polyloop-conformance check-tools``), never by
``certify``: it claims no certify target. A search runs one clause on every tool of the target
(`conformance.tools.clauses.check_one`) and writes the first finding as the counterexample.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus, Counterexample
from conformance._core.subject import RunSpec, Subject, SubjectDefaults, Unwatched, Watched
from conformance.tools.rows import ROWS

if TYPE_CHECKING:
    from conformance.tools.engine import RunSettings
    from conformance.tools.inputs import Tool
    from polyloop import ToolRegistry

__all__ = ["SUBJECT", "ToolsSubject", "ToolsTrial"]


@dataclass(frozen=True, kw_only=True)
class ToolsTrial:
    """The target's tools, normalised once, and the settings every clause checks them with."""

    tools: tuple[Tool, ...]
    run: RunSettings
    replay: bool


class ToolsSubject(SubjectDefaults):
    """H1-H6 for tool definitions."""

    name: str = "tools"
    rows = ROWS
    clauses: tuple[str, ...] = tuple(row.id for row in ROWS)
    headings: Mapping[str, str] = MappingProxyType({"tools": "8. Tool authors' checks"})
    entry_points: Mapping[str, str] = MappingProxyType(
        {
            "check_tool": "`check_tool`, `check_registry` and `polyloop-conformance check-tools`",
            "ToolContract": "the pytest base class for a project's tools",
        }
    )
    checked_by: tuple[str, ...] = ("check_tool", "ToolContract")
    contract_classes: tuple[str, ...] = ()
    """`ToolContract`'s tests are generated per tool in the user's own module already."""
    certified: bool = False
    wrong_target: str = "a tool clause: check tools with check-tools or check_registry"

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        return 0  # certify never takes tool definitions

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        """Always white-box (the kit reads the schemas and calls the handlers); TypeError for
        what is not tools."""
        from conformance.tools.inputs import as_items

        as_items(target)  # TypeError/ValueError naming what the tools should be
        return "white-box"

    def trial(self, spec: RunSpec) -> ToolsTrial:
        from conformance.tools.engine import run_settings
        from conformance.tools.inputs import as_items, normalise

        items, registry = as_items(spec.target)
        run = run_settings(spec.settings.max_examples, spec.deadline, spec.seed, None, spec.profile)
        return ToolsTrial(tools=tuple(normalise(items, registry)), run=run, replay=False)

    def watch(self, trial: ToolsTrial) -> Watched:
        return Unwatched()  # a hanging handler is a finding of H4, counted against its budget

    def search(self, spec: RunSpec, trial: ToolsTrial, clause_id: str) -> ClauseOutcome:
        from conformance.tools.clauses import check_one

        reports = [
            check_one(tool, frozenset({clause_id}), trial.run, trial.replay) for tool in trial.tools
        ]
        examples = sum(report.examples for report in reports)
        failed = [r for r in reports if r.statuses.get(clause_id) == "fail"]
        if not failed:
            ran = [r for r in reports if r.statuses.get(clause_id) == "pass"]
            if ran:
                return ClauseOutcome(verdict=ClauseStatus.PASS, examples=examples)
            reasons = sorted({r.reasons.get(clause_id, "skipped") for r in reports})
            return ClauseOutcome(
                verdict=ClauseStatus.SKIPPED, examples=examples, message="; ".join(reasons) or None
            )
        first = failed[0]
        finding = first.findings_for(clause_id)[0]
        tool = next(t for t in trial.tools if t.label == first.tool)
        example = Counterexample(
            schema=tool.parameters,
            action={"tool_call": {"name": first.tool, "arguments": finding.example}},
            behaviour="the tool's own handler",
            expected=finding.fix,
            actual=f"{finding.path}: {finding.message}",
        )
        tools = ", ".join(repr(r.tool) for r in failed)
        return ClauseOutcome(
            verdict=ClauseStatus.FAIL,
            examples=examples,
            message=f"{clause_id} fails for {tools}",
            counterexample=example,
        )

    def reproduce(self, spec: RunSpec, clause_id: str) -> str:
        return f"polyloop-conformance check-tools {spec.name} --seed {spec.seed} --only {clause_id}"


SUBJECT: Subject = ToolsSubject()
"""This subject, as the registry (`conformance.subjects`) loads it."""
