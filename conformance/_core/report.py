"""The certification report: per-clause results, as a text table and as JSON.

The JSON form is published as ``conformance/report.schema.json`` (see `REPORT_SCHEMA`), so CI
scripts can rely on its shape.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any

from conformance._core.text import clip, escape_name
from conformance._core.wording import DEFAULT_SUBJECT, words

__all__ = [
    "STATUSES",
    "ClauseResult",
    "Counterexample",
    "Report",
    "count",
    "library_versions",
    "report_schema",
]

LIBRARIES = ("hypothesis", "hypothesis-jsonschema", "jsonschema")
"""The distributions a result depends on besides the kit and Python: the same seed gives the
same examples only with the same versions of these."""


class ClauseStatus(str, enum.Enum):
    """A clause's status in the report (the value is what `ClauseResult.status` holds)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    XFAIL = "xfail"
    SKIPPED = "skipped"


def count(n: int, noun: str) -> str:
    """``1 clause``, ``2 clauses``: `n` and `noun`, plural unless `n` is 1."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def library_versions() -> tuple[tuple[str, str], ...]:
    """``(distribution, version)`` for each of `LIBRARIES` (``"not installed"`` when absent)."""
    found = []
    for name in LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        found.append((name, version))
    return tuple(found)


BLACK_BOX_EXPECTED = ("E6",)
"""Clauses the README promises a black-box run checks even though the kit scripts no handler:
a black-box run that skips one has not certified what it says."""

TYPE_ONLY = ("E15",)
"""Clauses that check the executor's type, never one of its calls: a run in which these are all
that did not skip has certified nothing of substance (issue 22, item 6)."""

STATUSES = ("pass", "fail", "error", "xfail", "skipped")

BUDGET_NOTE = "not run: --budget"
"""How a clause left out because ``--budget`` was spent starts its skip message."""

BUDGET_SPENT = 4
"""Exit status of a run that failed nothing but left clauses unjudged for ``--budget``: not a
pass (0) and not a failure (1), so CI can tell a run cut short for time from either."""
"""``pass``; ``fail`` (the executor broke the clause, or an expected failure now passes);
``error`` (the factory or the kit could not run the check); ``xfail`` (failed, as the
expected-failures list says); ``skipped`` (not checkable here, e.g. black-box)."""


def _jsonable(value: Any) -> Any:
    """`value` as JSON data: mappings and sequences become dicts and lists, anything else its
    repr (an argument can be any Python object an executor was sent)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return repr(value)


@dataclass(frozen=True, kw_only=True)
class Counterexample:
    """The minimal scenario Hypothesis found that breaks a clause."""

    schema: object
    """The ``parameters`` of the tool the failing action names; None when it names none of
    the registered tools (then `tools` lists them)."""
    action: object
    """The failing action as JSON: ``{"tool_call": {"name", "arguments"}}`` or
    ``{"code": ...}``; a list of them when the clause needs several (E11, E13)."""
    behaviour: str
    """What the scripted handler did (``"unknown (black-box)"`` for a black-box run)."""
    expected: str
    actual: str
    tools: tuple[str, ...] | None = None
    """The registered tool names, when the failing action names none of them (E1: code)."""
    output: tuple[str, ...] = ()
    """What the target logged or warned while this very example ran, one line per log record
    or warning (issue 9, defect 7); at most `conformance._core.capture.LINES_KEPT`."""
    output_dropped: int = 0
    """Lines the target logged or warned during the clause's other examples (or beyond the
    limit), not shown: they belong to examples that passed or were shrunk away."""

    def __post_init__(self) -> None:
        # Read back from JSON (a child process's report), `output` is a list.
        object.__setattr__(self, "output", tuple(self.output))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": _jsonable(self.schema),
            "tools": None if self.tools is None else list(self.tools),
            "action": _jsonable(self.action),
            "behaviour": self.behaviour,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.output or self.output_dropped:
            data["output"] = list(self.output)
            data["output_dropped"] = self.output_dropped
        return data


@dataclass(frozen=True, kw_only=True)
class ClauseResult:
    """The result for one clause."""

    id: str
    title: str
    level: str
    status: str
    examples: int
    seconds: float
    message: str | None = None
    counterexample: Counterexample | None = None
    reproduce: str | None = None
    """A shell line that reruns just this clause with the same seed."""
    expected_failure: str | None = None
    """The reason given in the expected-failures list, when the clause is on it."""
    output: str | None = None
    """What the target printed, logged or warned while this clause ran (captured by the command
    line's child process; None when nothing was captured)."""

    def to_json(self) -> dict[str, Any]:
        data = self._json()
        if self.output is not None:
            data["output"] = self.output
        return data

    def _json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "level": self.level,
            "status": self.status,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "message": self.message,
            "counterexample": None
            if self.counterexample is None
            else self.counterexample.to_json(),
            "reproduce": self.reproduce,
            "expected_failure": self.expected_failure,
        }


