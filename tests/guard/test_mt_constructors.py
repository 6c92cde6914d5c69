"""M1/M3 judge the constructor, not the field list (issue 12's fixtures).

``field(init=False)`` fields are no parameters; ``InitVar``s and a hand-written ``__init__``'s
parameters are; decorators such as ``deprecated`` do not hide the constructor; renames are only
claimed when unambiguous; fix-its name the class to change for every positional parameter.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from metatests import check_package, load_baseline, scan_package, update_baseline
from metatests.cli import main

HEAD = "from dataclasses import InitVar, KW_ONLY, dataclass, field\n\n"


def _pair(packages, tmp_path: Path, old: str, new: str, **write: str) -> tuple[str, Path]:
    """Record ``old`` (with its positional classes allowlisted) and write ``new`` over it."""
    name = packages.write({"models.py": HEAD + old})
    path = tmp_path / "api.json"
    result = update_baseline(name, path, allow_existing="positional on purpose (test)")
    assert result.written, result.report.render()
    packages.write({"models.py": HEAD + new}, name=name)
    return name, path


def test_M3_init_false_fields_are_not_parameters(packages, tmp_path: Path) -> None:
    old = """
@dataclass(kw_only=True)
class Toolset:
    client: str
    canonical: str = field(default="", init=False)
"""
    new = """
@dataclass(kw_only=True)
class Toolset:
    client: str
    failed_attempts: int = field(default=0, init=False)
    canonical: str = field(default="", init=False)
    derived_id: str = field(init=False)
"""
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    assert report.findings == ()
    params = load_baseline(path).classes[f"{name}.models.Toolset"].parameters or ()
    assert [p.name for p in params] == ["client"]


def test_M3_hand_written_init_is_the_constructor(packages, tmp_path: Path) -> None:
    # mcp.MCPToolset: a field appended without a default, but MCPToolset(client) still works.
    old = """
@dataclass(init=False)
class MCPToolset:
    client: str

    def __init__(self, client: str) -> None:
        self.client = client
"""
    new = old.replace("    client: str\n\n", "    client: str\n    _telemetry_id: str\n\n")
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    assert report.ok
    assert packages.notes(report) == [("M5", "match-args-extended", "models.MCPToolset", None)]


def test_M3_hand_written_init_breaks_are_reported(packages, tmp_path: Path) -> None:
    old = """
@dataclass(init=False)
class Client:
    url: str
    timeout: float
    verify: bool

    def __init__(self, *, url: str, timeout: float = 5.0, verify: bool = True) -> None:
        self.url, self.timeout, self.verify = url, timeout, verify
"""
    new = """
@dataclass(init=False)
class Client:
    url: str
    timeout: float
    verify: bool

    def __init__(self, *, endpoint: str, timeout: float) -> None:
        self.url, self.timeout, self.verify = endpoint, timeout, True
