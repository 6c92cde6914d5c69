"""M3's breaking step (the major version, or the minor while the major is 0), accepted breaks
(``update --accept-break CLASS=REASON``) and a version that goes backwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metatests import check_package, load_baseline, update_baseline
from metatests.cli import main
from metatests.errors import MetatestsError
from metatests.versions import step

MODEL = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass P:\n    a: int\n{}"


def _package(version: str, extra: str = "    b: int = 0\n") -> dict[str, str]:
    return {"__init__.py": f'__version__ = "{version}"\n', "models.py": MODEL.format(extra)}


def _reference(old: tuple[int, ...], new: tuple[int, ...]) -> str:
    width = max(len(old), len(new), 2)
    o, n = old + (0,) * (width - len(old)), new + (0,) * (width - len(new))
    if n == o:
        return "same"
    if n < o:
        return "backwards"
    if n[0] > o[0] or (n[0] == 0 and n[1] > o[1]):
        return "breaking"
    return "compatible"


releases = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=4).map(tuple)


@given(releases, releases, st.sampled_from(["", "rc1", ".dev3", "+local"]))
def test_M3_version_step_matches_integer_comparison(
    old: tuple[int, ...], new: tuple[int, ...], suffix: str
) -> None:
    text = ".".join(map(str, old)), ".".join(map(str, new)) + suffix
    assert step(*text) == _reference(old, new)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("0.3.0", "0.4.0", "breaking"),
        ("0.3.0", "0.3.1", "compatible"),
        ("1.2.0", "1.3.0", "compatible"),
        ("1.9.0", "2.0.0", "breaking"),
        ("0.9", "1.0", "breaking"),
        ("0.4.0", "0.3.9", "backwards"),
        ("v2", "2.0.0", "same"),
        ("007.1", "7.1", "same"),
        ("1.0", "nightly", "unknown"),
        (None, "1.0", "unknown"),
    ],
)
def test_M3_breaking_step_examples(old: str | None, new: str, expected: str) -> None:
    assert step(old, new) == expected


def test_M3_version_of_thousands_of_digits_is_compared_without_int() -> None:
    # int("9" * 5001) raises ValueError on Python 3.11+: the guard must not.
    assert step("9" * 5001, "1" + "0" * 5001) == "breaking"
    assert step("9" * 5001 + ".1", "9" * 5001 + ".2") == "compatible"


def test_M3_zero_x_minor_bump_allows_a_break(packages, tmp_path: Path) -> None:
    name = packages.write(_package("0.3.0"))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_package("0.4.0", extra=""), name=name)

    report = check_package(name, path)

    assert report.ok and report.major_bump
    assert packages.verdict(report.allowed) == [("M3", "parameter-removed", "models.P", "b")]
    assert "allowed by the breaking version step (0.3.0 -> 0.4.0)" in report.render()
    assert update_baseline(name, path).written


def test_M3_zero_x_patch_bump_refuses_a_break(packages, tmp_path: Path) -> None:
    name = packages.write(_package("0.3.0"))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_package("0.3.1", extra=""), name=name)

    assert packages.failures(check_package(name, path)) == [
        ("M3", "parameter-removed", "models.P", "b")
    ]
    assert not update_baseline(name, path).written


def test_M3_accept_break_records_the_reason_and_then_check_passes(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write(_package("0.3.0"))
    path = str(tmp_path / "api.json")
    assert main(["update", name, "--baseline", path]) == 0
    packages.write(_package("0.3.1", extra=""), name=name)
    capsys.readouterr()

    assert main(["update", name, "--baseline", path]) == 1
    out = capsys.readouterr().out
    assert f"--accept-break '{name}.models.P=why callers may break'" in out

    reason = "b was never read; removed in 0.3.1"
    assert (
        main(["update", name, "--baseline", path, "--accept-break", f"{name}.models.P={reason}"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        f"breaking changes recorded, allowed by the accepted breaks ({name}.models.P: {reason})"
        in out
    )
    recorded = load_baseline(path)
    assert [(a.subject, a.reason, a.version) for a in recorded.accepted] == [
        (f"{name}.models.P", reason, "0.3.1")
    ]
    assert main(["check", name, "--baseline", path]) == 0
    # The acceptance applied once: a second break of the same class fails again.
    packages.write(
        {**_package("0.3.2", extra=""), "models.py": MODEL.format("").replace("a: int", "c: int")},
        name=name,
    )
    assert main(["check", name, "--baseline", path]) == 1


def test_M3_accept_break_naming_a_class_without_a_break_is_refused(
    packages, tmp_path: Path
) -> None:
    name = packages.write(_package("0.3.0"))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_package("0.3.1", extra=""), name=name)

    with pytest.raises(
        MetatestsError, match=rf"--accept-break {name}\.models\.Q: no breaking change"
    ):
        update_baseline(name, path, accept_break={f"{name}.models.Q": "typo"})
    with pytest.raises(MetatestsError, match="needs a reason"):
        update_baseline(name, path, accept_break={f"{name}.models.P": " "})


def test_M3_version_going_backwards_is_a_note_on_check_and_refused_by_update(
    packages, tmp_path: Path
) -> None:
    name = packages.write(_package("0.4.0"))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_package("0.3.9"), name=name)

    report = check_package(name, path)
    assert report.ok
    assert packages.notes(report) == [("M3", "version-backwards", "", None)]
    assert "editable install leaves stale" in report.render()
    result = update_baseline(name, path)
    assert not result.written
    assert packages.failures(result.report) == [("M3", "version-backwards", "", None)]
    assert load_baseline(path).version == "0.4.0"


def test_M3_a_huge_package_version_is_one_short_header(packages, tmp_path: Path) -> None:
    name = packages.write(_package("1.0"))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_package("1" + "0" * 5000, extra=""), name=name)

    header = check_package(name, path).render().splitlines()[0]
    assert "… (5001 characters)" in header and len(header) < 300
