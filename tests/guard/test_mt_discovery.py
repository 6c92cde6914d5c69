"""M4: what counts as public, counted once, and nothing skipped silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from metatests import PackageNotFoundError, check_package, scan_package, update_baseline

KW = "from dataclasses import dataclass\n\n"


def _names(name: str) -> list[str]:
    return [n.removeprefix(name + ".") for n in scan_package(name).classes]


def test_M4_module_that_fails_to_import_is_reported_and_fails(packages, tmp_path: Path) -> None:
    name = packages.write(
        {
            "good.py": KW + "@dataclass(kw_only=True)\nclass Fine:\n    a: int\n",
            "broken.py": "import definitely_not_installed_anywhere\n",
            "sub/__init__.py": "raise RuntimeError('boom at import')\n",
            "sub/inner.py": "",
        }
    )

    scan = scan_package(name)
    result = update_baseline(name, tmp_path / "api.json")

    assert [(f.module.removeprefix(name + "."), f.error) for f in scan.import_failures] == [
        ("broken", "ModuleNotFoundError: No module named 'definitely_not_installed_anywhere'"),
        ("sub", "RuntimeError: boom at import"),
    ]
    assert not result.written
    assert packages.failures(result.report) == [
        ("M4", "import-failed", "broken", None),
        ("M4", "import-failed", "sub", None),
    ]


def test_M4_empty_package_fails(packages, tmp_path: Path) -> None:
    name = packages.write({"helpers.py": "def f() -> int:\n    return 1\n"})

    result = update_baseline(name, tmp_path / "api.json")

    assert not result.written
    assert packages.failures(result.report) == [("M4", "empty-scan", "", None)]


def test_M4_unknown_package_is_a_usage_error() -> None:
    with pytest.raises(PackageNotFoundError, match="no importable package named"):
        scan_package("mtpkg_that_does_not_exist")


def test_M4_class_reexported_from_a_private_module_via_all_is_public(packages) -> None:
    name = packages.write(
        {
            "__init__.py": """
                __version__ = "1.0.0"
                from PKG._impl import Exported, NotListed
                from PKG.api import *
                __all__ = ["Exported"]
            """,
            "api.py": "from PKG._impl import Exported\n__all__ = ['Exported']\n",
            "_impl.py": KW
            + "@dataclass\nclass Exported:\n    a: int\n\n"
            + "@dataclass\nclass NotListed:\n    a: int\n",
        }
    )

    scan = scan_package(name)

    # Recorded once, under the shortest public name a caller imports it by.
    assert _names(name) == ["Exported"]
    assert scan.classes[f"{name}.Exported"].positional == ("a",)


def test_M4_private_modules_and_underscore_classes_are_ignored(packages) -> None:
    name = packages.write(
        {
            "_private.py": KW + "@dataclass\nclass Positional:\n    a: int\n",
            "_never_imported.py": "raise RuntimeError('a private module is not imported')\n",
            "_internal/__init__.py": "",
            "_internal/models.py": KW + "@dataclass\nclass Deep:\n    a: int\n",
            "models.py": KW
            + "from PKG._private import Positional\n\n"
            + "@dataclass\nclass _Hidden:\n    a: int\n\n"
            + "@dataclass(kw_only=True)\nclass Shown:\n    a: int\n",
        }
    )

    scan = scan_package(name)

    assert _names(name) == ["models.Shown"]
    assert scan.import_failures == ()
    assert f"{name}._never_imported" not in scan.modules


def test_M4_underscore_class_listed_in_all_is_public(packages) -> None:
    name = packages.write(
        {"models.py": KW + "__all__ = ['_Exposed']\n\n@dataclass\nclass _Exposed:\n    a: int\n"}
    )

    assert _names(name) == ["models._Exposed"]


def test_M4_nested_classes_count_by_qualname(packages, tmp_path: Path) -> None:
    name = packages.write(
        {
            "models.py": KW
            + """
class Outer:
    @dataclass
    class Inner:
        a: int

    @dataclass(kw_only=True)
    class _Hidden:
        a: int

