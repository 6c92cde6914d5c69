"""One function per tool authors' clause (H1-H6), and the table that runs them.

Each check takes the `Checking` state of one tool and returns its `Verdict`. `CHECKS` names each
clause's function and the gates it needs (valid JSON data before the metaschema, a valid schema
before satisfiability, a satisfiable one before generation). Adding a clause H7 means one
function here, one row in `CHECKS`, and one row in `conformance.catalog`.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from conformance._core.data import thaw
from conformance._core.text import json_text, safe_repr, shorten
from conformance.tools import schema as _schema
from conformance.tools.engine import RunSettings, run_property
from conformance.tools.inputs import Tool, is_async_callable
from conformance.tools.report import CLAUSE_IDS, Finding, HandlerStats, ToolReport
from conformance.tools.satisfiable import Satisfiability, satisfiability
from polyloop import ReplayPolicy

__all__ = ["CHECKS", "Checking", "ToolCheck", "Verdict", "check_one"]


class Status(str, enum.Enum):
    """A clause's status in a `ToolReport` (its value is what the report shows)."""

    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What one clause's check found for one tool."""

    status: Status
    findings: tuple[Finding, ...] = ()
    reason: str | None = None
    """Why the clause was skipped (or could not be decided)."""
    notes: tuple[str, ...] = ()
    """Doubts the kit cannot settle: reported with the verdict, never a failure."""

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> Verdict:
        found = tuple(findings)
        return cls(status=Status.FAIL if found else Status.PASS, findings=found)

    @classmethod
    def skip(cls, reason: str) -> Verdict:
        return cls(status=Status.SKIPPED, reason=reason)


@dataclass(eq=False)
class Checking:
    """One tool under check, with the facts several clauses share, each computed at most once."""

    tool: Tool
    run: RunSettings
    replay: bool
    tried: int = 0
    stats: HandlerStats | None = None

    @cached_property
    def data_problems(self) -> list[_schema.Problem]:
        return _schema.json_problems(self.tool.parameters)

    @cached_property
    def schema(self) -> Any:
        return thaw(self.tool.parameters)

    @cached_property
    def _schema_findings(self) -> list[_schema.Problem]:
        return _schema.schema_problems(self.schema)

    @property
    def schema_problems(self) -> list[_schema.Problem]:
        return [problem for problem in self._schema_findings if not problem.note]

    @property
    def schema_notes(self) -> tuple[str, ...]:
        return tuple(
            f"{_schema.format_path(problem.path)}: {problem.message}; {problem.fix}"
            for problem in self._schema_findings
            if problem.note
        )

    @cached_property
    def satisfiable(self) -> Satisfiability:
        return satisfiability(self.schema)

    def findings(
        self, clause: str, problems: Iterable[_schema.Problem], root: str = "parameters"
    ) -> Verdict:
        return Verdict.of(
            Finding(
                clause=clause,
                tool=self.tool.label,
                path=_schema.format_path(problem.path, root),
                code=problem.code,
                message=problem.message,
                fix=problem.fix,
            )
            for problem in problems
        )


# --- gates: what a check needs before it can say anything ----------------------------------------

Gate = Callable[[Checking], "str | None"]
"""A prerequisite: None when it holds, else the reason the dependent clause is skipped."""


def json_data(state: Checking) -> str | None:
    return "parameters is not JSON data (see H5)" if state.data_problems else None


def valid_schema(state: Checking) -> str | None:
    return "the schema is not valid (see H2)" if state.schema_problems else None


def satisfiable_schema(state: Checking) -> str | None:
    verdict = state.satisfiable
    if verdict.undecided is not None:
        return verdict.undecided
    return None if verdict.satisfiable else "the schema is not satisfiable (see H3)"


def generation_on(state: Checking) -> str | None:
    return "generation is off (examples=0)" if state.run.examples <= 0 else None


def something_to_call(state: Checking) -> str | None:
    tool = state.tool
    if tool.registry is None and not tool.calls_handler:
        return tool.registry_error or "no validator and no async handler to call"
    return None


def replay_opted_in(state: Checking) -> str | None:
    if not state.replay:
        return "opt-in: replay=True (ToolContract: `replay = True`; CLI: --replay)"
    if state.tool.replay_policy is not ReplayPolicy.SAFE:
        return "the tool is not SAFE to replay"
    if not state.tool.calls_handler:
        return "no async handler to replay"
    return None


# --- the checks -----------------------------------------------------------------------------------


def check_h1(state: Checking) -> Verdict:
    """H1: the handler is an async callable."""
    handler = state.tool.handler
    if handler is None:
        return Verdict.skip("no handler: schema checks only")
    if not callable(handler):
        code, message = "not-callable", f"the handler is a {type(handler).__name__}, not callable"
    elif not is_async_callable(handler):
        shown = shorten(safe_repr(handler), 80)
        code, message = "sync-handler", f"the handler {shown} is not async"
    else:
        return Verdict.of(())
    fix = "declare it with `async def` (ToolSpec refuses a sync handler, S5)"
    finding = Finding(
        clause="H1", tool=state.tool.label, path="handler", code=code, message=message, fix=fix
    )
    return Verdict.of([finding])


def check_h2(state: Checking) -> Verdict:
    """H2: parameters passes its dialect's metaschema and has "type": "object" on top."""
    verdict = state.findings("H2", state.schema_problems)
    return dataclasses.replace(verdict, notes=state.schema_notes)


