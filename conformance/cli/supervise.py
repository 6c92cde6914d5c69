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
from conformance._core.report import BUDGET_NOTE, ClauseResult, Counterexample
from conformance._core.wording import DEFAULT_SUBJECT
from conformance.cli.watchdog import OUTPUT_LIMIT, Child, Ended, Output, Watch
from conformance.tools.report import CLAUSE_IDS, Finding, HandlerStats, ToolReport

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
    where: tuple[str, int] | None = None
    """The target's file and line, as the child found them (for CI annotations)."""
    subject: str = DEFAULT_SUBJECT
    """The subject (`conformance.subjects`) the child found the target to be."""
    selected: tuple[str, ...] = ()
    """The clauses the run checks (the child narrows the parent's choice to the subject)."""


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
    if request.get("examples") is not None:
        line += f" --examples {request['examples']}"
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


@dataclass(kw_only=True)
class _Session:
    """How one child's stream of events ended."""

    done: bool = False
    """The child reported the whole request finished."""
    usage: str | None = None
    """The child reported a usage error (the target cannot be loaded as named)."""
    fatal: str | None = None
    ended: Ended | None = None

    @property
    def why(self) -> str:
        """Why the child stopped before it was done."""
        return self.fatal or (self.ended.reason if self.ended else "the child process ended")


Handlers = Mapping[str, Callable[[Mapping[str, Any]], bool | None]]


def _serve(child: Child, watch: Watch, on: Handlers, output: Callable[[str], None]) -> _Session:
    """Feed one child's events to the handler `on` names for their kind, and its output to
    `output`, until it is done, reports a usage error, dies or goes silent. The child is killed
    at the end, also on Ctrl-C: nothing the target started outlives the run."""
    session = _Session()
    try:
        for item in child.events(watch):
            if isinstance(item, Output):
                output(item.text)
            elif isinstance(item, Ended):
                session.ended = item
            elif item.kind == "usage":
                session.usage = str(item.data["message"])
                break
            elif item.kind == "fatal":
                session.fatal = str(item.data["message"])
            elif item.kind == "done":
                session.done = True
                break
            elif item.kind in on:
                try:
                    if on[item.kind](item.data):  # the handler wants the child ended
                        break
                except (KeyError, TypeError, ValueError, IndexError) as exc:
                    session.fatal = (
                        f"the child sent a {item.kind!r} message the kit cannot accept "
                        f"({type(exc).__name__}: {exc}); the target tampered with the kit's "
                        "reporting"
                    )
                    break
    finally:
        child.kill()
    return session


@dataclass(kw_only=True)
class _ClauseStream:
    """The parent's view of the clauses a child reports: which one runs, since when."""

    run: Supervised
    selected: tuple[str, ...]
    remaining: list[str]
    ready: Callable[[str, str], None]
    started: Callable[[str, int, int], None]
    finished: Callable[[ClauseResult, int, int], None]
    captured: _Captured = field(default_factory=_Captured)
    budget_until: float | None = None
    """`time.monotonic()` after which no clause starts (``--budget``), or None."""
    over_budget: bool = False
    current: str | None = None
    is_ready: bool = False
    announced: bool = False
    clock: float = 0.0

    def position(self, clause_id: str) -> int:
        return self.selected.index(clause_id) + 1

    def record(self, result: ClauseResult) -> None:
        if result.id not in self.remaining:
            raise ValueError(
                f"a result for {result.id}, which is "
                + ("already reported" if result.id in self.selected else "not selected")
            )
        output = self.captured.take(result.id)
        self.run.results.append(replace(result, output=output) if output else result)
        self.remaining.remove(result.id)
        self.finished(self.run.results[-1], self.position(result.id), len(self.selected))

    def on_ready(self, data: Mapping[str, Any]) -> None:
        self.is_ready = True
        self.run.name, self.run.mode = str(data["name"]), str(data["mode"])
        where = data.get("where")
        if isinstance(where, list) and len(where) == 2:
            self.run.where = (str(where[0]), int(where[1]))
        if not self.announced:
            self.ready(self.run.name, self.run.mode)
            self.announced = True

    def on_selection(self, data: Mapping[str, Any]) -> None:
        """The child found the target's subject, which may add its own clauses (the parent,
        which never imports the target, selected for the default subject); a named clause
        that does not apply was a usage error already."""
        from conformance.engine import CERTIFIABLE

        self.run.subject = str(data["subject"])
        chosen = tuple(str(c) for c in data["clauses"])
        if not set(chosen) <= set(CERTIFIABLE) or len(set(chosen)) != len(chosen):
            raise ValueError(f"a selection of unknown or repeated clauses: {chosen}")
        if self.run.results:
            return  # a later child: the remaining clauses were sent to it as they are
        self.selected, self.remaining = chosen, list(chosen)
        self.run.selected = chosen

    def on_start(self, data: Mapping[str, Any]) -> bool:
        """Whether to end the child: ``--budget`` is spent, so this clause is not run."""
        self.current, self.clock = str(data["clause"]), time.monotonic()
        if self.budget_until is not None and self.clock > self.budget_until:
            self.over_budget = True
            return True
        self.started(self.current, self.position(self.current), len(self.selected))
        return False

    def on_result(self, data: Mapping[str, Any]) -> None:
        self.record(clause_from_json(data["result"]))
        self.current = None

    def output(self, text: str) -> None:
        self.captured.add(self.current or "", text)


