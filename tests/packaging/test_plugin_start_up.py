"""The pytest plugin and the console scripts in an environment that is not polyloop's own.

pytest loads `polyloop._pytest_plugin` in every run of every project where polyloop is
installed, with or without the ``conformance`` extra; a downstream project may have its own
top-level ``conformance`` package. "Without the extra" is simulated here by blocking its modules
in a subprocess (``sys.modules[name] = None``: imports fail, `find_spec` finds nothing);
`tox -e downstream` checks the same in real fresh venvs built from the wheel.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

import metatests
import polyloop
from conformance import profiles
from conformance.catalog import LEVELS
from polyloop import _launch, _pytest_plugin

EXTRA = ("hypothesis", "hypothesis_jsonschema", "jsonschema")
POLYLOOP_CI = ("--hypothesis-profile", "polyloop-ci")
POLYLOOP_THOROUGH = ("--hypothesis-profile", "polyloop-thorough")
Completed = subprocess.CompletedProcess[str]
BLOCK = "import sys\nfor _name in {names!r}:\n    sys.modules[_name] = None\n"


def run(argv: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None) -> Completed:
    """This Python in a subprocess with ``argv``, output captured."""
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def run_python(code: str, *, cwd: Path, block: tuple[str, ...] = ()) -> Completed:
    """``code`` with the modules in ``block`` unimportable, no plugin autoload, a bare PATH."""
    script = BLOCK.format(names=block) + textwrap.dedent(code)
    env = {"PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return run(["-c", script], cwd=cwd, env=env)


def run_pytest(cwd: Path, *args: str) -> Completed:
    """pytest on the project in ``cwd``, with this environment's plugins."""
    return run(["-m", "pytest", "-p", "no:cacheprovider", "-q", *args], cwd=cwd)


