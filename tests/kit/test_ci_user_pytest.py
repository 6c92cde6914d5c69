"""Issue 11 under pytest: the ``conformance`` marker, a core class's tests, set-up errors at
class creation, the JUnit message and a runnable reproduce line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar
from xml.etree import ElementTree

import pytest
from _subprocesses import run_pytest, run_python

from conformance.contract import ExecutorContract

HERE = Path(__file__).parent


CORE = """
from conformance import ExecutorContract
from polyloop import RegistryExecutor


class TestCore(ExecutorContract):
    level = "core"
    profile = "quick"

    @staticmethod
    def make_executor(registry):
        return RegistryExecutor(registry)


class TestStrictAgain(TestCore):
    level = "strict"
"""


def test_15_generated_tests_carry_the_conformance_marker_and_core_omits_strict(
    tmp_path: Path,
) -> None:
    done = run_pytest(tmp_path, CORE, "--collect-only")
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    core = [line for line in collected if "::TestCore::" in line]
    strict = [line for line in collected if "::TestStrictAgain::" in line]
    assert len(core) == 19 and len(strict) == 23, done.stdout
    assert not any("test_E12_" in line for line in core)  # E12 is a strict clause
    deselected = run_pytest(tmp_path, CORE, "--collect-only", "-m", "not conformance")
    assert "no tests collected" in deselected.stdout and "42 deselected" in deselected.stdout


def test_15_every_generated_test_is_marked_with_its_clause() -> None:
    test = ExecutorContract.test_E4_any_other_handler_exception_is_an_executed_observation
    [mark] = [m for m in test.pytestmark if m.name == "conformance"]
    assert mark.kwargs == {"clause": "E4"}


def test_9_a_misspelt_level_is_an_error_when_the_class_is_created() -> None:
    with pytest.raises(
        ValueError, match=r"TestX.level is 'strcit'; choose one of 'core', 'strict'"
    ):

        class TestX(ExecutorContract):
            level = "strcit"


def test_9_an_unknown_expected_failure_is_an_error_when_the_class_is_created() -> None:
    with pytest.raises(ValueError, match=r"TestX.expected_failures names 'E99'"):

        class TestX(ExecutorContract):
            expected_failures: ClassVar[Mapping[str, str]] = {"E99": "typo"}


def test_9_make_executor_as_a_plain_method_says_staticmethod() -> None:
    with pytest.raises(
        TypeError, match=r"TestX.make_executor is a plain method; declare it with @staticmethod"
    ):

        class TestX(ExecutorContract):
            def make_executor(self, registry):  # type: ignore[no-untyped-def,override]
                return registry


BROKEN = """
from conformance import ExecutorContract
from zoo.runner import ClaimsCompletion


class TestClaims(ExecutorContract):
    profile = "quick"
    seed = 7

    @staticmethod
    def make_executor(registry):
        return ClaimsCompletion(registry)
"""


def test_12_15_failure_starts_with_the_clause_and_reproduces_with_pytest(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    done = run_pytest(tmp_path, BROKEN, "-k", "E7", f"--junitxml={junit}")
    assert done.returncode == 1, done.stdout
    xml = junit.read_text(encoding="utf-8")
    match = re.search(r'<failure message="([^"]*)"', xml)
    assert match is not None, xml
    # pytest puts "Failed: " before every pytest.fail message.
    assert match.group(1).removeprefix("Failed: ").startswith("E7 fail: "), match.group(1)[:200]
    node = "test_subject.py::TestClaims::test_E7_"
    assert re.search(
        rf"reproduce  pytest '{re.escape(node)}\w+' --conformance-seed 7 "
        "--conformance-profile quick",
        done.stdout,
    ), done.stdout
    assert "polyloop-conformance certify test_subject" not in done.stdout


def test_15_python_dash_m_conformance_answers_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("polyloop-conformance "), done


LOCAL_FACTORY = """
from polyloop import RegistryExecutor


def make(registry):
    return RegistryExecutor(registry)
"""


def test_12_the_console_script_and_python_dash_m_resolve_targets_alike(tmp_path: Path) -> None:
    (tmp_path / "localmod.py").write_text(LOCAL_FACTORY)
    script = Path(sys.executable).parent / "polyloop-conformance"
    if not script.exists():
        pytest.skip("the console script is not installed next to this Python")
    args = ["certify", "localmod:make", "--only", "E1", "--profile", "quick"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = [
        subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
        for command in ([str(script), *args], [sys.executable, "-m", "conformance", *args])
    ]
    for run in done:
        assert run.returncode == 0, run.stderr
        assert "target    localmod:make (white-box)" in run.stdout


TOOLS = '[{"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}]'


def test_14_check_tools_leaves_no_hypothesis_directory_and_its_json_has_a_schema(
    tmp_path: Path,
) -> None:
    import json

    import jsonschema

    from conformance.tools.report import tools_report_schema
    from polyloop import __version__

    work = tmp_path / "project"
    work.mkdir()
    (work / "tools.json").write_text(TOOLS)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    command = ["-m", "conformance", "check-tools", "tools.json", "-q"]
    done = run_python([*command, "--seed", "3", "--json", "-"], cwd=work, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in work.iterdir()) == ["tools.json"]
    data = json.loads(done.stdout)
    jsonschema.validate(data, tools_report_schema())
    assert data["kit_version"] == __version__ and data["seed"] == 3
    assert "hypothesis" in data["versions"]
    asked = run_python([*command, "--database", "db"], cwd=work, env=env)
    assert asked.returncode == 0, asked.stderr  # with a database, Hypothesis may write here


def test_14_the_tools_schema_rejects_a_report_without_the_kit_version() -> None:
    import jsonschema

    from conformance.toolcheck import check_registry
    from conformance.tools.report import tools_report_schema

    report = check_registry(
        [{"name": "bad", "parameters": {"type": "dict"}}], examples=0, raise_on_failure=False
    )
    data = report.to_json()
    jsonschema.validate(data, tools_report_schema())
    del data["kit_version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, tools_report_schema())


def test_24_4_a_failing_contract_test_is_located_at_the_users_class(tmp_path: Path) -> None:
    """Issue 24, item 4: the report's location (which annotation plugins read) is the user's
    test file and class, never the kit's own file inside the environment."""
    junit = tmp_path / "junit.xml"
    done = run_pytest(
        tmp_path, BROKEN, "-k", "E7", f"--junitxml={junit}", "-o", "junit_family=xunit1"
    )
    assert done.returncode == 1, done.stdout
    case = ElementTree.parse(junit).getroot().find(".//testcase")
    assert case is not None
    assert case.get("file") == "test_subject.py"
    line = next(
        i for i, text in enumerate(BROKEN.splitlines()) if text.startswith("class TestClaims")
    )
    assert case.get("line") == str(line)  # 0-based, as pytest reports it
