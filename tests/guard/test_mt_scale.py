"""The report at the scale of a large package (issue 23, item 1): a summary first, findings
sharing a cause grouped under the base class that caused them, import failures grouped by
message, the few individual breaks first; ``--format json`` holds every finding,
``--junit`` and ``--format github`` give CI the same verdict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from metatests import check_package, update_baseline
from metatests.cli import main

MODULES, PER_MODULE = 20, 50  # 1,000 dataclasses sharing one base

BASE = (
    "from dataclasses import dataclass\n\n"
    "@dataclass(kw_only=True)\nclass Base:\n    x: int\n{inserted}    y: int = 0\n"
)


def _module(m: int, *, removed: int | None = None) -> str:
    lines = ["from dataclasses import dataclass", "from PKG.base import Base", ""]
    for i in range(PER_MODULE):
        n = m * PER_MODULE + i
        lines += ["@dataclass(kw_only=True)", f"class C{n}(Base):"]
        lines.append("    pass" if n == removed else f"    f{n}: int = 0")
        lines.append("")
    return "\n".join(lines)


def _version(*, changed: bool) -> dict[str, str]:
    files = {"base.py": BASE.format(inserted="    z: int = 0\n" if changed else "")}
    for m in range(MODULES):
        files[f"m{m}.py"] = _module(m, removed=7 if changed else None)
    if changed:  # ten new modules failing with one cause, one with another
        files |= {f"gpu{i}.py": "import torch_not_installed_here\n" for i in range(10)}
        files["odd.py"] = "raise RuntimeError('odd')\n"
    return files


@pytest.fixture
def large(packages, tmp_path: Path) -> tuple[str, Path]:
    name = packages.write(_version(changed=False))
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    packages.write(_version(changed=True), name=name)
    return name, path


def test_M3_a_thousand_classes_sharing_a_changed_base_make_a_short_report(
    large: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = large

    assert main(["check", name, "--baseline", str(path)]) == 1
    text = capsys.readouterr().out
    lines = text.splitlines()

    assert len(lines) < 100, text
    assert max(map(len, lines)) <= 240 or lines[0] == max(lines, key=len)
    assert lines[0].startswith(f"{name} 1.0.0: FAILED, 1013 problems (1001 public dataclasses;")
    # The summary: counts per rule, before any finding.
    assert (
        lines[1] == "by rule: M3 1002 failing in 1001 classes; M4 11 failing in 11 modules, 1 note"
    )
    # The one individual break comes first, then the groups.
    assert lines[2] == (
        f"  [M3] {name}.m0.C7, parameter `f7`: removed — fix: restore `f7`, or bump the major"
        " version (the minor at 0.x) or accept it:"
        " `update --accept-break CLASS=REASON`"
    )
    assert lines[3] == f"  [M4] {name}.odd: failed to import (RuntimeError: odd) — fix: make it" + (
        f" importable, or leave it out: `--exclude '{name}.odd=why'`"
    )
    group = " ".join(line.strip() for line in lines[4:7])
    assert group == (
        f"[M3] `{name}.base.Base` and 1000 classes deriving from it (1001 findings, e.g."
        f" `{name}.m0.C0`, `{name}.m0.C1` and 998 more): inserted keyword-only before `y` (with"
        " a default; no keyword call breaks, but M3 keeps the recorded order)"
    )
    assert lines[7].startswith("      fix: move `z` after the last keyword-only parameter")
    assert lines[7].endswith("(for each)")
    torch = lines.index(next(line for line in lines if "10 modules" in line))
    assert (
        "failed to import (ModuleNotFoundError: No module named 'torch_not_installed_here')"
        in (lines[torch])
    )
    assert f"`--exclude '{name}.gpu*=why'` (check that it matches only these)" in lines[torch + 1]


def test_M3_the_json_report_holds_every_finding(
    large: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = large

    assert main(["check", name, "--baseline", str(path), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)

    schema = json.loads(
        (Path(__file__).parents[2] / "metatests" / "report.schema.json").read_text()
    )
    assert data["schema"] == schema["properties"]["schema"]["const"]
    assert set(schema["required"]) <= data.keys()
    finding_keys = set(schema["properties"]["findings"]["items"]["required"])
    assert all(finding_keys <= f.keys() for f in data["findings"])
    inserted = [f for f in data["findings"] if f["code"] == "parameter-inserted"]
    assert len(inserted) == 1001
    assert {f["cause"] for f in inserted} == {f"{name}.base.Base"}
    assert {f["verdict"] for f in inserted} == {"failure"}
    assert data["counts"]["M3"] == {"failure": 1002, "failing_subjects": 1001}
    assert sum(f["code"] == "import-failed" for f in data["findings"]) == 11
    assert data["ok"] is False and data["classes"] == 1001


def test_M3_junit_and_github_outputs_give_the_same_verdict(
    large: tuple[str, Path], packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = large
    junit = tmp_path / "guard.xml"

    code = main(
        ["check", name, "--baseline", str(path), "--format", "github", "--junit", str(junit)]
    )

    assert code == 1
    out = capsys.readouterr().out
    annotations = [line for line in out.splitlines() if line.startswith("::error ")]
    # One per entry of the problem list: the removal, the odd module, the group, the 10 modules.
    assert len(annotations) == 4
    # Each at the class statement it is about (issue 37, item 4): C7 in m0.py, the group at its
    # base's; a module failing to import has no class, so no file.
    c7 = _module(0).splitlines().index("class C7(Base):") + 1
    assert annotations[0].startswith(
        f"::error file={packages.root(name)}/{name}/m0.py,line={c7},"
        "title=M3 parameter-removed::[M3] "
    )
    group = next(line for line in annotations if "classes deriving from it" in line)
    assert group.startswith(f"::error file={packages.root(name)}/{name}/base.py,line=4,title=M3 ")
    assert sum(line.startswith("::error title=M4 import-failed") for line in annotations) == 2
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("5", "2")
    failed = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    assert failed["M1"] is None and failed["M3"] is not None
    assert (failed["M3"].text or "").count("\n") == 1001  # every finding, ungrouped


def test_M3_a_clean_check_writes_a_passing_junit(packages, tmp_path: Path) -> None:
    name = packages.write({"base.py": BASE.format(inserted="")})
    path = tmp_path / "api.json"
    assert update_baseline(name, path).written
    junit = tmp_path / "ok.xml"

    assert main(["check", name, "--baseline", str(path), "--junit", str(junit)]) == 0
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"
    assert check_package(name, path).ok


WRAPPER = '''\
import functools
from dataclasses import dataclass

def keyword_only(cls):
    """Like the transformers configs: the __init__ callers meet refuses positional arguments."""
    init = cls.__init__

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if args:
            raise TypeError("keyword arguments only")
        init(self, **kwargs)

    cls.__init__ = wrapper
    return cls

@keyword_only
@dataclass{kw}
class BaseConfig:
    vocab: int = 0
'''


def _transformers_shape(*, changed: bool) -> dict[str, str]:
    """300 wrapped configs whose unwrapped fields turn keyword-only (no call breaks), 5 plain
    dataclasses with a real break, 200 modules failing on one missing dependency."""
    kw = "(kw_only=True)" if changed else ""
    files = {"configs/__init__.py": "", "configs/base.py": WRAPPER.format(kw=kw)}
    for m in range(10):
        body = [
            "from dataclasses import dataclass",
            "from PKG.configs.base import BaseConfig, keyword_only",
            "",
        ]
        for i in range(30):
            n = m * 30 + i
            body += [
                "@keyword_only",
                f"@dataclass{kw}",
                f"class Config{n}(BaseConfig):",
                f"    size{n}: int = 0",
                "",
            ]
        files[f"configs/c{m}.py"] = "\n".join(body)
    plain = ["from dataclasses import dataclass", ""]
    for n in range(5):
        plain += ["@dataclass(kw_only=True)", f"class Arguments{n}:", "    output: str = ''"]
        plain += ([] if changed else ["    logging_dir: str = ''"]) + [""]
    files["training.py"] = "\n".join(plain)
    if changed:
        files |= {f"models/m{i}.py": "import torch_not_installed_here\n" for i in range(200)}
        files["models/__init__.py"] = ""
    return files


def test_M3_a_transformers_shaped_pair_names_the_few_real_breaks_first(
    packages, tmp_path: Path
) -> None:
    name = packages.write(_transformers_shape(changed=False))
    path = tmp_path / "api.json"
    assert update_baseline(name, path, allow_existing="positional before the guard").written
    packages.write(_transformers_shape(changed=True), name=name)

    report = check_package(name, path)
    lines = report.render().splitlines()

    assert len(lines) < 100
    # The five real breaks come first, one line each; no wrapped config is reported broken.
    assert [line.split(":")[0] for line in lines[2:7]] == [
        f"  [M3] {name}.training.Arguments{n}, parameter `logging_dir`" for n in range(5)
    ]
    assert {f.subject for f in report.failures if f.clause == "M3"} == {
        f"{name}.training.Arguments{n}" for n in range(5)
    }
    kind_notes = [f for f in report.notes if f.code == "kind-changed"]
    assert len(kind_notes) == 301 + 300  # `vocab` in all 301 classes, `size<n>` in 300
    assert all(
        "no call breaks: callers meet a `(*args, **kwargs)` wrapper" in f.change for f in kind_notes
    )
    text = "\n".join(lines)
    # The stale allowlist entries and the __match_args__ changes: one group each, named after
    # the base they share.
    assert f"[M2] `{name}.configs.base.BaseConfig` and 300 classes deriving from it" in text
    assert "`__match_args__` changed from (…) to () (positional `case` patterns break)" in (
        " ".join(text.split())
    )
    assert "200 modules failed to import (ModuleNotFoundError: No module named" in text
    assert f"`--exclude '{name}.models.m*=why'`" in " ".join(text.split())


def test_M3_update_in_json_says_whether_it_wrote_and_stays_pure_json(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"base.py": BASE.format(inserted="")})
    path = str(tmp_path / "api.json")

    assert main(["update", name, "--baseline", path, "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)  # nothing but the document on stdout
    assert (first["command"], first["written"], first["baseline"]["fresh"]) == (
        "update",
        True,
        True,
    )
    assert main(["update", name, "--baseline", path, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] is False
