"""polyloop's own API guard: M1–M5 against the committed ``polyloop.api.json``.

When a check here fails, the report says which class and field changed and how to fix it. To
record a compatible change (a new keyword-only class, a field appended with a default), run
``polyloop-metatests update polyloop --baseline metatests/polyloop.api.json`` and commit the diff.
It lives in ``tests/``, not in the ``metatests`` package, so the wheel ships no test of polyloop.
"""

from __future__ import annotations

from pathlib import Path

from metatests import assert_api_stable, scan_package

BASELINE = Path(__file__).resolve().parents[2] / "metatests" / "polyloop.api.json"

CORE_TYPES = {
    "polyloop.types.ActionOutcome",
    "polyloop.ports.ToolCall",
    "polyloop.ports.Action",
    "polyloop.tools.ToolSpec",
    "polyloop.session.SyntheticObservations",
    "polyloop.session.RunRequest",
}


def test_M1_to_M5_polyloop_api_matches_its_baseline() -> None:
    """M1–M5: every public dataclass keyword-only, parameters only appended with a default."""
    report = assert_api_stable("polyloop", baseline=BASELINE)
    assert not report.allowed, "a breaking change is allowed by a major bump: run `update`"


def test_M4_scan_finds_polyloop_core_types_and_every_module_imports() -> None:
    """M4: the guard sees the types the contract names, so a vacuous pass is impossible."""
    scan = scan_package("polyloop")

    assert scan.import_failures == ()
    assert scan.classes.keys() >= CORE_TYPES


def test_M5_keyword_only_fields_stay_out_of_match_args() -> None:
    """M5: positional `case` patterns cannot reach keyword-only fields."""
    scan = scan_package("polyloop")

    reachable = {
        name: set(info.match_args or ())
        & {p.name for p in info.parameters or () if p.kind == "keyword_only"}
        for name, info in scan.classes.items()
    }
    assert {name: names for name, names in reachable.items() if names} == {}