@dataclass(frozen=True, kw_only=True)
class Report:
    """What `certify` found, clause by clause."""

    kit_version: str
    contract_version: str
    target: str
    level: str
    profile: str
    seed: int
    python: str
    results: tuple[ClauseResult, ...]
    mode: str = "white-box"
    """``white-box`` (a factory; the kit scripts the handlers) or ``black-box``."""
    libraries: tuple[tuple[str, str], ...] = field(default_factory=library_versions)
    """The versions of the libraries the result depends on (`LIBRARIES`)."""
    subject: str = DEFAULT_SUBJECT
    """The registered subject (`conformance.subjects`) the target was certified as:
    ``executor`` (an ActionExecutor) or ``batch`` (a BatchExecutor, B1–B18)."""
    through_one_call_batches: tuple[str, ...] = ()
    """The clauses checked through another subject's view of the target: for a batch
    executor, the V and E clauses through one-call batches, where B4 makes a batch of one
    equivalent to ``execute``."""

    def versions(self) -> dict[str, str]:
        """Everything a rerun must match to reproduce this result: kit, contract, Python and
        the libraries that generate the examples."""
        return {
            "kit": self.kit_version,
            "contract": self.contract_version,
            "python": self.python,
            **dict(self.libraries),
        }

    @property
    def passed(self) -> bool:
        """No clause failed or errored. (An expected failure that now passes is a ``fail``, so
        a stale expected-failures entry fails the run.)"""
        return not self.failed_ids()

    def failed_ids(self) -> tuple[str, ...]:
        """IDs of the clauses with status ``fail`` or ``error``."""
        return tuple(r.id for r in self.results if r.status in ("fail", "error"))

    def result(self, clause_id: str) -> ClauseResult:
        """The result for a clause; ValueError if this report has none."""
        for result in self.results:
            if result.id == clause_id:
                return result
        known = ", ".join(r.id for r in self.results) or "none"
        raise ValueError(f"this report has no result for {clause_id!r}; it has: {known}")

    def exit_status(self, *, allow_skips: bool = False) -> int:
        """0 when every selected clause passed (xfail and skipped count as passed), else 1; also
        1 when the run checked nothing it was meant to (`unchecked`) unless `allow_skips`, and
        `BUDGET_SPENT` when it failed nothing but ``--budget`` left clauses unjudged."""
        if not self.passed:
            return 1
        if self.unchecked() is not None and not allow_skips:
            return 1
        return BUDGET_SPENT if self.unjudged() else 0

    def unjudged(self) -> tuple[str, ...]:
        """IDs of the clauses not run because ``--budget`` was spent."""
        return tuple(
            r.id
            for r in self.results
            if r.status == "skipped" and (r.message or "").startswith(BUDGET_NOTE)
        )

    def unchecked(self) -> str | None:
        """Why a run that failed nothing still certifies nothing, or None: every selected
        clause was skipped, or a black-box run skipped a clause black-box mode is meant to
        check (`BLACK_BOX_EXPECTED`)."""
        if not self.results:
            return None
        if all(r.status == "skipped" for r in self.results):
            ids = ", ".join(r.id for r in self.results)
            return f"every selected clause was skipped ({ids}), so nothing was checked"
        skipped = [r.id for r in self.results if r.status == "skipped"]
        if skipped and all(r.id in TYPE_ONLY for r in self.results if r.status != "skipped"):
            return (
                f"{', '.join(skipped)} skipped and the rest ("
                + ", ".join(r.id for r in self.results if r.status != "skipped")
                + ") check only the executor's type, so nothing of substance was checked"
            )
        if self.mode == "black-box":
            missed = [
                r for r in self.results if r.id in BLACK_BOX_EXPECTED and r.status == "skipped"
            ]
            if missed:
                return "; ".join(
                    f"{r.id} was skipped, though black-box mode is meant to check it ({r.message})"
                    for r in missed
                )
        return None

    def counts(self) -> dict[str, int]:
        return {status: sum(r.status == status for r in self.results) for status in STATUSES}

    def to_json(self) -> dict[str, Any]:
        data = self._json()
        if words(self.subject).own_fields:  # other reports keep their exact shape
            data["subject"] = self.subject
            data["through_one_call_batches"] = list(self.through_one_call_batches)
        return data

    def _json(self) -> dict[str, Any]:
        return {
            "kit_version": self.kit_version,
            "contract_version": self.contract_version,
            "target": self.target,
            "mode": self.mode,
            "level": self.level,
            "profile": self.profile,
            "seed": self.seed,
            "python": self.python,
            "versions": self.versions(),
            "passed": self.passed,
            "unchecked": self.unchecked(),
            "counts": self.counts(),
            "results": [result.to_json() for result in self.results],
        }

    def to_text(self) -> str:
        # Every text that may come from the target (its name, tool names, values) goes through
        # `escape_name`: a name cannot forge report lines, drive the terminal or make printing
        # raise (issue 13). `to_json` keeps them exactly.
        e = escape_name
        added = words(self.subject)
        lines = [
            "polyloop conformance report",
            f"target    {e(self.target)} ({self.mode}"
            + (f", {added.kind}" if added.kind else "")
            + ")",
            f"level     {self.level}   profile {self.profile}   seed {self.seed}",
            "versions  " + "   ".join(f"{name} {v}" for name, v in self.versions().items()),
            "",
            f"{'clause':<7}{'status':<9}{'examples':>8}{'seconds':>9}  title",
        ]
        if self.through_one_call_batches:
            ids = self.through_one_call_batches
            lines.insert(
                4, f"{added.through_label:<10}{ids[0]}–{ids[-1]} {added.through_text}".rstrip()
            )
        for r in self.results:
            lines.append(f"{r.id:<7}{r.status:<9}{r.examples:>8}{r.seconds:>9.2f}  {r.title}")
        skipped = [r for r in self.results if r.status == "skipped"]
        if skipped:
            lines.append("")
            lines += [f"{r.id} skipped: {e(r.message)}" for r in skipped]
        details = [r for r in self.results if r.status not in ("pass", "skipped")]
        for r in details:
            lines += ["", f"{r.id} {r.status}: {r.title}"]
            if r.expected_failure is not None:
                lines.append(f"  expected to fail: {e(r.expected_failure)}")
            if r.message:
                lines += [f"  {e(short_numbers(line))}" for line in r.message.split("\n")]
            example = r.counterexample
            if example is not None:
                lines += [
                    f"  tools      {e(_compact(list(example.tools)))}"
                    if example.tools is not None
                    else f"  schema     {e(_compact(example.schema))}",
                    f"  action     {e(_compact(example.action))}",
                    f"  behaviour  {e(example.behaviour)}",
                    f"  expected   {e(short_numbers(example.expected))}",
                    f"  actual     {e(short_numbers(example.actual))}",
                    *_output_lines(example),
                ]
            if r.reproduce and r.status in ("fail", "error", "xfail"):
                lines.append(f"  reproduce  {e(r.reproduce)}")
        counts = self.counts()
        summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        verdict = "PASSED" if self.passed else "FAILED"
        unchecked = self.unchecked() if self.passed else None
        if unchecked is not None:
            verdict = "NOT CERTIFIED"
        unjudged = self.unjudged() if self.passed and unchecked is None else ()
        if unjudged:
            verdict = "NOT JUDGED"
        lines += [
            "",
            f"{verdict}: {count(len(self.results), 'clause')} ({summary or 'none selected'})",
        ]
        if unchecked is not None:
            lines.append(f"{unchecked} (--allow-skips accepts this)")
        if unjudged:
            lines.append(
                f"{count(len(unjudged), 'clause')} not judged, --budget was spent: "
                f"{', '.join(unjudged)} (exit {BUDGET_SPENT}: no failure found, not a pass)"
            )
        return "\n".join(lines)


