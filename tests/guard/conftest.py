"""Throwaway packages for the metatests' own tests.

Each test writes small packages under ``tmp_path`` with a unique name, so the module cache of one
test never leaks into another. ``write`` with the name of an existing package writes the next
version of it into a fresh directory and forgets the old modules: the way to model an evolution.
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from metatests import Finding, Report, update_baseline

_PREFIX = re.compile(r"^mtpkg_[0-9a-f]+\.?")


class Packages:
    def __init__(self, tmp_path: Path) -> None:
        self._tmp = tmp_path
        self._count = 0
        self._roots: dict[str, str] = {}

    def write(self, files: dict[str, str | None], *, name: str | None = None) -> str:
        """Write a package and return its name; ``__init__.py`` defaults to version 1.0.0.

        ``PKG`` in a file's text stands for the package's (unique) name; ``None`` as a file's
        text leaves the file out.
        """
        name = name or f"mtpkg_{uuid.uuid4().hex[:12]}"
        self._count += 1
        root = self._tmp / "packages" / f"v{self._count}"
        files = {"__init__.py": '__version__ = "1.0.0"\n', **files}
        for relative, text in files.items():
            if text is None:  # no such file: e.g. a namespace package without __init__.py
                continue
            path = root / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).replace("PKG", name), encoding="utf-8")
        self._forget(name)
        sys.path.insert(0, str(root))
        self._roots[name] = str(root)
        importlib.invalidate_caches()
        return name

    def recorded(self, files: dict[str, str | None]) -> tuple[str, Path]:
        """Write a package and record its baseline in ``api.json`` beside the packages: the
        starting point of most tests. Returns (package name, baseline path)."""
        name = self.write(files)
        path = self._tmp / "api.json"
        assert update_baseline(name, path).written
        return name, path

    def root(self, name: str) -> str:
        """The sys.path entry holding the current version of ``name``."""
        return self._roots[name]

    def write_distribution(self, name: str, version: str) -> None:
        """Make ``importlib.metadata`` report ``version`` for the package ``name``."""
        info = Path(self._roots[name]) / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        (info / "top_level.txt").write_text(f"{name}\n", encoding="utf-8")
        importlib.invalidate_caches()

    def _forget(self, name: str) -> None:
        old = self._roots.pop(name, None)
        if old is not None and old in sys.path:
            sys.path.remove(old)
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]

    @staticmethod
    def verdict(findings: tuple[Finding, ...]) -> list[tuple[str, str, str, str | None]]:
        """(clause, code, subject without the package prefix, field), sorted: the exact verdict."""
        return sorted((f.clause, f.code, _PREFIX.sub("", f.subject), f.parameter) for f in findings)

    def failures(self, report: Report) -> list[tuple[str, str, str, str | None]]:
        return self.verdict(report.failures)

    def notes(self, report: Report) -> list[tuple[str, str, str, str | None]]:
        return self.verdict(report.notes)

    def cleanup(self) -> None:
        for name in list(self._roots):
            self._forget(name)


@pytest.fixture
def packages(tmp_path: Path) -> Iterator[Packages]:
    made = Packages(tmp_path)
    yield made
    made.cleanup()
