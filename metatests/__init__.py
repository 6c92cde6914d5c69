"""metatests: a reusable guard for the evolution of a package's public dataclasses (M1–M5).

It fails when a public dataclass is not keyword-only, or when a recorded field is changed in any
way other than being appended with a default, against a committed JSON baseline. Downstream
packages use it in one line::

    from metatests import assert_api_stable

    def test_api() -> None:
        assert_api_stable("mypkg", baseline="api.json")

or from the command line: ``polyloop-metatests check|update PACKAGE --baseline FILE``.
"""

from metatests.baseline import (
    Baseline,
    BaselineError,
    Finding,
    MetatestsError,
    RecordedClass,
    Report,
    UpdateResult,
    assert_api_stable,
    check_package,
    compare,
    load_baseline,
    update_baseline,
    write_baseline,
)
from metatests.scan import ClassInfo, FieldInfo, PackageNotFoundError, Scan, scan_package

__all__ = [
    "Baseline",
    "BaselineError",
    "ClassInfo",
    "FieldInfo",
    "Finding",
    "MetatestsError",
    "PackageNotFoundError",
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