"""
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    assert packages.failures(report) == [
        ("M3", "default-removed", "models.Client", "timeout"),
        ("M3", "parameter-removed", "models.Client", "url"),
        ("M3", "parameter-removed", "models.Client", "verify"),
    ]
    # Lengths differ, so `endpoint` replacing `url` is not claimed as a rename.
    url = next(f for f in report.failures if f.parameter == "url")
    assert url.change == "removed `url`; added `endpoint` at its position"


@pytest.mark.parametrize(
    ("new", "verdict"),
    [
        pytest.param(
            "    a: int\n    offset: InitVar[int] = 0\n    b: int = 0\n"
            "    scale: InitVar[int] = 1\n",
            [("M3", "parameter-inserted", "models.P", "offset")],
            id="initvar-inserted",
        ),
        pytest.param(
            "    a: int\n    b: int = 0\n    scale: InitVar[int] = 1\n    extra: InitVar[int]\n",
            [("M3", "parameter-appended-without-default", "models.P", "extra")],
            id="initvar-appended-without-default",
        ),
        pytest.param(
            "    a: int\n    b: int = 0\n",
            [("M3", "parameter-removed", "models.P", "scale")],
            id="initvar-removed",
        ),
        pytest.param(
            "    a: int\n    b: int = 0\n    scale: InitVar[int]\n",
            [("M3", "default-removed", "models.P", "scale")],
            id="initvar-lost-its-default",
        ),
    ],
)
def test_M3_initvars_are_parameters(
    packages, tmp_path: Path, new: str, verdict: list[tuple[str, str, str, str]]
) -> None:
    old = (
        "@dataclass(kw_only=True)\nclass P:\n    a: int\n    b: int = 0\n"
        "    scale: InitVar[int] = 1\n"
    )
    body = "\n    def __post_init__(self, *args: int) -> None:\n        pass\n"
    name, path = _pair(
        packages, tmp_path, old + body, "@dataclass(kw_only=True)\nclass P:\n" + new + body
    )

    assert packages.failures(check_package(name, path)) == verdict


def test_M3_unambiguous_rename_is_reported_as_a_rename(packages, tmp_path: Path) -> None:
    old = "@dataclass(kw_only=True)\nclass P:\n    a: int\n    b: int = 0\n    c: int = 0\n"
    name, path = _pair(packages, tmp_path, old, old.replace("b: int", "bee: int"))

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", "parameter-renamed", "models.P", "b")]
    assert report.failures[0].change == "renamed to `bee`"


def test_M3_removal_with_an_addition_elsewhere_is_not_a_rename(packages, tmp_path: Path) -> None:
    # pydantic-ai's RunContext: `capability_loaded` went, `_run_capabilities_by_id` and more came.
    old = (
        "@dataclass(kw_only=True)\nclass Ctx:\n    deps: int\n    capability_loaded: bool = False\n"
    )
    new = (
        "@dataclass(kw_only=True)\nclass Ctx:\n    deps: int\n"
        "    _run_capabilities_by_id: dict = field(default_factory=dict)\n"
        "    retries: int = 0\n"
    )
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    assert packages.failures(report) == [
        ("M3", "parameter-removed", "models.Ctx", "capability_loaded")
    ]
    assert "renamed" not in report.render()
    assert report.failures[0].change == (
        "removed `capability_loaded`; added `_run_capabilities_by_id` at its position"
    )
    assert packages.notes(report) == [("M3", "parameter-appended", "models.Ctx", "retries")]


def test_M3_keyword_only_parameter_turning_positional_and_back(packages, tmp_path: Path) -> None:
    old = "@dataclass\nclass P:\n    a: int\n    _: KW_ONLY\n    b: int = 0\n"
    name, path = _pair(
        packages, tmp_path, old, "@dataclass\nclass P:\n    a: int\n    b: int = 0\n"
    )

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", "kind-changed", "models.P", "b")]
    assert report.failures[0].change == "became positional (was keyword-only)"


def test_M3_positional_append_before_keyword_only_ones_is_compatible(
    packages, tmp_path: Path
) -> None:
    old = "@dataclass\nclass P:\n    a: int\n    _: KW_ONLY\n    k: int = 0\n"
    new = "@dataclass\nclass P:\n    a: int\n    b: int = 0\n    _: KW_ONLY\n    k: int = 0\n"
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    assert report.ok
    assert packages.notes(report) == [
        ("M3", "parameter-appended", "models.P", "b"),
        ("M5", "match-args-extended", "models.P", None),
    ]


def _mimic_deprecated() -> str:
    # The technique of warnings.deprecated / typing_extensions.deprecated for classes.
    return """
import functools

def deprecated(cls):
    original_new = cls.__new__

    @functools.wraps(original_new)
    def __new__(klass, *args, **kwargs):
        if original_new is not object.__new__:
            return original_new(klass, *args, **kwargs)
        return original_new(klass)

    cls.__new__ = staticmethod(__new__)
    return cls
"""


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(_mimic_deprecated(), id="mimic"),
        pytest.param(
            "from warnings import deprecated as _d\n\n"
            "def deprecated(cls):\n    return _d('old')(cls)\n",
            id="warnings.deprecated",
            marks=pytest.mark.skipif(sys.version_info < (3, 13), reason="Python 3.13+"),
        ),
    ],
)
def test_M1_deprecated_does_not_hide_the_constructor(packages, source: str) -> None:
    name = packages.write(
        {
            "models.py": HEAD
            + source
            + "\n@deprecated\n@dataclass(kw_only=True)\nclass Old:\n    a: int\n    b: int = 0\n"
        }
    )

    info = scan_package(name).classes[f"{name}.models.Old"]

    assert [(p.name, p.kind) for p in info.parameters or ()] == [
        ("a", "keyword_only"),
        ("b", "keyword_only"),
    ]
    assert info.positional == ()


def test_M1_fix_names_each_class_declaring_a_positional_parameter(packages, tmp_path: Path) -> None:
    name = packages.write(
        {
            "models.py": HEAD
            + """
@dataclass
class _Base:
    x: int

@dataclass
class Child(_Base):
    y: int

@dataclass(kw_only=True)
class _KwBase:
    k: int = 0

