"""The field report's policy and recovery matrices, written from ``expected.json``.

``python tests/field/matrix.py`` rewrites the tables between the ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` comments of ``docs/field-report.md``; `test_field.py` checks that they
match the pinned verdicts, so the report cannot drift from what the field tests assert.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPORT = HERE.parents[1] / "docs" / "field-report.md"
MATRICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "policy-matrix": ("policy", tuple(f"P{n}" for n in range(1, 13))),
    "recovery-matrix": ("recovery", tuple(f"J{n}" for n in range(1, 14))),
}
"""Each table: the subject whose adapters are its columns, and its clauses (the rows)."""


def _verdict(entry: dict[str, Any], clause: str) -> str:
    if clause in entry.get("skipped", {}):
        return "skipped"
    if clause in entry.get("errors", {}):
        return "**error**"
    return "**fail**" if clause in entry["failing"] else "pass"


def table(adapters: dict[str, Any], subject: str, clauses: tuple[str, ...]) -> str:
    """The markdown table of `subject`'s adapters (columns, in expected.json's order) by clause,
    with each column's count of failing clauses as its last row."""
    names = [name for name, entry in adapters.items() if entry.get("subject") == subject]
    if not names:
        return "(no adapter pinned yet)"
    lines = [
        "| clause | " + " | ".join(f"`{name}`" for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for clause in clauses:
        cells = [_verdict(adapters[name], clause) for name in names]
        lines.append(f"| {clause} | " + " | ".join(cells) + " |")
    counts = [str(len(adapters[name]["failing"])) for name in names]
    lines.append("| failing | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def render(report: str, adapters: dict[str, Any]) -> str:
    """`report` with every matrix between its markers rewritten."""
    for marker, (subject, clauses) in MATRICES.items():
        begin, end = f"<!-- {marker}:begin -->", f"<!-- {marker}:end -->"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        body = f"{begin}\n{table(adapters, subject, clauses)}\n{end}"
        found = pattern.search(report)
        if found is None:
            raise ValueError(f"{REPORT.name} has no {begin} ... {end} section")
        report = report[: found.start()] + body + report[found.end() :]
    return report


def main() -> int:
    adapters = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))["adapters"]
    text = REPORT.read_text(encoding="utf-8")
    new = render(text, adapters)
    if new != text:
        REPORT.write_text(new, encoding="utf-8")
        print(f"rewrote the matrices of {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
