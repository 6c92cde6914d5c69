"""How a zoo test judges a report: the one statement of "certify caught exactly this bug"."""

from __future__ import annotations

from collections.abc import Iterable

from conformance._core.report import Report


def assert_fails_exactly(report: Report, name: str, clauses: Iterable[str]) -> None:
    """`report` fails exactly `clauses` — the bug neither spills into other clauses nor goes
    unseen — and each failure carries a counterexample and a reproduce line for its clause."""
    expected = set(clauses)
    failed = set(report.failed_ids())
    assert failed == expected, (
        f"{name}: expected {sorted(expected)} to fail, certify failed "
        f"{sorted(failed)}\n{report.to_text()}"
    )
    for clause in sorted(expected):
        result = report.result(clause)
        assert result.status == "fail", f"{clause}: {result.status} ({result.message})"
        assert result.counterexample is not None, f"{clause} failed without a counterexample"
        assert result.reproduce, f"{clause} failed without a reproduction line"
        assert f"--only {clause}" in result.reproduce, result.reproduce
