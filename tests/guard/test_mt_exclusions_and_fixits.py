"""Exclusions that never hide a regression (issue 23, item 3), the fix-its corrected (item 4)
and the scope note on dataclasses M4 leaves out (item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metatests import check_package, load_baseline, update_baseline
from metatests.cli import main

KW = "from dataclasses import dataclass\n\n"
AUDIO = KW + "@dataclass(kw_only=True)\nclass Audio:\n    rate: int\n{extra}"
FINE = KW + "@dataclass(kw_only=True)\nclass Fine:\n    a: int\n"


def test_M4_a_check_time_exclusion_cannot_hide_a_recorded_class(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded(
        {
            "features/__init__.py": "",
            "features/audio.py": AUDIO.format(extra="    mono: bool = False\n"),
            "fine.py": FINE,
        }
    )
    packages.write(
        {"features/__init__.py": "", "features/audio.py": AUDIO.format(extra=""), "fine.py": FINE},
        name=name,
    )
    capsys.readouterr()

    # Audio's real break may not vanish behind a command-line exclusion.
    assert main(["check", name, "--baseline", str(path), "--exclude", f"{name}.features"]) == 1
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # long lines are folded
    assert (
        f"[M4] {name}.features: excluded on the command line, but the baseline records 1 class"
        f" there (`{name}.features.audio.Audio`): their changes would go unjudged — fix: record"
        f" the exclusion with its reason: `update --exclude '{name}.features=why'`, or drop it"
    ) in flat
    assert f"  {name}.features (command line, no reason recorded)" in out


def test_M4_an_exclusion_recorded_by_update_is_listed_with_its_reason(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded(
        {"features/__init__.py": "", "features/audio.py": AUDIO.format(extra=""), "fine.py": FINE}
    )
    assert update_baseline(
        name, path, exclude={f"{name}.features": "needs the audio extra"}
    ).written
    assert load_baseline(path).exclude == {f"{name}.features": "needs the audio extra"}
    capsys.readouterr()

    assert main(["check", name, "--baseline", str(path), "--exclude", f"{name}.features"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [
        "excluded from the scan (1 pattern):",
        f"  {name}.features (baseline: needs the audio extra)",
    ]


def test_M4_a_check_time_exclusion_of_modules_the_baseline_never_saw_is_listed(packages) -> None:
    name, path = packages.recorded({"fine.py": FINE})
    packages.write(
        {"fine.py": FINE, "new.py": KW + "@dataclass\nclass New:\n    a: int\n"}, name=name
    )

    report = check_package(name, path, exclude=[f"{name}.new"])

    assert report.ok  # nothing recorded is hidden ...
    assert report.excluded == ((f"{name}.new", "", "command line"),)  # ... and it is said


def test_M4_the_fixit_for_a_failing_lazy_all_silences_it(packages, tmp_path: Path) -> None:
    lazy = (
        "def __getattr__(name):\n"
        "    if name == '__all__':\n"
        "        raise ImportError('no torch')\n"
        "    raise AttributeError(name)\n"
    )
    name = packages.write({"fine.py": FINE, "lazy.py": lazy})
    path = tmp_path / "api.json"

    result = update_baseline(name, path)
    failure = next(f for f in result.report.failures if f.code == "import-failed")
    assert failure.subject == f"{name}.lazy.__all__"
    pattern = f"{name}.lazy.__all__"
    assert f"`--exclude '{pattern}=why'`" in failure.fix

    assert update_baseline(name, path, exclude={pattern: "needs torch"}).written
    assert check_package(name, path).ok


def test_M1_fixit_for_a_subclass_of_an_allowlisted_base_leaves_the_base_alone(
    packages, tmp_path: Path
) -> None:
    base = KW + "@dataclass\nclass Point:\n    x: int\n    y: int\n"
    name = packages.write({"base.py": base})
    path = tmp_path / "api.json"
    assert update_baseline(name, path, allow_existing="callers unpack it since 1.0").written
    sub = "\n@dataclass(kw_only=True)\nclass Point3(Point):\n    z: int = 0\n"
    packages.write({"base.py": base + sub}, name=name)

    report = check_package(name, path)

    (failure,) = report.failures
    assert failure.subject == f"{name}.base.Point3"
    assert failure.fix.startswith(
        f"`{name}.base.Point` is allowlisted, so leave it positional: re-declare `x`, `y` in"
        f" `{name}.base.Point3` after `_: KW_ONLY`"
    )
    assert "`@dataclass(kw_only=True)`" not in failure.fix  # never "make the base keyword-only"


def test_M3_an_inserted_positional_parameter_says_who_breaks(packages, tmp_path: Path) -> None:
    point = KW + "@dataclass\nclass P:\n    a: int\n{mid}    b: int = 0\n"
    name = packages.write({"m.py": point.format(mid="")})
    path = tmp_path / "api.json"
    assert update_baseline(name, path, allow_existing="positional since 1.0").written
    packages.write({"m.py": point.format(mid="    c: int = 0\n")}, name=name)

    (finding,) = [f for f in check_package(name, path).failures if f.clause == "M3"]
    assert finding.change == (
        "inserted before `b` (with a default; calls passing `b` or a later parameter by position"
        " break)"
    )


def test_M3_a_fresh_update_says_new_not_no_version(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"fine.py": FINE})
    path = tmp_path / "api.json"

    assert main(["update", name, "--baseline", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"{name} 1.0.0: OK (1 public dataclass; baseline {path}, new)"


def test_M4_dataclasses_bound_without_all_are_counted_and_how_to_include_them(packages) -> None:
    name, path = packages.recorded(
        {
            "fine.py": FINE,
            "_impl.py": KW + "@dataclass(kw_only=True)\nclass Part:\n    a: int\n",
            "messages.py": "from PKG._impl import Part\n",
        }
    )

    text = check_package(name, path).render()

    assert (
        "not scanned (M4): 1 dataclass defined in private modules and bound by public modules"
        f" without `__all__`, e.g. `{name}.messages.Part`; to guard them, list them in the"
        " public module's `__all__`"
    ) in text
