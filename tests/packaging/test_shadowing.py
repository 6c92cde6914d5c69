"""A project's own ``conformance``/``metatests`` module that shadows polyloop's (issue 24 item 6).

A user's ``tests/conformance.py`` is first on ``sys.path`` under pytest's default import mode,
and ``from conformance import ExecutorContract`` then failed with a bare ``ImportError: cannot
import name 'ExecutorContract' from 'conformance'``. The plugin and the console scripts now name
the shadowing file and the fix. `tox -e downstream` checks the same from the built wheel.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from polyloop import _launch

SHADOW = 'OWNER = "the project"\n'


def run(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def shadowed_project(tmp_path: Path, test_source: str) -> Path:
    tests = tmp_path / "proj" / "tests"
    tests.mkdir(parents=True)
    (tests / "conformance.py").write_text(SHADOW)
    (tests / "test_contract.py").write_text(textwrap.dedent(test_source))
    return tests.parent


@pytest.mark.parametrize(
    "source",
    [
        "from conformance import ExecutorContract\n",
        "from conformance.toolcheck import ToolContract\n",
        "def test_late():\n    from conformance import certify\n",
    ],
    ids=["name", "submodule", "inside-a-test"],
)
def test_plugin_names_the_file_that_shadows_the_kit(tmp_path: Path, source: str) -> None:
    project = shadowed_project(tmp_path, source)
    result = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project)
    assert result.returncode in (1, 2), result.stdout + result.stderr
    shadow = project / "tests" / "conformance.py"
    assert f"polyloop: the name 'conformance' resolves to {shadow}, not to polyloop's " in (
        result.stdout
    ), result.stdout
    assert "rename that file or folder" in result.stdout


def test_plugin_adds_nothing_to_an_unrelated_import_error(tmp_path: Path) -> None:
    project = shadowed_project(tmp_path, "from conformance import OWNER\nimport not_a_module\n")
    result = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "No module named 'not_a_module'" in result.stdout
    assert "polyloop: " not in result.stdout


def test_project_that_uses_its_own_shadowing_module_still_passes(tmp_path: Path) -> None:
    project = shadowed_project(
        tmp_path,
        "from conformance import OWNER\n\ndef test_own():\n    assert OWNER == 'the project'\n",
    )
    result = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "polyloop: " not in result.stdout


@pytest.mark.parametrize(
    ("main", "prog", "package"),
    [
        ("conformance_main", "polyloop-conformance", "conformance"),
        ("metatests_main", "polyloop-metatests", "metatests"),
    ],
)
def test_launcher_names_the_file_that_shadows_its_package(
    tmp_path: Path, main: str, prog: str, package: str
) -> None:
    (tmp_path / f"{package}.py").write_text(SHADOW)
    code = (
        "import sys\nsys.path.insert(0, '.')\n"
        f"from polyloop._launch import {main}\nsys.exit({main}(['certify']))\n"
    )
    result = run(["-c", code], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"{prog}: error: "
        + _launch.shadowing_message(package, str(tmp_path / f"{package}.py"))
        + "\n"
    )


def test_shadowing_file_is_none_for_polyloops_own_packages() -> None:
    assert _launch.shadowing_file("conformance") is None
    assert _launch.shadowing_file("metatests") is None
    assert _launch.shadowing_file("no_such_package_anywhere") is None


def test_shadowing_message_names_the_file_and_the_fix() -> None:
    message = _launch.shadowing_message("conformance", "/p/tests/conformance.py")
    assert message.startswith("the name 'conformance' resolves to /p/tests/conformance.py, ")
    assert "shadows" in message and "rename that file or folder" in message
    assert "\n" not in message