def certify_in_child(
    request: dict[str, Any],
    selected: tuple[str, ...],
    *,
    name: str,
    timeout: float | None,
    budget: float | None = None,
    ready: Callable[[str, str], None],
    started: Callable[[str, int, int], None],
    finished: Callable[[ClauseResult, int, int], None],
) -> Supervised:
    """Run `request` (the child's ``certify`` request, without ``only``) clause by clause."""
    run = Supervised(name=name, mode="black-box" if request["registry"] else "white-box")
    stream = _ClauseStream(
        run=run,
        selected=selected,
        remaining=list(selected),
        ready=ready,
        started=started,
        finished=finished,
        budget_until=None if budget is None else time.monotonic() + budget,
    )
    on = {
        "ready": stream.on_ready,
        "selection": stream.on_selection,
        "start": stream.on_start,
        "result": stream.on_result,
    }
    until = None if timeout is None else time.monotonic() + timeout
    silence = 2 * (float(request["deadline"]) + GRACE) + 10.0
    run.selected = selected
    while stream.remaining:
        narrowed = stream.selected != selected  # a later child gets the narrowed list as given
        child = Child(
            {
                **request,
                "only": list(stream.remaining),
                "only_given": request.get("only_given", True) or narrowed,
                "path": list(sys.path),
            }
        )
        stream.current, stream.is_ready, stream.clock = None, False, time.monotonic()
        watch = Watch(silence=silence, deadline=until, timeout=timeout)
        session = _serve(child, watch, on, stream.output)
        if session.usage is not None:
            run.problem, run.mode = session.usage, "usage"
            return run
        for item in child.pending_output():
            stream.output(item.text)
        if session.done:
            _unreported(request, stream)
            break
        if stream.over_budget:
            note = f"{BUDGET_NOTE} {budget:g}s was spent"
            for clause_id in list(stream.remaining):
                stream.record(_synthetic(request, run.name, clause_id, "skipped", note, 0.0))
            break
        why = session.why
        if child.tail and not session.fatal:
            why += "; its last output: " + " | ".join(child.tail[-3:])
        if not stream.is_ready:
            run.problem = f"{why}, while importing and setting up {name}"
            return run
        if not _after_death(request, stream, why, session.ended):
            break
    return run


def _unreported(request: Mapping[str, Any], stream: _ClauseStream) -> None:
    """A child that says it is done while clauses are left unreported had its reporting
    tampered with: those clauses are errors, never silently missing from the report."""
    for clause_id in list(stream.remaining):
        message = (
            f"the child reported the run finished without a result for {clause_id} (the "
            "target tampered with the kit's reporting)"
        )
        stream.record(_synthetic(request, stream.run.name, clause_id, "error", message, 0.0))


def _after_death(
    request: Mapping[str, Any], stream: _ClauseStream, why: str, ended: Ended | None
) -> bool:
    """Report the clause a dead child was on as ``error``; whether a fresh child goes on (not
    after ``--timeout``, whose clauses left are skipped, nor with nothing left to run)."""
    run = stream.run
    victim = stream.current or stream.remaining[0]
    where = "while checking" if stream.current else "before it started checking"
    message, seconds = f"{why}, {where} {victim}", time.monotonic() - stream.clock
    stream.record(_synthetic(request, run.name, victim, "error", message, seconds))
    timed_out = ended is not None and ended.timed_out
    if ended is not None and timed_out:
        run.problem = f"{ended.reason} (stopped in {victim})"
    if timed_out or request["fail_fast"]:
        note = "not run: --timeout" if timed_out else f"not run: --fail-fast stopped at {victim}"
        for clause_id in list(stream.remaining):
            stream.record(_synthetic(request, run.name, clause_id, "skipped", note, 0.0))
    return not timed_out


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
    current: int | None = None
    watch = Watch(silence=silence, deadline=until, timeout=timeout, budget=tool_limit)

    def on_ready(data: Mapping[str, Any]) -> None:
        labels[:] = [str(label) for label in data["labels"]]
        run.name, run.examples = str(data["name"]), int(data["examples"])
        run.deadline = float(data["deadline"])

    def on_start(data: Mapping[str, Any]) -> None:
        nonlocal current
        current = index = int(data["index"])
        watch.budget_until = time.monotonic() + tool_limit
        if progress is not None:
            progress(f"[{index + 1}/{len(labels)}] {labels[index]}")

    def on_result(data: Mapping[str, Any]) -> None:
        nonlocal current
        run.reports.append(tool_report_from_json(data["report"]))
        current, watch.budget_until = None, None

    on = {"ready": on_ready, "start": on_start, "result": on_result}
    first = 0
    while True:
        child = Child({**request, "first": first, "path": list(sys.path)})
        watch = Watch(silence=silence, deadline=until, timeout=timeout, budget=tool_limit)
        current = None
        # A tool's handler printing is not the report's business here.
        session = _serve(child, watch, on, output=lambda _text: None)
        if session.usage is not None:
            run.problem, run.usage = session.usage, True
            return run
        if session.done:
            return run
        why = session.why
        if not labels:
            run.problem = f"{why}, while loading the tools"
            return run
        index = current if current is not None else len(run.reports)
        run.reports.append(_gave_up(labels[index], why, only, tool_limit, run.examples > 0))
        run.gave_up.append(labels[index])
        ended = session.ended
        if ended is not None and ended.timed_out:
            run.problem = f"{ended.reason} (stopped at tool {labels[index]!r})"
            return run
        first = index + 1
        if first >= len(labels):
            return run


def _gave_up(
    label: str, why: str, only: frozenset[str], limit: float, generating: bool = True
) -> ToolReport:
    """A tool whose checks did not finish: a failing finding (a run that did not finish never
    passes), on H4 when it was asked for and ran (generation and validation are where hostile
    schemas hang), else on H3 (whose satisfiability search generates too), the other clauses
    skipped."""
    selected = [clause for clause in CLAUSE_IDS if clause in only]
    ran = [clause for clause in selected if generating or clause not in ("H4", "H6")]
    clause = next((c for c in ("H4", "H3") if c in ran), (ran or selected)[0])
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
