"""Issue 11.4: the wheel ships no test of the project inside its installed packages."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _packaged_roots() -> list[str]:
    """The ``include`` patterns of ``[tool.setuptools.packages.find]`` (a tiny TOML read, so
    the test runs on Python 3.10 without tomllib)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[tool.setuptools.packages.find]", 1)[1].split("\n[", 1)[0]
    match = re.search(r"include\s*=\s*\[([^\]]*)\]", section)
    assert match, "pyproject.toml: [tool.setuptools.packages.find] has no include list"
    return [p.rstrip("*") for p in re.findall(r'"([^"]+)"', match.group(1))]


def test_wheel_packages_hold_no_test_modules() -> None:
    roots = _packaged_roots()
    assert "metatests" in roots  # the guard is shipped; its tests must not be

    shipped = [
        str(path.relative_to(ROOT))
        for root in roots
        for path in sorted((ROOT / root).rglob("*.py"))
        if path.name.startswith("test_") or path.name.endswith("_test.py")
    ]

    assert shipped == []


def test_polyloop_meta_test_lives_in_the_test_tree() -> None:
    assert (ROOT / "tests" / "guard" / "test_polyloop_api.py").exists()
    assert not (ROOT / "metatests" / "test_polyloop_api.py").exists()