@dataclass
class OwnOnly(_KwBase):
    z: int = 0

@dataclass(init=False)
class Manual:
    a: int

    def __init__(self, a: int, *, b: int = 0) -> None:
        self.a = a
"""
        }
    )
    report = update_baseline(name, tmp_path / "api.json").report
    fixes = {f.subject.removeprefix(f"{name}.models."): f.fix for f in report.failures}

    assert fixes["Child"].startswith(
        f"declare `{name}.models._Base` (inherited) `@dataclass(kw_only=True)`"
        " (or put `_: KW_ONLY` before `x`); declare"
        f" `{name}.models.Child` `@dataclass(kw_only=True)` (or put `_: KW_ONLY` before `y`)"
    )
    # The keyword-only base is not blamed: only the class's own field is positional.
    assert "_KwBase" not in fixes["OwnOnly"]
    assert fixes["OwnOnly"].startswith(f"declare `{name}.models.OwnOnly` `@dataclass")
    assert fixes["Manual"].startswith(
        f"make `a` keyword-only in the hand-written `{name}.models.Manual.__init__`"
    )


def test_M1_max_positional_allows_n_positional_parameters(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write(
        {
            "models.py": HEAD
            + """
@dataclass
class Agent:
    model: str | None = None
    _: KW_ONLY
    name: str = ""

@dataclass
class Pair:
    a: int
    b: int = 0
"""
        }
    )
    path = tmp_path / "api.json"

    assert main(["update", name, "--baseline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "[M1]" in out and "Agent" in out
    assert main(["update", name, "--baseline", str(path), "--max-positional", "1"]) == 1
    out = capsys.readouterr().out
    assert (
        f"[M1] {name}.models.Pair: takes positional parameters `a`, `b`; at most 1 allowed" in out
    )
    assert "Agent" not in out.split("notes:")[0]
    assert "put `_: KW_ONLY` before `b`)" in out  # only the parameter beyond the threshold

    assert main(["update", name, "--baseline", str(path), "--max-positional", "2"]) == 0
    assert json.loads(path.read_text())["max_positional"] == 2
    capsys.readouterr()
    assert main(["check", name, "--baseline", str(path)]) == 0
    assert "positional parameters allowed per class: 2" in capsys.readouterr().out
    assert main(["check", name, "--baseline", str(path), "--max-positional", "1"]) == 2
    assert "records max_positional 2, not 1" in capsys.readouterr().err


def test_M3_format_1_baseline_is_read_and_migrated_without_false_alarms(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write(
        {
            "models.py": HEAD
            + "@dataclass(kw_only=True)\nclass P:\n    a: int\n"
            + "    cache: int = field(default=0, init=False)\n    b: int = 0\n"
        }
    )
    path = tmp_path / "api.json"
    fields = [("a", False), ("cache", True), ("b", True)]  # format 1 recorded init=False fields
    path.write_text(
        json.dumps(
            {
                "format": 1,
                "package": name,
                "version": "1.0.0",
                "allowlist": {},
                "classes": {
                    f"{name}.models.P": {
                        "fields": [
                            {"name": n, "has_default": d, "kw_only": True} for n, d in fields
                        ],
                        "match_args": [],
                    }
                },
            }
        )
    )

    report = check_package(name, path)
    assert report.ok and packages.failures(report) == []
    assert report.migrated_from == 1
    assert "the baseline is in format 1" in report.render()

    assert main(["update", name, "--baseline", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["format"] == 3
    assert data["classes"][f"{name}.models.P"]["parameters"] == [
        {"has_default": False, "kind": "keyword_only", "name": "a"},
        {"has_default": True, "kind": "keyword_only", "name": "b"},
    ]
    assert check_package(name, path).findings == ()


@pytest.mark.parametrize("order_matters", [True, False])
def test_M3_keyword_only_insertion_follows_the_contract_order_rule(
    packages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order_matters: bool
) -> None:
    monkeypatch.setattr("metatests.rules.KEYWORD_ONLY_ORDER", order_matters)
    old = "@dataclass(kw_only=True)\nclass P:\n    a: int\n    b: int = 0\n"
    new = "@dataclass(kw_only=True)\nclass P:\n    a: int\n    n: int = 0\n    b: int = 0\n"
    name, path = _pair(packages, tmp_path, old, new)

    report = check_package(name, path)

    verdict = [("M3", "parameter-inserted", "models.P", "n")]
    assert packages.failures(report) == (verdict if order_matters else [])
    assert packages.notes(report) == ([] if order_matters else verdict)