@dataclass(kw_only=True)
class Shape:
    @dataclass(kw_only=True)
    class Options:
        fill: bool = False

    options: "Shape.Options"

class _Private:
    @dataclass
    class Inner:
        a: int

Alias = Outer.Inner
"""
        }
    )

    assert _names(name) == ["models.Outer.Inner", "models.Shape", "models.Shape.Options"]
    report = update_baseline(name, tmp_path / "api.json").report
    assert packages.failures(report) == [("M1", "positional", "models.Outer.Inner", None)]


def test_M4_class_counts_once_where_it_is_defined(packages) -> None:
    name = packages.write(
        {
            "__init__.py": """
                __version__ = "1.0.0"
                from PKG.models import Point
                from PKG import models as again
                __all__ = ["Point"]
            """,
            "models.py": KW + "@dataclass(kw_only=True)\nclass Point:\n    x: int\n",
            "api.py": "from PKG.models import Point\n__all__ = ['Point']\n",
        }
    )

    assert _names(name) == ["models.Point"]


def test_M4_dataclass_from_another_package_is_not_counted(packages) -> None:
    other = packages.write({"models.py": KW + "@dataclass\nclass Theirs:\n    a: int\n"})
    name = packages.write(
        {
            "__init__.py": f"from {other}.models import Theirs\n__all__ = ['Theirs']\n",
            "models.py": KW + "@dataclass(kw_only=True)\nclass Ours:\n    a: int\n",
        }
    )

    assert _names(name) == ["models.Ours"]


def test_M4_subclass_of_a_dataclass_without_decorator_counts(packages) -> None:
    name = packages.write(
        {
            "models.py": KW
            + "@dataclass\nclass _Base:\n    a: int\n\nclass Plain(_Base):\n    pass\n",
        }
    )

    assert scan_package(name).classes[f"{name}.models.Plain"].positional == ("a",)


def test_M4_plain_module_can_be_scanned(packages) -> None:
    name = packages.write({"models.py": KW + "@dataclass(kw_only=True)\nclass P:\n    a: int\n"})

    scan = scan_package(f"{name}.models")

    assert list(scan.classes) == [f"{name}.models.P"]


def test_M4_check_runs_on_import_failure_with_the_baseline(packages) -> None:
    name, path = packages.recorded(
        {"models.py": KW + "@dataclass(kw_only=True)\nclass P:\n    a: int\n"}
    )
    packages.write({"models.py": "raise SystemExit('do not exit my check')\n"}, name=name)

    report = check_package(name, path)

    # The class vanished with its module: only the import failure is reported, and an empty
    # scan is reported too, because nothing is left to guard.
    assert packages.failures(report) == [
        ("M4", "empty-scan", "", None),
        ("M4", "import-failed", "models", None),
    ]


def test_M4_nested_classes_of_a_reexported_class_keep_their_privacy(packages) -> None:
    name = packages.write(
        {
            "__init__.py": """
                __version__ = "1.0.0"
                from PKG._impl import Config, _Holder
                Inner = _Holder.Inner
                __all__ = ["Config", "Inner"]
            """,
            "_impl.py": KW
            + """
@dataclass(kw_only=True)
class Config:
    @dataclass(kw_only=True)
    class Limits:
        n: int = 0

    @dataclass
    class _Scratch:
        a: int

    limits: "Config.Limits"

class _Holder:
    @dataclass(kw_only=True)
    class Inner:
        b: int = 0
