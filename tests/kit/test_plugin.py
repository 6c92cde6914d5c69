"""The pytest plugin, ToolContract and ExecutorContract, as a downstream project uses them.

The downstream tests run pytest in a subprocess inside an empty directory: no conftest, no
repository on the path, only the installed polyloop[conformance] with its `pytest11` entry
point. One run is serial, one uses pytest-xdist (`-n 2`) with a shared example database.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from conformance.engine import CERTIFIED_CLAUSES
from conformance.profiles import PROFILES
from conformance.toolcheck import tool_property
from polyloop import ToolSpec

DOWNSTREAM = Path(__file__).resolve().parent / "tooldata" / "downstream_tools.py"

EXPECTED = {
    **{
        f"TestGoodTools::{test}[search]": "PASSED"
        for test in (
            "test_H1_handler_is_async",
            "test_H2_parameters_is_a_valid_object_schema",
            "test_H3_schema_is_satisfiable",
            "test_H4_generated_calls_validate_and_handler_behaves",
            "test_H5_model_schema_survives_json_round_trip",
            "test_H6_safe_tool_replays_to_same_observation",
        )
    },
    "TestBrokenTools::test_H1_handler_is_async[broken]": "PASSED",
    "TestBrokenTools::test_H2_parameters_is_a_valid_object_schema[broken]": "PASSED",
    "TestBrokenTools::test_H3_schema_is_satisfiable[broken]": "PASSED",
    "TestBrokenTools::test_H4_generated_calls_validate_and_handler_behaves[broken]": "FAILED",
    "TestBrokenTools::test_H5_model_schema_survives_json_round_trip[broken]": "PASSED",
    "TestBrokenTools::test_H6_safe_tool_replays_to_same_observation[broken]": "SKIPPED",
    "TestBrokenTools::test_H1_handler_is_async[bfcl_like]": "SKIPPED",
    "TestBrokenTools::test_H2_parameters_is_a_valid_object_schema[bfcl_like]": "FAILED",
    "TestBrokenTools::test_H3_schema_is_satisfiable[bfcl_like]": "SKIPPED",
    "TestBrokenTools::test_H4_generated_calls_validate_and_handler_behaves[bfcl_like]": "SKIPPED",
    "TestBrokenTools::test_H5_model_schema_survives_json_round_trip[bfcl_like]": "PASSED",
    "TestBrokenTools::test_H6_safe_tool_replays_to_same_observation[bfcl_like]": "SKIPPED",
    "test_search_H4": "PASSED",
}


def run_downstream(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    project = tmp_path / "downstream"
    project.mkdir()
    shutil.copy(DOWNSTREAM, project / "test_tools.py")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", *options],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


# serial: "test_tools.py::T::t[x] PASSED"; xdist: "[gw0] PASSED test_tools.py::T::t[x]"
_SERIAL = re.compile(r"test_tools\.py::(?P<test>\S+) (?P<outcome>PASSED|FAILED|SKIPPED)")
_XDIST = re.compile(r"(?P<outcome>PASSED|FAILED|SKIPPED) test_tools\.py::(?P<test>\S+)")


def outcomes(output: str) -> dict[str, str]:
    found = {}
    for line in output.splitlines():
        match = _SERIAL.search(line) or _XDIST.search(line)
        if match:
            found[match["test"]] = match["outcome"]
    return found


NO_ASYNCIO = ("-p", "no:asyncio")


def test_plugin_is_harmless_in_an_unrelated_project(tmp_path: Path) -> None:
    """The entry point loads in every pytest run where polyloop is installed, before Hypothesis's
    own plugin: it must not import the kit, nor build strategies (Hypothesis then warns, and a
    project running with -W error fails at startup). tests/packaging covers the runs without
    the extra and with a downstream `conformance` package."""
    (tmp_path / "test_unrelated.py").write_text("def test_nothing():\n    pass\n")
    # pytest-asyncio (polyloop's own test dependency, not the kit's) warns about its own
    # options, differently per version; that warning is not ours to test.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            *NO_ASYNCIO,
            "-q",
            "-W",
            "error",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "HypothesisSideeffectWarning" not in result.stdout + result.stderr, (
        "loading polyloop._pytest_plugin touches Hypothesis's storage before its plugin "
        "loads; it must import nothing but pytest and the standard library at start-up\n"
        + result.stdout[-2000:]
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_plugin_registers_the_kit_profiles_and_options(request: pytest.FixtureRequest) -> None:
    for name, kwargs in PROFILES.items():
        assert settings.get_profile(f"polyloop-{name}").max_examples == kwargs["max_examples"]
    for option in (
        "conformance_profile",
        "conformance_level",
        "conformance_seed",
        "conformance_db",
    ):
        assert request.config.getoption(option) is None


def test_conformance_options_fixture(conformance_options: Any) -> None:
    assert (conformance_options.profile, conformance_options.seed) == (None, None)


def test_tool_contract_in_a_downstream_project_one_test_per_clause_and_tool(
    tmp_path: Path,
) -> None:
    result = run_downstream(
        tmp_path,
        "--conformance-profile",
        "quick",
        "--conformance-seed",
        "3",
        "-k",
        "not PolyloopExecutor",  # the xdist run below covers ExecutorContract
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert outcomes(result.stdout) == EXPECTED
    assert "polyloop-conformance: profile=quick, seed=3" in result.stdout
    # The failure message is the readable summary, not a traceback into the kit.
    assert "H4 handler: the handler returned NoneType (None), not str" in result.stdout
    assert "H2 parameters['type']: `dict` is not a JSON Schema type; did you mean `object`?" in (
        result.stdout
    )


def test_tool_contract_under_xdist_shares_one_example_database(tmp_path: Path) -> None:
    database = tmp_path / "examples"
    result = run_downstream(
        tmp_path, "-n", "2", "--conformance-profile", "quick", "--conformance-db", str(database)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "created: 2/2 workers" in result.stdout
    found = outcomes(result.stdout)
    executor_tests = {k: v for k, v in found.items() if k.startswith("TestPolyloopExecutor::")}
    assert sorted(test.split("::")[1].split("_")[1] for test in executor_tests) == sorted(
        CERTIFIED_CLAUSES
    )
    assert set(executor_tests.values()) == {"PASSED"}, result.stdout[-6000:]
    assert {k: v for k, v in found.items() if k not in executor_tests} == EXPECTED
    # The counterexample a worker found is kept for every later run (and every worker).
    assert database.is_dir() and any(database.iterdir())


async def search(arguments: dict[str, Any]) -> str:
    return "found"


async def broken(arguments: dict[str, Any]) -> str:
    return None  # type: ignore[return-value]


def test_H4_tool_property_is_a_fuzz_target() -> None:
    """HypoFuzz drives a test through `test.hypothesis.fuzz_one_input(buffer)`."""
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    good = tool_property(ToolSpec(name="s", description="d", parameters=schema, handler=search))
    bad = tool_property(ToolSpec(name="b", description="d", parameters=schema, handler=broken))
    buffer = bytes(64)
    assert good.hypothesis.fuzz_one_input(buffer) is not None  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match="returned NoneType"):
        bad.hypothesis.fuzz_one_input(buffer)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="did you mean `object`"):
        tool_property({"name": "t", "description": "d", "parameters": {"type": "dict"}})
