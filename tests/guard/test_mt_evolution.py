"""M3 (fields only appended, with a default) and M5 (``__match_args__``) against a baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metatests import check_package, load_baseline, update_baseline
from metatests.baseline import dumps_baseline


def _model(body: str, *, decorator: str = "@dataclass(kw_only=True)") -> dict[str, str]:
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return {
        "models.py": f"from dataclasses import dataclass\n\n{decorator}\nclass Point:\n{lines}\n"
    }


def _recorded(packages, body: str, **kwargs: str) -> tuple[str, Path]:
    return packages.recorded(_model(body, **kwargs))


def _recorded_positional(packages, tmp_path: Path, body: str, why: str) -> tuple[str, Path]:
    """Record a plain (positional) dataclass that the baseline's allowlist excuses from M4."""
    name = packages.write(_model(body, decorator="@dataclass"))
    path = tmp_path / "api.json"
    path.write_text(
        json.dumps(
            {
                "format": 1,
                "package": name,
                "version": "1.0.0",
                "allowlist": {f"{name}.models.Point": why},
                "classes": {},
            }
        )
    )
    assert update_baseline(name, path).written
    return name, path


def _evolve(packages, name: str, body: str, *, version: str = "1.0.0", **kwargs: str) -> None:
    packages.write(
        {"__init__.py": f'__version__ = "{version}"\n', **_model(body, **kwargs)}, name=name
    )


@pytest.mark.parametrize(
    ("now", "code", "field"),
    [
        pytest.param("x: int\nz: int\ny: int = 0", "parameter-inserted", "z", id="without-default"),
        pytest.param(
            "x: int\nz: int = 5\ny: int = 0", "parameter-inserted", "z", id="with-default"
        ),
    ],
)
def test_M3_field_inserted_in_the_middle_fails(packages, now: str, code: str, field: str) -> None:
    name, path = _recorded(packages, "x: int\ny: int = 0")
    _evolve(packages, name, now)

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", code, "models.Point", field)]
    assert report.failures[0].change.startswith("inserted keyword-only before `y`")
    assert "move `z` after the last keyword-only parameter, with a default" in (
        report.failures[0].render()
    )
    assert "bump the major version (the minor at 0.x)" in report.failures[0].render()


@pytest.mark.parametrize(
    ("before", "now", "code", "field", "change", "fix"),
    [
        pytest.param(
            "x: int\ny: int = 0",
            "x: int\ny: int = 0\nz: int",
            "parameter-appended-without-default",
            "z",
            "appended keyword-only without a default (calls that omit it break)",
            "give `z` a default",
            id="field-appended-without-default",
        ),
        pytest.param(
            "x: int\ny: int = 0",
            "x: int\nwhy: int = 0",
            "parameter-renamed",
            "y",
            "renamed to `why`",
            "restore the name `y`",
            id="field-renamed",
        ),
        pytest.param(
            "x: int\ny: int = 0\nz: int = 0",
            "x: int\nz: int = 0",
            "parameter-removed",
            "y",
            "removed",
            "restore `y`",
            id="field-removed",
        ),
        pytest.param(
            "x: int\ny: int = 0",
            "y: int = 0\nx: int",
            "parameters-reordered",
            None,
            "keyword-only parameters reordered: recorded `x`, `y`, now `y`, `x`",
            "restore the order `x`, `y`",
            id="fields-reordered",
        ),
        pytest.param(
            "x: int\ny: int = 0",
            "x: int\ny: int",
            "default-removed",
            "y",
            "lost its default",
            "give `y` its default back",
            id="field-losing-its-default",
        ),
    ],
)
def test_M3_breaking_field_change_fails(
    packages,
    before: str,
    now: str,
    code: str,
    field: str | None,
    change: str,
    fix: str,
) -> None:
    name, path = _recorded(packages, before)
    _evolve(packages, name, now)

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", code, "models.Point", field)]
    assert (report.failures[0].change, report.failures[0].fix) == (change, fix)


@pytest.mark.parametrize(
    ("now", "code", "field", "recorded"),
    [
        pytest.param(
            "x: int\ny: int = 0\nz: str = ''",
            "parameter-appended",
            "z",
            [("x", False), ("y", True), ("z", True)],
            id="field-appended-with-default",
        ),
        pytest.param(
            "x: int = 1\ny: int = 0",
            "default-added",
            "x",
            [("x", True), ("y", True)],
            id="field-gaining-a-default",
        ),
    ],
)
def test_M3_compatible_field_change_passes_and_update_records_it(
    packages, now: str, code: str, field: str, recorded: list[tuple[str, bool]]
) -> None:
    name, path = _recorded(packages, "x: int\ny: int = 0")
    _evolve(packages, name, now)

    report = check_package(name, path)
    assert report.ok
    assert packages.notes(report) == [("M3", code, "models.Point", field)]

    assert update_baseline(name, path).written
    params = load_baseline(path).classes[f"{name}.models.Point"].parameters or ()
    assert [(p.name, p.has_default, p.kind) for p in params] == [
        (param, default, "keyword_only") for param, default in recorded
    ]
    assert check_package(name, path).findings == ()


def test_M3_class_removed_fails(packages) -> None:
    name, path = _recorded(packages, "x: int")
    packages.write(
        {"models.py": _model("a: int")["models.py"].replace("Point", "Other")}, name=name
    )

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", "class-removed", "models.Point", None)]
    assert packages.notes(report) == [("M3", "class-added", "models.Other", None)]


