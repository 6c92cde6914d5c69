"""metatests: a reusable guard for the evolution of a package's public dataclasses (M1–M5).

It fails when a public dataclass's constructor takes positional parameters, or when a recorded
constructor parameter is changed in any way other than being appended with a default, against
a committed JSON baseline. Downstream packages use it in one line::

    from metatests import assert_api_stable

    def test_api() -> None:
        assert_api_stable("mypkg", baseline="api.json")  # relative to the working directory

or from the command line: ``polyloop-metatests check|update PACKAGE --baseline FILE``.
The scan runs in a child process: nothing a scanned module does at import can crash the guard.
"""

from metatests.errors import BaselineError, MetatestsError, PackageNotFoundError
from metatests.fileformat import (
    AcceptedBreak,
    Baseline,
    RecordedClass,
    load_baseline,
    write_baseline,
)
from metatests.model import ClassInfo, FieldInfo, ImportFailure, ParamInfo, Scan
from metatests.operations import UpdateResult, assert_api_stable, check_package, update_baseline
from metatests.report import Finding, Report
from metatests.rules import compare
from metatests.scan import scan_package

__all__ = [
    "AcceptedBreak",
    "Baseline",
    "BaselineError",
    "ClassInfo",
    "FieldInfo",
    "Finding",
    "ImportFailure",
    "MetatestsError",
    "PackageNotFoundError",
    "ParamInfo",
    "RecordedClass",
    "Report",
    "Scan",
    "UpdateResult",
    "assert_api_stable",
    "check_package",
    "compare",
    "load_baseline",
    "scan_package",
    "update_baseline",
    "write_baseline",
]
