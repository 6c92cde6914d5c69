"""The CLI's exit statuses (0 ok / 1 failed / 2 usage or bad input) and the pytest helper."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import metatests
from metatests import assert_api_stable
from metatests.cli import main

GOOD = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass P:\n    a: int\n"
BAD = "from dataclasses import dataclass\n\n@dataclass\nclass P:\n    a: int\n"


def test_M3_cli_update_then_check_exit_0(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": GOOD})
    path = str(tmp_path / "api.json")

    assert main(["update", name, "--baseline", path]) == 0
    assert f"wrote {path}: 1 public dataclass recorded" in capsys.readouterr().out
    assert main(["update", name, "--baseline", path]) == 0
    assert f"baseline {path} is up to date" in capsys.readouterr().out
    assert main(["check", name, "--baseline", path]) == 0
    assert capsys.readouterr().out == (
        f"{name} 1.0.0: OK (1 public dataclass; baseline {path}, recorded at 1.0.0)\n"
    )


def test_M1_cli_check_failure_exit_1(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": GOOD})
    path = str(tmp_path / "api.json")
    assert main(["update", name, "--baseline", path]) == 0
    packages.write({"models.py": BAD}, name=name)
    capsys.readouterr()

    assert main(["check", name, "--baseline", path]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"{name} 1.0.0: FAILED, 2 problems")
    assert f"[M1] {name}.models.P: takes positional parameter `a`" in out
    assert main(["update", name, "--baseline", path]) == 1
    assert f"baseline {path} not written" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["chek", "pkg", "--baseline", "x.json"],
        ["check", "pkg"],
        ["check", "--baseline", "x.json"],
        ["check", "mtpkg_that_does_not_exist", "--baseline", "x.json"],
    ],
)
def test_M4_cli_usage_errors_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith("polyloop-metatests: error: ")


def test_M3_python_m_metatests_runs_the_cli(packages, tmp_path: Path) -> None:
    name, path = packages.recorded({"models.py": GOOD})
    root = Path(metatests.__file__).parent.parent
    pythonpath = os.pathsep.join([str(root), packages.root(name)])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "metatests", *args],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": pythonpath},
            timeout=60,
        )

    ok = run("check", name, "--baseline", str(path))
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ": OK (1 public dataclass;" in ok.stdout
    missing = run("check", name, "--baseline", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert "run" not in missing.stdout and "does not exist" in missing.stderr


def test_M3_assert_api_stable_passes_and_returns_the_report(packages) -> None:
    name, path = packages.recorded({"models.py": GOOD})

    assert assert_api_stable(name, baseline=path).ok


def test_M3_assert_api_stable_raises_the_readable_report(packages) -> None:
    name, path = packages.recorded({"models.py": GOOD})
    packages.write({"models.py": GOOD.replace("a: int", "b: int")}, name=name)

    with pytest.raises(AssertionError) as info:
        assert_api_stable(name, baseline=path)

    message = str(info.value)
    assert message.startswith(f"API evolution check failed:\n{name} 1.0.0: FAILED, 1 problem")
    assert (
        f"[M3] {name}.models.P, parameter `a`: renamed to `b` — fix: restore the name `a`,"
        " or bump the major version (the minor at 0.x) or accept it:"
        " `update --accept-break CLASS=REASON`"
    ) in message


def test_M3_assert_api_stable_and_cli_resolve_a_relative_baseline_alike(
    packages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11.18: both read a relative path against the working directory, not the caller's
    folder, so the file the CLI wrote is the file the test reads."""
    name = packages.write({"models.py": GOOD})
    here = tmp_path / "downstream"
    (here / "tests").mkdir(parents=True)
    monkeypatch.chdir(here)
    assert main(["update", name, "--baseline", "api.json"]) == 0
    assert (here / "api.json").exists()
    caller = here / "tests" / "test_api.py"
    caller.write_text(
        "from metatests import assert_api_stable\n\n"
        f"def test_api():\n    return assert_api_stable({name!r}, baseline='api.json')\n"
    )
    spec = importlib.util.spec_from_file_location(f"{name}_caller", caller)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    assert module.test_api().ok
    monkeypatch.chdir(here / "tests")
    with pytest.raises(AssertionError) as info:
        module.test_api()
    # The hint names the same relative path, which works from where the user stands.
    assert str(info.value) == (
        f"baseline api.json does not exist; create it with"
        f" `polyloop-metatests update {name} --baseline api.json`"
    )


def test_M2_update_allow_existing_adopts_the_guard_on_positional_classes(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11.18: a package with positional dataclasses can adopt the guard in one command."""
    name = packages.write({"models.py": BAD, "more.py": BAD.replace("P", "Q")})
    path = tmp_path / "api.json"

    assert main(["update", name, "--baseline", str(path)]) == 1
    out = capsys.readouterr().out
    assert not path.exists()
    assert out.splitlines()[-1] == (
        "to keep the classes M1 rejects positional, allowlist them with a reason:"
        f" polyloop-metatests update {name} --baseline {path} --allow-existing"
        " 'why they stay positional'"
    )
    assert main(["update", name, "--baseline", str(path), "--allow-existing", " "]) == 2
    assert "--allow-existing needs a reason" in capsys.readouterr().err

    reason = "unpacked positionally by callers since 1.0"
    assert main(["update", name, "--baseline", str(path), "--allow-existing", reason]) == 0
    assert json.loads(path.read_text())["allowlist"] == {
        f"{name}.models.P": reason,
        f"{name}.more.Q": reason,
    }
    assert main(["check", name, "--baseline", str(path)]) == 0


def test_M3_assert_api_stable_fails_at_the_callers_line_not_inside_the_guard(
    packages, tmp_path: Path
) -> None:
    name, path = packages.recorded({"models.py": GOOD})
    packages.write({"models.py": GOOD.replace("a: int", "b: int")}, name=name)
    test = tmp_path / "test_downstream_api.py"
    test.write_text(
        "from metatests import assert_api_stable\n\n\n"
        "def test_api():\n"
        f"    assert_api_stable({name!r}, baseline={str(path)!r})\n"
    )
    root = Path(metatests.__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), packages.root(name)])}

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            str(test),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert "test_downstream_api.py:5: AssertionError" in result.stdout
    assert "AssertionError: API evolution check failed:" in result.stdout
    assert "metatests/operations.py" not in result.stdout  # no frame of the guard's own source


def test_M1_cli_junit_into_a_missing_folder_is_written(
    packages: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI job writes into a fresh ``reports/``: the folder is made, as the kit's --junit does."""
    name, path = packages.recorded({"models.py": GOOD})
    packages.write({"models.py": BAD}, name=name)
    junit = tmp_path / "reports" / "ci" / "api-guard.xml"

    assert main(["check", name, "--baseline", str(path), "--junit", str(junit)]) == 1
    failed = [
        c.get("name") for c in ET.parse(junit).iter("testcase") if c.find("failure") is not None
    ]
    assert "M1" in failed
    assert "[M1]" in capsys.readouterr().out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_M3_cli_a_report_that_cannot_be_printed_is_exit_2_naming_stdout(
    packages: Any, tmp_path: Path
) -> None:
    """Not "cannot write baseline" (the old message for any OSError), and no traceback."""
    name, path = packages.recorded({"models.py": GOOD})
    root = Path(metatests.__file__).parent.parent
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "metatests", "check", name, "--baseline", str(path)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root), packages.root(name)])},
            timeout=60,
        )
    assert result.returncode == 2
    assert result.stderr == (
        "polyloop-metatests: error: cannot write the report to stdout: No space left on device\n"
    )