def _output_lines(example: Counterexample) -> list[str]:
    """The counterexample's own captured output, under the lines that describe it."""
    lines = [
        f"  {'output' if index == 0 else '':<11}{escape_name(line)}"
        for index, line in enumerate(example.output)
    ]
    if example.output_dropped:
        other = count(example.output_dropped, "line")
        where = "elsewhere in this clause" if example.output else "during this clause"
        lines.append(
            f"  {'' if example.output else 'output':<11}({other} logged or warned {where}, "
            "not shown)"
        )
    return lines


_LONG_NUMBER = re.compile(r"\d{41,}")


def short_numbers(text: str) -> str:
    """Runs of more than 40 digits shortened to their ends and their length: a 400-digit
    integer reads as ``1234567890…7890 (400 digits)``, as long schemas are shortened too."""
    return _LONG_NUMBER.sub(lambda m: f"{m[0][:10]}…{m[0][-4:]} ({len(m[0])} digits)", text)


def _compact(value: object, limit: int = 600) -> str:
    text = json.dumps(_jsonable(value), ensure_ascii=False, sort_keys=False)
    return clip(short_numbers(text), limit)


def report_schema() -> dict[str, Any]:
    """The published JSON Schema that every `Report.to_json()` validates against."""
    text = resources.files("conformance").joinpath("report.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