def test_M3_new_keyword_only_class_passes_and_update_records_it(packages) -> None:
    name, path = _recorded(packages, "x: int")
    packages.write(
        {
            "models.py": _model("x: int")["models.py"],
            "extra.py": _model("a: int")["models.py"].replace("Point", "New"),
        },
        name=name,
    )

    assert packages.notes(check_package(name, path)) == [("M3", "class-added", "extra.New", None)]
    assert update_baseline(name, path).written
    assert f"{name}.extra.New" in load_baseline(path).classes


def test_M3_major_bump_allows_a_break_and_update_records_it(packages) -> None:
    name, path = _recorded(packages, "x: int\ny: int = 0")
    _evolve(packages, name, "y: int = 0\nx: int\nz: int", version="2.0.0")

    report = check_package(name, path)

    assert report.ok and report.major_bump
    assert packages.verdict(report.allowed) == [
        ("M3", "parameter-appended-without-default", "models.Point", "z"),
        ("M3", "parameters-reordered", "models.Point", None),
    ]
    assert "allowed by the breaking version step (1.0.0 -> 2.0.0)" in report.render()
    result = update_baseline(name, path)
    assert result.written
    recorded = load_baseline(path)
    assert recorded.version == "2.0.0"
    assert [p.name for p in recorded.classes[f"{name}.models.Point"].parameters or ()] == [
        "y",
        "x",
        "z",
    ]
    assert check_package(name, path).findings == ()


def test_M3_update_refuses_a_break_without_the_major_bump(packages) -> None:
    name, path = _recorded(packages, "x: int\ny: int = 0")
    before = path.read_bytes()
    _evolve(packages, name, "x: int", version="1.9.0")

    result = update_baseline(name, path)

    assert not result.written
    assert packages.failures(result.report) == [("M3", "parameter-removed", "models.Point", "y")]
    assert path.read_bytes() == before


def test_M3_major_version_read_from_distribution_metadata(packages, tmp_path: Path) -> None:
    name = packages.write({"__init__.py": "", **_model("x: int\ny: int = 0")})
    packages.write_distribution(name, "1.4.0")
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    assert load_baseline(path).version == "1.4.0"

    packages.write({"__init__.py": "", **_model("x: int")}, name=name)
    packages.write_distribution(name, "2.0.0")

    report = check_package(name, path)
    assert report.ok and report.major_bump
    assert packages.verdict(report.allowed) == [("M3", "parameter-removed", "models.Point", "y")]


def test_M3_baseline_is_sorted_stable_json(packages) -> None:
    name, path = _recorded(packages, "b: int\na: int = 0")
    text = path.read_text()

    data = json.loads(text)
    assert text == dumps_baseline(load_baseline(path))
    assert list(data) == sorted(data)
    # One parameter per line: a change to a parameter is a one-line diff.
    assert '        {"has_default": false, "kind": "keyword_only", "name": "b"},\n' in text
    assert data == {
        "allowlist": {},
        "classes": {
            f"{name}.models.Point": {
                "fields": [{"init": True, "name": "b"}, {"init": True, "name": "a"}],
                "match_args": [],
                "parameters": [
                    {"has_default": False, "kind": "keyword_only", "name": "b"},
                    {"has_default": True, "kind": "keyword_only", "name": "a"},
                ],
            }
        },
        "accepted": [],
        "exclude": {},
        "format": 3,
        "max_positional": 0,
        "package": name,
        "version": "1.0.0",
    }
    assert not update_baseline(name, path).written  # nothing changed: file untouched
    assert path.read_text() == text


def test_M5_match_args_changed_fails(packages) -> None:
    name, path = _recorded(packages, "x: int\ny: int = 0\n__match_args__ = ('x', 'y')")
    _evolve(packages, name, "x: int\ny: int = 0\n__match_args__ = ('y', 'x')")

    report = check_package(name, path)

    assert packages.failures(report) == [("M5", "match-args-changed", "models.Point", None)]
    assert (
        report.failures[0].fix
        == "restore `__match_args__` to ('x', 'y') (it may only grow at the end)"
    )


def test_M5_keyword_only_append_leaves_match_args_unchanged(packages) -> None:
    name, path = _recorded(packages, "x: int")
    _evolve(packages, name, "x: int\ny: int = 0")

    report = check_package(name, path)

    assert packages.notes(report) == [("M3", "parameter-appended", "models.Point", "y")]
    assert load_baseline(path).classes[f"{name}.models.Point"].match_args == ()


def test_M5_positional_append_with_default_extends_match_args_and_passes(
    packages, tmp_path: Path
) -> None:
    name, path = _recorded_positional(
        packages, tmp_path, "x: int", "a coordinate, unpacked positionally"
    )
    _evolve(packages, name, "x: int\ny: int = 0", decorator="@dataclass")

    report = check_package(name, path)

    assert report.ok
    assert packages.notes(report) == [
        ("M3", "parameter-appended", "models.Point", "y"),
        ("M5", "match-args-extended", "models.Point", None),
    ]
    assert update_baseline(name, path).written
    assert load_baseline(path).classes[f"{name}.models.Point"].match_args == ("x", "y")


def test_M5_positional_reorder_changes_match_args_too(packages, tmp_path: Path) -> None:
    name, path = _recorded_positional(packages, tmp_path, "x: int\ny: int", "a coordinate")
    _evolve(packages, name, "y: int\nx: int", decorator="@dataclass")

    assert packages.failures(check_package(name, path)) == [
        ("M3", "parameters-reordered", "models.Point", None),
        ("M5", "match-args-changed", "models.Point", None),
    ]
