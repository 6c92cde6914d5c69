"""M1 (public dataclasses are keyword-only) and M2 (the allowlist only shrinks)."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

import pytest

from metatests import check_package, scan_package, update_baseline

POSITIONAL = dedent("""
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: int
        y: int = 0
""")

KEYWORD_ONLY = dedent("""
    from dataclasses import dataclass

    @dataclass(kw_only=True, frozen=True)
    class Point:
        x: int
        y: int = 0
""")


def _allowlist(path: Path, entries: dict[str, str]) -> None:
    data = json.loads(path.read_text())
    data["allowlist"] = entries
    path.write_text(json.dumps(data))


def test_M1_positional_dataclass_fails(packages, tmp_path: Path) -> None:
    name = packages.write({"models.py": POSITIONAL})
    result = update_baseline(name, tmp_path / "api.json")

    assert not result.written
    assert not (tmp_path / "api.json").exists()
    assert packages.failures(result.report) == [("M1", "positional", "models.Point", None)]
    (finding,) = result.report.failures
    assert finding.change == "takes positional parameters `x`, `y`"
    assert "`@dataclass(kw_only=True)`" in finding.fix
    assert "allowlist with a reason" in finding.fix


def test_M1_keyword_only_dataclass_passes(packages, tmp_path: Path) -> None:
    name = packages.write({"models.py": KEYWORD_ONLY})
    result = update_baseline(name, tmp_path / "api.json")

    assert result.written
    assert packages.failures(result.report) == []
    assert check_package(name, tmp_path / "api.json").findings == ()


@pytest.mark.parametrize(
    ("imported", "fully", "partly"),
    [
        pytest.param(
            "KW_ONLY",
            ["_: KW_ONLY", "a: int", "b: int = 0"],
            ["a: int", "_: KW_ONLY", "b: int = 0"],
            id="KW_ONLY-sentinel-after-a-field-leaves-it-positional",
        ),
        pytest.param(
            "field",
            ["a: int = field(kw_only=True)", "b: int = field(default=0, kw_only=True)"],
            ["a: int", "b: int = field(default=0, kw_only=True)"],
            id="field-kw_only",
        ),
    ],
)
def test_M1_keyword_only_judged_per_field(
    packages, tmp_path: Path, imported: str, fully: list[str], partly: list[str]
) -> None:
    """A plain ``@dataclass`` whose every field is keyword-only passes; one field left
    positional fails, whichever way the others are marked."""
    classes = "".join(
        f"\n@dataclass\nclass {cls}:\n" + "".join(f"    {line}\n" for line in body)
        for cls, body in (("Fully", fully), ("Partly", partly))
    )
    name = packages.write(
        {"models.py": f"from dataclasses import {imported}, dataclass\n{classes}"}
    )
    report = update_baseline(name, tmp_path / "api.json").report

    assert packages.failures(report) == [("M1", "positional", "models.Partly", None)]
    assert report.failures[0].change == "takes positional parameter `a`"


def test_M1_positional_fields_inherited_from_a_base_fail(packages, tmp_path: Path) -> None:
    name = packages.write(
        {
            "models.py": """
                from dataclasses import dataclass

                @dataclass
                class _Base:
                    x: int

                @dataclass(kw_only=True)
                class Child(_Base):
                    y: int = 0
            """
        }
    )
    report = update_baseline(name, tmp_path / "api.json").report

    assert packages.failures(report) == [("M1", "positional", "models.Child", None)]
    (finding,) = report.failures
    assert finding.change == "takes positional parameter `x`"
    assert finding.fix.startswith(
        f"declare `{name}.models._Base` (inherited) `@dataclass(kw_only=True)`"
        " (or put `_: KW_ONLY` before `x`)"
    )


def test_M1_make_dataclass_judged_and_named_alike_on_every_python(packages, tmp_path: Path) -> None:
    # Before 3.12 make_dataclass sets __module__ to "types": the class is adopted by its module.
    name = packages.write(
        {
            "models.py": """
                from dataclasses import field, make_dataclass

                Made = make_dataclass("Made", [("a", int), ("b", int, field(default=0))])
                MadeKw = make_dataclass("MadeKw", [("a", int)], kw_only=True)
            """,
            "__init__.py": """
                __version__ = "1.0.0"
                from PKG.models import Made, MadeKw
            """,
        }
    )
    report = update_baseline(name, tmp_path / "api.json").report

    assert packages.failures(report) == [("M1", "positional", "models.Made", None)]
    assert packages.notes(report) == [
        ("M3", "class-added", "models.Made", None),
        ("M3", "class-added", "models.MadeKw", None),
    ]


def test_M1_allowlisted_positional_class_passes(packages) -> None:
    name, path = packages.recorded({"models.py": KEYWORD_ONLY})
    _allowlist(path, {f"{name}.models.Point": "kept positional for tuple-like unpacking"})
    packages.write({"models.py": POSITIONAL}, name=name)

    report = check_package(name, path)

    # Flipping recorded fields to positional is still a breaking change (M3); M1 is excused.
    assert packages.failures(report) == [
        ("M3", "kind-changed", "models.Point", "x"),
        ("M3", "kind-changed", "models.Point", "y"),
    ]


def test_M1_unreadable_constructor_signature_fails(packages, tmp_path: Path) -> None:
    name = packages.write(
        {
            "models.py": """
                from dataclasses import dataclass

                @dataclass(init=False)
                class Odd:
                    a: int

                    def __init__(self, *, a: int) -> None:
                        self.a = a

                Odd.__signature__ = "not a signature"  # after @dataclass, which reads it on 3.10
            """
        }
    )
    report = update_baseline(name, tmp_path / "api.json").report

    assert packages.failures(report) == [("M1", "signature-unreadable", "models.Odd", None)]


def test_M1_generated_constructor_that_inspect_refuses_is_read_from_the_fields(
    packages, tmp_path: Path
) -> None:
    # openai-agents 0.24's FuncSchema: a default that *is* inspect.Parameter.empty makes
    # inspect.signature raise ("non-default argument follows default argument").
    name = packages.write(
        {
            "models.py": """
                import inspect
                from dataclasses import KW_ONLY, dataclass, field

                @dataclass
                class Schema:
                    'A docstring: without one, @dataclass itself calls inspect.signature on 3.10.'

                    name: str
                    strict: bool = True
                    annotation: object = inspect.Parameter.empty
                    _: KW_ONLY
                    extra: int = field(default=0)
                    hidden: int = field(default=0, init=False)
            """
        }
    )
    scan = scan_package(name)

    info = scan.classes[f"{name}.models.Schema"]
    assert info.signature_error is None
    assert [(p.name, p.kind, p.has_default) for p in info.parameters or ()] == [
        ("name", "positional_or_keyword", False),
        ("strict", "positional_or_keyword", True),
        ("annotation", "positional_or_keyword", True),
        ("extra", "keyword_only", True),
    ]
    report = update_baseline(name, tmp_path / "api.json").report
    assert packages.failures(report) == [("M1", "positional", "models.Schema", None)]


def test_M2_allowlist_entry_with_reason_is_kept_by_update(packages) -> None:
    name, path = packages.recorded({"models.py": KEYWORD_ONLY})
    _allowlist(path, {f"{name}.models.Legacy": "public since 0.1; callers unpack it"})
    packages.write(
        {"models.py": KEYWORD_ONLY + "\n@dataclass\nclass Legacy:\n    a: int\n"}, name=name
    )

    result = update_baseline(name, path)

    assert result.written
    assert packages.notes(result.report) == [("M3", "class-added", "models.Legacy", None)]
    data = json.loads(path.read_text())
    assert data["allowlist"] == {f"{name}.models.Legacy": "public since 0.1; callers unpack it"}
    assert check_package(name, path).ok


def test_M2_stale_allowlist_entry_fails(packages) -> None:
    name, path = packages.recorded({"models.py": KEYWORD_ONLY})
    _allowlist(path, {f"{name}.models.Point": "was positional once"})

    report = check_package(name, path)

    assert packages.failures(report) == [("M2", "allowlist-stale", "models.Point", None)]
    assert report.failures[0].fix == "remove the stale allowlist entry"
    assert not update_baseline(name, path).written


def test_M2_unknown_allowlist_entry_fails(packages) -> None:
    name, path = packages.recorded({"models.py": KEYWORD_ONLY})
    _allowlist(path, {f"{name}.models.Gone": "removed in 2.0"})

    report = check_package(name, path)

    assert packages.failures(report) == [("M2", "allowlist-unknown", "models.Gone", None)]
    assert report.failures[0].fix.startswith("remove the unknown allowlist entry")


def test_M2_unknown_entry_not_judged_while_a_module_fails_to_import(packages) -> None:
    name, path = packages.recorded({"models.py": KEYWORD_ONLY})
    _allowlist(path, {f"{name}.broken.Maybe": "cannot tell while broken.py does not import"})
    packages.write({"models.py": KEYWORD_ONLY, "broken.py": "raise ImportError('no')\n"}, name=name)

    report = check_package(name, path)

    assert packages.failures(report) == [("M4", "import-failed", "broken", None)]
