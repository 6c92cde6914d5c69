"""CI-native forms of the reports: JUnit XML (``--junit PATH``) and GitHub Actions workflow
commands (``--format github``), so a CI page shows the failing clause without opening logs.

For `certify` every clause is one JUnit testcase and a failed or errored clause one ``::error``
annotation; for `check-tools` every tool and clause is. The failure text is the counterexample
(or the findings), the same lines the text report shows.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance._core.report import ClauseResult, Report, _jsonable
from conformance._core.wording import words
from conformance.tools.locate import json_tool_entries

if TYPE_CHECKING:
    from conformance.tools.report import ToolCheckReport

__all__ = [
    "FORMATS",
    "Case",
    "certify_cases",
    "github_annotations",
    "json_tool_entries",
    "junit_classname",
    "junit_xml",
    "tool_cases",
]

FORMATS = ("text", "github")
"""The values of ``--format``: the text report, or the text report followed by one GitHub
``::error`` line per failure."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """One JUnit testcase / one annotation: a clause (and for check-tools, a tool)."""

    suite: str
    name: str
    status: str
    """``pass``, ``fail``, ``error``, ``skipped`` or ``xfail``."""
    headline: str
    """The one-line verdict: the clause and what went wrong (the failure's ``message``)."""
    detail: str
    """The counterexample or findings (the failure's text)."""
    seconds: float = 0.0
    title: str = ""
    """The annotation's title: the headline without its verdict (the verdict opens `detail`,
    so the annotation does not say it twice); empty: the headline up to its first colon."""
    file: str | None = None
    """The user's file the failure belongs to (the factory's module, the tool file), for the
    annotation to point at; None: no file."""
    line: int | None = None


def _clause_detail(result: ClauseResult) -> str:
    lines = []
    if result.expected_failure is not None:
        lines.append(f"expected to fail: {result.expected_failure}")
    if result.message:
        lines += result.message.splitlines()
    example = result.counterexample
    if example is not None:
        shown = ("tools     ", list(example.tools)) if example.tools is not None else None
        label, value = shown or ("schema    ", example.schema)
        lines += [
            f"{label} {json.dumps(_jsonable(value), ensure_ascii=False)}",
            f"action     {json.dumps(_jsonable(example.action), ensure_ascii=False)}",
            f"behaviour  {example.behaviour}",
            f"expected   {example.expected}",
            f"actual     {example.actual}",
        ]
    if result.reproduce and result.status in ("fail", "error", "xfail"):
        lines.append(f"reproduce  {result.reproduce}")
    return "\n".join(lines)


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def certify_cases(
    report: Report, *, file: str | None = None, line: int | None = None
) -> tuple[Case, ...]:
    """One case per clause of a `certify` report; `file` and `line` locate the target (the
    factory) for annotations."""
    cases = []
    through = set(report.through_one_call_batches)
    added = words(report.subject)
    for r in report.results:
        verdict = _first_line(r.message) or r.status
        via = f" ({added.through_suffix})" if r.id in through and added.through_suffix else ""
        detail = _clause_detail(r)
        if via and r.status in ("fail", "error", "xfail") and added.through_detail:
            detail = added.through_detail + "\n" + detail
        cases.append(
            Case(
                suite=f"polyloop-conformance certify {report.target}",
                name=f"{r.id} {r.title}{via}",
                status=r.status,
                headline=f"{r.id} {r.status}: {r.title}{via}: {verdict}",
                detail=detail,
                seconds=r.seconds,
                title=f"{r.id} {r.status}: {r.title}",
                file=file,
                line=line,
            )
        )
    return tuple(cases)


def _tool_lines(report: ToolCheckReport, file: str | None) -> list[int | None]:
    """The line of each report tool's entry in its JSON file, None where it cannot be told:
    an entry counts only when its name gives the tool's label (``name`` or ``name #i``), so a
    line is never guessed."""
    unknown: list[int | None] = [None] * len(report.tools)
    if file is None:
        return unknown
    from conformance.tools.inputs import ToolDraft

    try:
        with open(file, encoding="utf-8") as handle:
            entries = json_tool_entries(handle.read())
    except (OSError, UnicodeDecodeError):
        return unknown
    if entries is None:
        return unknown
    lines = unknown
    for i, tool in enumerate(report.tools[: len(entries)]):
        entry, line = entries[i]
        try:
            name = str(ToolDraft.from_mapping(entry).name) if isinstance(entry, dict) else None
        except (ValueError, TypeError, AttributeError):
            name = None
        if name is not None and tool.tool in (name, f"{name} #{i}"):
            lines[i] = line
    return lines


def tool_cases(
    report: ToolCheckReport, *, file: str | None = None, line: int | None = None
) -> tuple[Case, ...]:
    """One case per tool and clause of a `check-tools` report; `file` and `line` locate the
    tools (their JSON file or module) for annotations. In a JSON tool file, each tool's
    annotation points at the line of its own entry (`line` where that cannot be found)."""
    cases = []
    lines = _tool_lines(report, file)
    for index, tool in enumerate(report.tools):
        for clause, status in tool.statuses.items():
            findings = tool.findings_for(clause)
            detail = "\n".join(str(finding) for finding in findings)
            if status == "skipped":
                detail = tool.reasons.get(clause, "")
            first = findings[0] if findings else None
            verdict = f"{first.message}; {first.fix}" if first else (_first_line(detail) or status)
            cases.append(
                Case(
                    suite=f"polyloop-conformance check-tools {report.target}",
                    name=f"{clause} {tool.tool}",
                    status=status,
                    headline=f"{clause} {status} for tool {tool.tool!r}: {verdict}",
                    detail=detail,
                    title=f"{clause} {status} for tool {tool.tool!r}",
                    file=file,
                    line=lines[index] or line,
                )
            )
    return tuple(cases)


def junit_xml(cases: Iterable[Case], suite: str) -> str:
    """A JUnit XML document: one testsuite, one testcase per case."""
    listed = list(cases)
    failures = sum(case.status == "fail" for case in listed)
    errors = sum(case.status == "error" for case in listed)
    skipped = sum(case.status in ("skipped", "xfail") for case in listed)
    root = ET.Element("testsuites")
    element = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(listed)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{sum(case.seconds for case in listed):.3f}",
    )
    for case in listed:
        testcase = ET.SubElement(
            element,
            "testcase",
            classname=junit_classname(case.suite),
            name=case.name,
            time=f"{case.seconds:.3f}",
        )
        if case.status in ("fail", "error"):
            tag = "failure" if case.status == "fail" else "error"
            ET.SubElement(testcase, tag, message=case.headline).text = case.detail
        elif case.status in ("skipped", "xfail"):
            ET.SubElement(testcase, "skipped", message=case.headline).text = case.detail or None
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def junit_classname(suite: str) -> str:
    """`suite` as a JUnit class name: dotted words, no spaces or colons (issue 24, item 4),
    which CI pages would otherwise split or mangle: ``polyloop-conformance certify
    zoo.runner:Fails`` -> ``polyloop_conformance.certify.zoo.runner.Fails``."""
    words = re.split(r"[^A-Za-z0-9_.]+", suite.replace("-", "_"))
    return ".".join(word.strip(".") for word in words if word.strip(".")) or "polyloop_conformance"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(cases: Iterable[Case]) -> str:
    """One ``::error`` workflow command per failed or errored case ('' when none failed)."""
    lines = []
    for case in cases:
        if case.status not in ("fail", "error"):
            continue
        title = case.title or case.headline.split(":", 1)[0]
        text = case.detail if case.title and case.detail else case.headline
        if not case.title and case.detail:
            text += "\n" + case.detail
        where = ""
        if case.file:
            where = f"file={_escape_property(case.file)},"
            if case.line:
                where += f"line={case.line},"
        lines.append(f"::error {where}title={_escape_property(title)}::{_escape_data(text)}")
    return "\n".join(lines)
