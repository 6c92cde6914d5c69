"""`certify` from the command line: the checks run in a child process, the parent watches.

One child serves the whole run. When it dies, exits or stops reporting, the clause in progress
is reported ``error`` naming what happened, and a fresh child takes the clauses still to run.
A child that ends before it has even imported the target is a set-up error (exit 2): there is
no report to give. What the target writes to stdout/stderr is kept per clause
(`ClauseResult.output`), never shown between the progress lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from conformance import catalog
from conformance._core.limits import EXECUTE_DEADLINE, GRACE
from conformance._core.watchdog import OUTPUT_LIMIT, Child, Ended, Output, Watch
from conformance.report import ClauseResult, Counterexample
from conformance.toolcheck.report import CLAUSE_IDS, Finding, HandlerStats, ToolReport

__all__ = [
    "Supervised",
    "ToolsSupervised",
    "certify_in_child",
    "check_tools_in_child",
    "clause_from_json",
    "tool_report_from_json",
]


def clause_from_json(data: Mapping[str, Any]) -> ClauseResult:
    """The `ClauseResult` a child sent (`ClauseResult.to_json` read back)."""
    example = data.get("counterexample")
    return ClauseResult(
        id=data["id"],
        title=data["title"],
        level=data["level"],
        status=data["status"],
        examples=data["examples"],
        seconds=data["seconds"],
        message=data.get("message"),
        counterexample=None if example is None else Counterexample(**example),
        reproduce=data.get("reproduce"),
        expected_failure=data.get("expected_failure"),
    )


@dataclass(kw_only=True)
class Supervised:
    """What a supervised run produced."""

    name: str
    mode: str
    results: list[ClauseResult] = field(default_factory=list)
    problem: str | None = None
    """Why the run could not finish (exit 2): set-up died, or ``--timeout``."""


@dataclass(kw_only=True)
class _Captured:
    """Target output per clause (``""``: before any clause)."""

    texts: dict[str, list[str]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    def add(self, clause: str, text: str) -> None:
        size = self.sizes.get(clause, 0)
        self.sizes[clause] = size + len(text)
        if size < OUTPUT_LIMIT:
            self.texts.setdefault(clause, []).append(text[: OUTPUT_LIMIT - size])

    def take(self, clause: str) -> str | None:
        parts = self.texts.pop(clause, None)
        if parts is None:
            return None
        size = self.sizes.pop(clause, 0)
        text = "".join(parts)
        if size > len(text):
            text += f"\n... ({size - len(text)} more characters not kept)"
        return text


def _reproduce(request: Mapping[str, Any], name: str, clause_id: str) -> str:
    line = (
        f"polyloop-conformance certify {name} --level {request['level']} --profile "
        f"{request['profile']} --seed {request['seed']} --only {clause_id}"
    )
    if request["deadline"] != EXECUTE_DEADLINE:
        line += f" --deadline {request['deadline']:g}"
    return line


def _synthetic(
    request: Mapping[str, Any], name: str, clause_id: str, status: str, message: str, seconds: float
) -> ClauseResult:
    clause = catalog.get(clause_id)
    reason = request["reasons"].get(clause_id)
    if reason is not None and status == "error":
        status = "xfail"
    return ClauseResult(
        id=clause_id,
        title=clause.title,
        level=clause.level,
        status=status,
        examples=0,
        seconds=seconds,
        message=message,
        reproduce=_reproduce(request, name, clause_id) if status != "skipped" else None,
        expected_failure=reason,
    )


def certify_in_child(
    request: dict[str, Any],
    selected: tuple[str, ...],
    *,
    name: str,
    timeout: float | None,
    ready: Callable[[str, str], None],
    started: Callable[[str, int, int], None],
    finished: Callable[[ClauseResult, int, int], None],
) -> Supervised:
    """Run `request` (the child's ``certify`` request, without ``only``) clause by clause."""
    run = Supervised(name=name, mode="black-box" if request["registry"] else "white-box")
    captured = _Captured()
    position = {clause: index for index, clause in enumerate(selected, start=1)}
    remaining = list(selected)
    until = None if timeout is None else time.monotonic() + timeout
    silence = 2 * (float(request["deadline"]) + GRACE) + 10.0

    def record(result: ClauseResult) -> None:
        output = captured.take(result.id)
        run.results.append(replace(result, output=output) if output else result)
        remaining.remove(result.id)
        finished(run.results[-1], position[result.id], len(selected))

    announced = False
    while remaining:
        child = Child({**request, "only": list(remaining), "path": list(sys.path)})
        current: str | None = None
        is_ready = done = False
        fatal: str | None = None
        ended: Ended | None = None
        clock = time.monotonic()
        try:
            for item in child.events(Watch(silence=silence, deadline=until, timeout=timeout)):
                if isinstance(item, Output):
                    captured.add(current or "", item.text)
                elif isinstance(item, Ended):
                    ended = item
                elif item.kind == "usage":
                    run.problem, run.mode = str(item.data["message"]), "usage"
                    return run
                elif item.kind == "ready":
                    is_ready = True
                    run.name, run.mode = str(item.data["name"]), str(item.data["mode"])
                    if not announced:
                        ready(run.name, run.mode)
                        announced = True
                elif item.kind == "start":
                    current, clock = str(item.data["clause"]), time.monotonic()
                    started(current, position[current], len(selected))
                elif item.kind == "result":
                    record(clause_from_json(item.data["result"]))
                    current = None
                elif item.kind == "fatal":
                    fatal = str(item.data["message"])
                elif item.kind == "done":
                    done = True
                    break
        finally:
            child.kill()  # also on Ctrl-C: nothing the target started outlives the run
        for item in child.pending_output():
            captured.add(current or "", item.text)
        if done:
            break
        why = fatal or (ended.reason if ended else "the child process ended")
        if child.tail and not fatal:
            why += "; its last output: " + " | ".join(child.tail[-3:])
        if not is_ready:
            run.problem = f"{why}, while importing and setting up {name}"
            return run
        victim = current or remaining[0]
        where = "while checking" if current else "before it started checking"
        message = f"{why}, {where} {victim}"
        record(_synthetic(request, run.name, victim, "error", message, time.monotonic() - clock))
        if ended is not None and ended.timed_out:
            run.problem = f"{ended.reason} (stopped in {victim})"
            for clause_id in list(remaining):
                record(
                    _synthetic(request, run.name, clause_id, "skipped", "not run: --timeout", 0.0)
                )
            break
        if request["fail_fast"]:
            for clause_id in list(remaining):
                note = f"not run: --fail-fast stopped at {victim}"
                record(_synthetic(request, run.name, clause_id, "skipped", note, 0.0))
    return run


# --- check-tools ---------------------------------------------------------------------------------


def tool_report_from_json(data: Mapping[str, Any]) -> ToolReport:
    """The `ToolReport` a child sent (`ToolReport.to_json` read back)."""
    stats = data.get("handler_stats")
    return ToolReport(
        tool=data["tool"],
        statuses=dict(data["statuses"]),
        reasons=dict(data["reasons"]),
        findings=tuple(
            Finding(**{key: value for key, value in finding.items()})
            for finding in data["findings"]
        ),
        examples=data["examples"],
        handler_stats=None if stats is None else HandlerStats(**stats),
        seconds=data["seconds"],
    )


@dataclass(kw_only=True)
class ToolsSupervised:
    """What a supervised check-tools run produced."""

    name: str = ""
    examples: int = 0
    deadline: float = 0.0
    reports: list[ToolReport] = field(default_factory=list)
    gave_up: list[str] = field(default_factory=list)
    """Labels of the tools whose check did not finish in time."""
    problem: str | None = None
    usage: bool = False


def check_tools_in_child(
    request: dict[str, Any],
    *,
    only: frozenset[str],
    tool_limit: float,
    timeout: float | None,
    progress: Callable[[str], None] | None,
) -> ToolsSupervised:
    """check-tools one tool at a time in a child; a tool that does not finish within
    `tool_limit` seconds (a ReDoS pattern, a huge enum) is reported "gave up after N s" and a
    fresh child goes on with the next tool."""
    run = ToolsSupervised()
    until = None if timeout is None else time.monotonic() + timeout
    silence = 2 * (float(request["deadline"]) + GRACE) + 10.0
    labels: list[str] = []
    first = 0
    while True:
        child = Child({**request, "first": first, "path": list(sys.path)})
        watch = Watch(silence=silence, deadline=until, timeout=timeout, budget=tool_limit)
        current: int | None = None
        done = False
        ended: Ended | None = None
        fatal: str | None = None
        try:
            for item in child.events(watch):
                if isinstance(item, Ended):
                    ended = item
                elif isinstance(item, Output):
                    continue  # a tool's handler printing: not the report's business here
                elif item.kind == "usage":
                    run.problem, run.usage = str(item.data["message"]), True
                    return run
                elif item.kind == "ready":
                    labels = [str(label) for label in item.data["labels"]]
                    run.name = str(item.data["name"])
                    run.examples = int(item.data["examples"])
                    run.deadline = float(item.data["deadline"])
                elif item.kind == "start":
                    current = int(item.data["index"])
                    watch.budget_until = time.monotonic() + tool_limit
                    if progress is not None:
                        progress(f"[{current + 1}/{len(labels)}] {labels[current]}")
                elif item.kind == "result":
                    run.reports.append(tool_report_from_json(item.data["report"]))
                    current, watch.budget_until = None, None
                elif item.kind == "fatal":
                    fatal = str(item.data["message"])
                elif item.kind == "done":
                    done = True
                    break
        finally:
            child.kill()
        if done:
            return run
        why = fatal or (ended.reason if ended else "the child process ended")
        if not labels:
            run.problem = f"{why}, while loading the tools"
            return run
        index = current if current is not None else len(run.reports)
        run.reports.append(_gave_up(labels[index], why, only, tool_limit))
        run.gave_up.append(labels[index])
        if ended is not None and ended.timed_out:
            run.problem = f"{ended.reason} (stopped at tool {labels[index]!r})"
            return run
        first = index + 1
        if first >= len(labels):
            return run


def _gave_up(label: str, why: str, only: frozenset[str], limit: float) -> ToolReport:
    """A tool whose checks did not finish: a failing finding (a run that did not finish never
    passes), on H4 when it was asked for (generation and validation are where hostile schemas
    hang), the other clauses skipped."""
    selected = [clause for clause in CLAUSE_IDS if clause in only]
    clause = "H4" if "H4" in selected else selected[0]
    finding = Finding(
        clause=clause,
        tool=label,
        path="parameters",
        code="gave-up",
        message=f"{why} while checking this tool",
        fix="simplify the schema (a pattern with nested quantifiers, a huge enum) or the "
        "handler, or raise --tool-timeout",
    )
    return ToolReport(
        tool=label,
        statuses={c: "fail" if c == clause else "skipped" for c in selected},
        reasons={c: f"not checked: {why}" for c in selected if c != clause},
        findings=(finding,),
        seconds=limit,
    )
