"""The baseline API in one place (kept for imports written before the split).

The implementation lives in ``fileformat`` (the file), ``rules`` (M1–M5), ``report`` (findings
and their text) and ``operations`` (check, update, ``assert_api_stable``).
"""

from __future__ import annotations

from metatests.errors import BaselineError, MetatestsError
from metatests.fileformat import (
    FORMAT,
    Baseline,
    RecordedClass,
    dumps_baseline,
    load_baseline,
    write_baseline,
)
from metatests.operations import UpdateResult, assert_api_stable, check_package, update_baseline
from metatests.report import Finding, Report
from metatests.rules import compare

__all__ = [
    "FORMAT",
    "Baseline",
    "BaselineError",
    "Finding",
    "MetatestsError",
    "RecordedClass",
    "Report",
    "UpdateResult",
    "assert_api_stable",
    "check_package",
    "compare",
    "dumps_baseline",
    "load_baseline",
    "update_baseline",
    "write_baseline",
]
