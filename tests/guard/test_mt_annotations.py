"""``check --format github`` (issue 37, item 4): each annotation names the file and the line of
the ``class`` statement it is about, relative to the working directory; one the scan cannot
place for sure (``make_dataclass``, a class written twice) names no file, never a wrong one."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from metatests import scan_package
from metatests.cli import main
from metatests.sources import SourceLines, class_source

KW = "@dataclass(kw_only=True)"
POS = "@dataclass"

MODELS = '''\
"""Models."""
from dataclasses import dataclass, make_dataclass

FLAG = True


{deco}
class Point:
    x: int


class Outer:
    {deco}
    class Inner:
        y: int


if FLAG:
    {deco}
    class Twice:
        z: int
else:
    {deco}
    class Twice:
        z: int


Made = make_dataclass("Made", [("w", int)], kw_only={kw})
'''


def _models(*, keyword_only: bool) -> str:
    deco = KW if keyword_only else POS
    return MODELS.format(deco=deco, kw=keyword_only)


def _line_of(text: str, statement: str) -> int:
    return text.splitlines().index(statement) + 1


def _annotations(out: str) -> dict[str, str]:
    """Class (without the package) -> the ``file=…,line=…,`` part of its M1 annotation."""
    found = {}
    for line in out.splitlines():
        match = re.match(r"::error (.*?)title=M1 positional::\[M1\] \w+\.([\w.]+)", line)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def test_M1_github_annotations_point_at_the_class_statement(
    packages: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = packages.write({"models.py": _models(keyword_only=True)})
    baseline = tmp_path / "api.json"
    assert main(["update", name, "--baseline", str(baseline)]) == 0
    packages.write({"models.py": _models(keyword_only=False)}, name=name)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()

    assert main(["check", name, "--baseline", "api.json", "--format", "github"]) == 1
    out = capsys.readouterr().out
    found = _annotations(out)
    assert found, out

    text = _models(keyword_only=False)
    models = f"packages/v2/{name}/models.py"  # relative to the working directory
    assert found == {
        "models.Point": f"file={models},line={_line_of(text, 'class Point:')},",
        "models.Outer.Inner": f"file={models},line={_line_of(text, '    class Inner:')},",
        "models.Twice": "",  # two class statements: which one is meant cannot be told
        "models.Made": "",  # made by make_dataclass: no class statement at all
    }


def test_M1_an_annotation_outside_the_working_directory_keeps_the_absolute_path(
    packages: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = packages.write({"models.py": _models(keyword_only=True)})
    baseline = tmp_path / "api.json"
    assert main(["update", name, "--baseline", str(baseline)]) == 0
    packages.write({"models.py": _models(keyword_only=False)}, name=name)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()

    assert main(["check", name, "--baseline", str(baseline), "--format", "github"]) == 1
    point = _annotations(capsys.readouterr().out)["models.Point"]
    line = _line_of(_models(keyword_only=False), "class Point:")
    assert point == f"file={tmp_path}/packages/v2/{name}/models.py,line={line},"


def test_M4_the_scan_records_each_class_source_and_carries_it_from_the_child(packages: Any) -> None:
    name = packages.write({"models.py": _models(keyword_only=True)})
    classes = scan_package(name).classes  # scanned in a child process, sent back as JSON
    path, line = classes[f"{name}.models.Point"].source or ("", 0)
    assert Path(path).name == "models.py" and Path(path).parent.name == name
    assert line == _line_of(_models(keyword_only=True), "class Point:")
    assert classes[f"{name}.models.Twice"].source is None
    assert classes[f"{name}.models.Made"].source is None


def test_class_source_reads_each_file_once_and_gives_up_on_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mod_for_sources.py"
    path.write_text(textwrap.dedent("class A:\n    pass\n\n\nclass B:\n    pass\n"))
    namespace: dict[str, object] = {"__name__": "mod_for_sources"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    a, b = namespace["A"], namespace["B"]
    assert isinstance(a, type) and isinstance(b, type)
    monkeypatch.setattr("inspect.getsourcefile", lambda cls: str(path))
    cache = SourceLines()
    assert class_source(a, cache) == (str(path), 1)
    path.write_text("")  # read once: the cached lines still answer for B
    assert class_source(b, cache) == (str(path), 5)
    assert class_source(a, SourceLines()) is None  # a file without the class: no line
