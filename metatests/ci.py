"""CI-native forms of a report: JUnit XML (``--junit PATH``) and GitHub Actions annotations
(``--format github``), the same shapes as the conformance kit's (which this package does not
import: the guard runs without the kit's extra).

JUnit: one testcase per clause (M1–M5), its failure text every failing finding of the clause,
one per line, ungrouped. GitHub: one ``::error`` per entry of the text report's problem list
(a group of findings sharing a cause is one annotation), at most ``MAX_ANNOTATIONS``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from metatests.report import Report, _Entry, group_entries

__all__ = ["MAX_ANNOTATIONS", "github_annotations", "junit_xml"]

CLAUSES = ("M1", "M2", "M3", "M4", "M5")
MAX_ANNOTATIONS = 50
"""GitHub shows only the first few per step; more would bury the summary."""


def junit_xml(report: Report) -> str:
    suite = f"polyloop-metatests check {report.package}"
    failing = {c: [f for f in report.failures if f.clause == c] for c in CLAUSES}
    root = ET.Element("testsuites")
    element = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(CLAUSES)),
        failures=str(sum(bool(v) for v in failing.values())),
        errors="0",
        skipped="0",
        time="0.000",
    )
    for clause in CLAUSES:
        case = ET.SubElement(element, "testcase", classname=suite, name=clause, time="0.000")
        findings = failing[clause]
        if findings:
            n = len(findings)
            message = f"{clause} failed: {n} problem{'s' * (n != 1)}; first: {findings[0].render()}"
            ET.SubElement(case, "failure", message=message).text = "\n".join(
                f.render() for f in findings
            )
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _shown_path(path: str) -> str:
    """`path` relative to the working directory when it lies below it (a CI job runs from the
    repository's root, and GitHub places annotations by repository-relative path)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith(os.pardir) else relative


def _where(report: Report, entry: _Entry) -> str:
    """``file=…,line=…,`` of the class an entry is about: a group's shared base, else its first
    finding's class; '' when the scan could not tell (a removed class, a module)."""
    first = entry.findings[0]
    candidates = [first.cause] if entry.label is not None and first.cause else []
    known = [name for name in (*candidates, first.subject) if name in report.locations]
    location = report.locations[known[0]] if known else None
    if location is None:
        return ""
    return f"file={_escape_property(_shown_path(location[0]))},line={location[1]},"


def github_annotations(report: Report) -> str:
    """One ``::error`` line per failing entry ('' when the check passed), at the class's
    ``class`` statement when the scan found it."""
    entries = group_entries(report.failures)
    lines = []
    for entry in entries[:MAX_ANNOTATIONS]:
        first = entry.findings[0]
        text = first.render() if entry.label is None else f"[{first.clause}] {entry.label}"
        title = _escape_property(f"{first.clause} {first.code}")
        lines.append(f"::error {_where(report, entry)}title={title}::{_escape_data(text)}")
    if len(entries) > MAX_ANNOTATIONS:
        lines.append(
            f"::error title=metatests::{len(entries) - MAX_ANNOTATIONS} more problems in the report"
        )
    return "\n".join(lines)