def test_plugin_module_imports_only_pytest_and_the_standard_library(tmp_path: Path) -> None:
    result = run_python(
        """
        import pytest
        before = set(sys.modules)
        import polyloop._pytest_plugin
        new = {name.split(".")[0] for name in set(sys.modules) - before}
        print(sorted(new - set(sys.stdlib_module_names)))
        """,
        cwd=tmp_path,
        block=(*EXTRA, "conformance"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['polyloop']"


def _unrelated_project(tmp_path: Path) -> Path:
    project = tmp_path / "unrelated"
    project.mkdir()
    (project / "test_unrelated.py").write_text(
        "import pytest\n\n"
        "def test_nothing():\n    pass\n\n"
        "@pytest.mark.conformance\n"
        "def test_marked():\n    pass\n"
    )
    return project


def test_pytest_without_the_extra_runs_an_unrelated_project(tmp_path: Path) -> None:
    project = _unrelated_project(tmp_path)
    result = run_python(
        """
        import pytest
        sys.exit(pytest.main(["-p", "polyloop._pytest_plugin", "-p", "no:cacheprovider",
                              "-W", "error", "--strict-markers", "-m", "not conformance",
                              "--conformance-profile", "quick", "-v"]))
        """,
        cwd=project,
        block=(*EXTRA, "conformance"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_nothing PASSED" in result.stdout
    assert "1 deselected" in result.stdout  # the marker is registered and selects
    assert "polyloop-conformance: profile=quick" in result.stdout


def test_hypothesis_profile_without_the_extra_is_one_usage_error(tmp_path: Path) -> None:
    """--hypothesis-profile polyloop-ci is the one start-up option that needs the kit."""
    project = _unrelated_project(tmp_path)
    result = run_python(
        """
        import pytest
        def pytest_addoption(parser):  # Hypothesis's own plugin, minus Hypothesis
            parser.addoption("--hypothesis-profile")
        class Stub:
            pytest_addoption = staticmethod(pytest_addoption)
        sys.exit(pytest.main(["-p", "polyloop._pytest_plugin", "-p", "no:cacheprovider",
                              "--hypothesis-profile", "polyloop-ci"], plugins=[Stub()]))
        """,
        cwd=project,
        block=EXTRA,
    )
    assert result.returncode == 4, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR")]
    assert errors == [
        "ERROR: --hypothesis-profile polyloop-ci needs the 'conformance' extra (missing: "
        "hypothesis, hypothesis_jsonschema, jsonschema): pip install 'polyloop[conformance]' "
        "(from a checkout: pip install '.[conformance]')"
    ], result.stderr


def _project_with_own_conformance(tmp_path: Path) -> Path:
    project = tmp_path / "theirs"
    (project / "conformance").mkdir(parents=True)
    (project / "conformance" / "__init__.py").write_text('OWNER = "downstream"\n')
    (project / "test_theirs.py").write_text(
        "from conformance import OWNER\n\ndef test_own_package():\n"
        '    assert OWNER == "downstream"\n'
    )
    return project


def test_downstream_project_with_its_own_conformance_package_runs_pytest(tmp_path: Path) -> None:
    project = _project_with_own_conformance(tmp_path)
    result = run_pytest(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_polyloop_profile_in_a_project_that_shadows_the_kit_names_the_clash(
    tmp_path: Path,
) -> None:
    project = _project_with_own_conformance(tmp_path)
    result = run_pytest(project, *POLYLOOP_CI)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "the name 'conformance' resolves to " in result.stderr
    assert str(project / "conformance" / "__init__.py") in result.stderr


def test_hypothesis_profile_polyloop_thorough_loads_the_kit_profile(tmp_path: Path) -> None:
    (tmp_path / "test_profile.py").write_text(
        "from hypothesis import settings\n\n"
        "def test_profile():\n"
        "    assert settings().max_examples == 1000\n"
    )
    result = run_pytest(tmp_path, *POLYLOOP_THOROUGH)
    assert result.returncode == 0, result.stdout + result.stderr


def test_plugin_choices_match_the_kit() -> None:
    assert tuple(profiles.PROFILES) == _pytest_plugin.PROFILES
    assert tuple(LEVELS) == _pytest_plugin.LEVELS


def test_conformance_marker_is_registered(request: pytest.FixtureRequest) -> None:
    markers = request.config.getini("markers")
    assert any(line.startswith("conformance:") for line in markers), markers


@pytest.mark.parametrize(
    ("main", "prog"),
    [
        (_launch.conformance_main, "polyloop-conformance"),
        (_launch.metatests_main, "polyloop-metatests"),
    ],
)
def test_version_option(main: object, prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0  # type: ignore[operator]
    assert capsys.readouterr().out == f"{prog} {polyloop.__version__}\n"


@pytest.mark.parametrize("script", ["polyloop-conformance", "polyloop-metatests"])
def test_installed_console_scripts_answer_version(script: str) -> None:
    path = Path(sys.executable).parent / script
    assert path.exists(), f"{script} is not installed next to {sys.executable}"
    result = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, f"{script} {polyloop.__version__}\n")


def test_console_script_without_the_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_python(
        """
        from polyloop._launch import conformance_main
        sys.exit(conformance_main(["certify"]))
        """,
        cwd=tmp_path,
        block=("hypothesis_jsonschema",),
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "polyloop-conformance: error: the command needs the 'conformance' extra (missing: "
        "hypothesis_jsonschema): pip install 'polyloop[conformance]' "
        "(from a checkout: pip install '.[conformance]')\n"
    )


def test_importing_the_kit_without_the_extra_names_the_extra(tmp_path: Path) -> None:
    result = run_python(
        """
        try:
            from conformance import ExecutorContract
        except ModuleNotFoundError as exc:
            print(exc)
        """,
        cwd=tmp_path,
        block=("hypothesis",),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "the polyloop conformance kit needs the 'conformance' extra (missing: hypothesis): "
        "pip install 'polyloop[conformance]' (from a checkout: pip install '.[conformance]')\n"
    )


def test_metatests_script_needs_no_extra(tmp_path: Path) -> None:
    baseline = Path(metatests.__file__).parent / "polyloop.api.json"
    result = run_python(
        f"""
        from polyloop._launch import metatests_main
        sys.exit(metatests_main(["check", "polyloop", "--baseline", {str(baseline)!r}]))
        """,
        cwd=tmp_path,
        block=(*EXTRA, "pytest"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