""",
        }
    )

    assert _names(name) == ["Config", "Config.Limits", "Inner"]


def test_M4_subpackage_exiting_at_import_is_reported(packages) -> None:
    name = packages.write(
        {
            "models.py": KW + "@dataclass(kw_only=True)\nclass P:\n    a: int\n",
            "zsub/__init__.py": "raise SystemExit(3)\n",
        }
    )

    scan = scan_package(name)

    assert [(f.module, f.error) for f in scan.import_failures] == [
        (f"{name}.zsub", "SystemExit: 3")
    ]


def test_M4_lazy_name_in_all_that_fails_to_load_is_an_import_failure(packages) -> None:
    name = packages.write(
        {
            "__init__.py": """
                __version__ = "1.0.0"
                __all__ = ["Fine", "Lazy"]
                from PKG.models import Fine

                def __getattr__(attr):
                    if attr == "Lazy":
                        import definitely_not_installed_anywhere
                    raise AttributeError(attr)
            """,
            "models.py": KW + "@dataclass(kw_only=True)\nclass Fine:\n    a: int\n",
        }
    )

    scan = scan_package(name)

    assert list(scan.classes) == [f"{name}.models.Fine"]
    assert [f.module for f in scan.import_failures] == [f"{name}.Lazy"]


def test_M4_privacy_is_judged_below_the_scanned_package(packages) -> None:
    name = packages.write(
        {
            "_vendored/__init__.py": "",
            "_vendored/lib.py": KW + "@dataclass(kw_only=True)\nclass V:\n    a: int\n",
        }
    )

    assert scan_package(name).classes == {}
    assert list(scan_package(f"{name}._vendored").classes) == [f"{name}._vendored.lib.V"]


def test_M4_namespace_sub_folder_is_scanned(packages) -> None:
    name = packages.write(
        {
            "plugins/builtin/shapes.py": KW + "@dataclass\nclass Square:\n    side: int\n",
            "assets/readme.txt": "a data folder, not a package",
        }
    )

    scan = scan_package(name)

    assert _names(name) == ["plugins.builtin.shapes.Square"]
    assert f"{name}.plugins" in scan.modules and f"{name}.assets" not in scan.modules


def test_M4_make_dataclass_bound_under_another_name_in_all_is_public(packages) -> None:
    name = packages.write(
        {
            "models.py": """
                from dataclasses import make_dataclass

                __all__ = ["Config"]
                Config = make_dataclass("_ConfigImpl", [("a", int)], kw_only=True)
                Unlisted = make_dataclass("_Other", [("a", int)], kw_only=True)
            """
        }
    )

    assert _names(name) == ["models.Config"]


def test_M4_version_comes_from_the_distribution_providing_the_package(packages) -> None:
    # Two distributions share the namespace `PKG`; each provides one sub-package.
    name = packages.write(
        {
            "__init__.py": None,
            "alpha/__init__.py": "",
            "alpha/models.py": KW + "@dataclass(kw_only=True)\nclass A:\n    a: int\n",
            "beta/__init__.py": "",
            "beta/models.py": KW + "@dataclass(kw_only=True)\nclass B:\n    b: int\n",
        }
    )
    root = Path(packages.root(name))
    for dist, version, sub in (("aaa-alpha", "1.2.0", "alpha"), ("zzz-beta", "7.0.1", "beta")):
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "top_level.txt").write_text(f"{name}\n")  # what Python 3.10 reads
        (info / "RECORD").write_text(
            f"{name}/{sub}/__init__.py,,\n{name}/{sub}/models.py,,\n{info.name}/METADATA,,\n"
        )

    assert scan_package(f"{name}.beta").version == "7.0.1"
    assert scan_package(f"{name}.alpha").version == "1.2.0"
    assert scan_package(name).version is None  # a namespace of two: no single version


def test_M4_class_whose_module_a_lazy_getattr_imports_is_found(packages) -> None:
    # pydantic-ai's durable_exec: the defining (private) module is imported on first access.
    name = packages.write(
        {
            "lazy/__init__.py": """
                import importlib

                __all__ = ["Context"]

                def __getattr__(attr):
                    if attr == "Context":
                        return importlib.import_module("PKG.lazy._context").Context
                    raise AttributeError(attr)
            """,
            "lazy/_context.py": KW + "@dataclass\nclass Context:\n    deps: int\n",
        }
    )

    scan = scan_package(name)

    assert _names(name) == ["lazy.Context"]
    assert scan.classes[f"{name}.lazy.Context"].positional == ("deps",)