def check_h3(state: Checking) -> Verdict:
    """H3: some arguments can satisfy the schema."""
    verdict = state.satisfiable
    if verdict.undecided is not None:
        return Verdict.skip(verdict.undecided)
    if verdict.satisfiable:
        return Verdict.of(())
    path = "parameters" if verdict.path is None else _schema.format_path(verdict.path)
    finding = Finding(
        clause="H3",
        tool=state.tool.label,
        path=path,
        code="unsatisfiable",
        message="no arguments can satisfy this schema, so every call is rejected"
        + ("" if verdict.detail is None else f": {verdict.detail}"),
        fix="look for contradicting keywords (minimum > maximum, a required key that "
        "additionalProperties: false forbids, an empty enum, disjoint types)",
    )
    return Verdict.of([finding])


def _generated(state: Checking, clause: str, examples: int) -> Verdict:
    result = run_property(state.tool, clause, state.run, examples)
    if clause == "H4":
        state.tried = result.tried
        state.stats = result.stats if state.tool.calls_handler else None
    if result.finding is not None:
        return Verdict.of([result.finding])
    if result.inconclusive is not None:
        return Verdict.skip(result.inconclusive)
    return Verdict.of(())


def check_h4(state: Checking) -> Verdict:
    """H4: generated valid calls pass validation; the handler returns str or raises an Exception
    within the deadline."""
    return _generated(state, "H4", state.run.examples)


def check_h5(state: Checking) -> Verdict:
    """H5: the model-visible schema is unchanged by a JSON round trip."""
    tool = state.tool
    if state.data_problems:
        return state.findings("H5", state.data_problems)
    problems = [
        _schema.Problem(
            path=(key,),
            code="not-json",
            message=f"the tool's {key} is a {type(value).__name__}, not a str",
            fix=f"give the tool a str {key}",
        )
        for key, value in (("name", tool.name), ("description", tool.description))
        if not isinstance(value, str)
    ]
    problems += _name_problems(tool)
    if problems:
        return state.findings("H5", problems, "tool")
    if tool.has_model_entry:
        entry, root = tool.model_entry, "schema_for_model()"
    else:
        entry = {"name": tool.name, "description": tool.description, "parameters": state.schema}
        root = "model schema"
    return state.findings("H5", _schema.round_trip_problems(entry), root)


def _name_problems(tool: Tool) -> list[_schema.Problem]:
    """A name `ToolSpec` (S3) or `ToolRegistry` (R2) would refuse: the model sees the name."""
    name = tool.name
    if not isinstance(name, str):
        return []
    shown = shorten(json_text(name), 80)
    if not name.strip():
        return [
            _schema.Problem(
                path=("name",),
                code="blank-name",
                message=f"the tool's name {shown} is blank, which is invisible in a prompt "
                "(ToolSpec refuses it, S3)",
                fix="give the tool a name a model can read and write back",
            )
        ]
    if tool.same_name > 1:
        return [
            _schema.Problem(
                path=("name",),
                code="duplicate-name",
                message="another tool in this list has the same name; a model cannot tell "
                "them apart (ToolRegistry refuses duplicate names, R2)",
                fix="give each tool a name of its own",
            )
        ]
    return []


def check_h6(state: Checking) -> Verdict:
    """H6 (opt-in with `replay = True`): a SAFE tool replays to the same observation."""
    return _generated(state, "H6", min(state.run.examples, 10))


@dataclass(frozen=True, kw_only=True)
class ToolCheck:
    """One row of the table: a clause, the gates it needs, and its check."""

    clause: str
    check: Callable[[Checking], Verdict]
    gates: tuple[Gate, ...] = field(default=())


_SCHEMA = (json_data, valid_schema)
_GENERATED = (*_SCHEMA, satisfiable_schema, generation_on)

CHECKS: tuple[ToolCheck, ...] = (
    ToolCheck(clause="H1", check=check_h1),
    ToolCheck(clause="H2", check=check_h2, gates=(json_data,)),
    ToolCheck(clause="H3", check=check_h3, gates=_SCHEMA),
    ToolCheck(clause="H4", check=check_h4, gates=(*_GENERATED, something_to_call)),
    ToolCheck(clause="H5", check=check_h5),
    ToolCheck(clause="H6", check=check_h6, gates=(*_GENERATED, replay_opted_in)),
)
"""Every tool check, in contract order."""


def _verdict(row: ToolCheck, state: Checking) -> Verdict:
    for gate in row.gates:
        reason = gate(state)
        if reason is not None:
            return Verdict.skip(reason)
    return row.check(state)


def check_one(tool: Tool, only: frozenset[str], run: RunSettings, replay: bool) -> ToolReport:
    """Run the selected rows of `CHECKS` on one tool."""
    start = time.monotonic()
    state = Checking(tool=tool, run=run, replay=replay)
    statuses: dict[str, str] = {}
    reasons: dict[str, str] = {}
    findings: list[Finding] = []
    notes: list[str] = []
    for row in CHECKS:
        if row.clause not in only:
            continue
        verdict = _verdict(row, state)
        statuses[row.clause] = verdict.status.value
        findings.extend(verdict.findings)
        notes.extend(f"{row.clause} {note}" for note in verdict.notes)
        if verdict.reason is not None:
            reasons[row.clause] = verdict.reason
    return ToolReport(
        tool=tool.label,
        statuses={clause: statuses[clause] for clause in CLAUSE_IDS if clause in statuses},
        reasons=reasons,
        findings=tuple(findings),
        notes=tuple(notes),
        examples=state.tried,
        handler_stats=state.stats,
        seconds=time.monotonic() - start,
    )
