"""M4 isolation: whatever a scanned module does at import is an import failure of that module,
reported by name (exit 1), never a traceback or a crash of the guard (issue 12, item 3)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _helpers import AS_FROM_A_TERMINAL

import metatests
from metatests import check_package, load_baseline, scan_package
from metatests.cli import main

FINE = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass Fine:\n    a: int\n"


@pytest.mark.parametrize(
    ("source", "error"),
    [
        pytest.param(
            "import pytest\npytest.skip('needs a GPU', allow_module_level=True)\n",
            "Skipped: needs a GPU",
            id="pytest-skip",
        ),
        pytest.param(
            "import pytest\npytest.importorskip('definitely_not_installed_anywhere')\n",
            "Skipped: could not import 'definitely_not_installed_anywhere'",
            id="pytest-importorskip",
        ),
        pytest.param("raise KeyboardInterrupt\n", "KeyboardInterrupt", id="KeyboardInterrupt"),
        pytest.param("raise SystemExit(4)\n", "SystemExit: 4", id="SystemExit"),
        pytest.param("class Odd(BaseException):\n    pass\nraise Odd('x')\n", "Odd: x", id="bare"),
        pytest.param("input()\n", "EOFError", id="reads-stdin"),
    ],
)
def test_M4_any_base_exception_at_import_is_an_import_failure(
    packages, source: str, error: str
) -> None:
    name = packages.write({"good.py": FINE, "tests/__init__.py": "", "tests/test_x.py": source})

    scan = scan_package(name, timeout=60)

    assert [f.module for f in scan.import_failures] == [f"{name}.tests.test_x"]
    assert scan.import_failures[0].error.startswith(error)
    assert list(scan.classes) == [f"{name}.good.Fine"]  # the rest is still scanned


def test_M4_os_exit_at_import_is_reported_and_the_rest_scanned(packages) -> None:
    name = packages.write(
        {"a_first.py": FINE, "b_exits.py": "import os\nos._exit(7)\n", "c_last.py": FINE}
    )

    scan = scan_package(name, timeout=60)

    assert [(f.module, f.error) for f in scan.import_failures] == [
        (f"{name}.b_exits", "ended the scan with exit status 7 (os._exit?)")
    ]
    assert sorted(scan.classes) == [f"{name}.a_first.Fine", f"{name}.c_last.Fine"]


def test_M4_module_that_hangs_is_reported_after_the_timeout(packages) -> None:
    name = packages.write({"fine.py": FINE, "hangs.py": "import time\ntime.sleep(600)\n"})

    scan = scan_package(name, timeout=3)

    assert [(f.module, f.error) for f in scan.import_failures] == [
        (f"{name}.hangs", "did not finish within 3 s (hangs at import?)")
    ]
    assert list(scan.classes) == [f"{name}.fine.Fine"]


def test_M4_non_daemon_thread_does_not_keep_the_scan_alive(packages) -> None:
    name = packages.write(
        {
            "fine.py": FINE,
            "threads.py": "import threading, time\n"
            "threading.Thread(target=time.sleep, args=(600,)).start()\n",
        }
    )

    # Were the child to wait for the thread, the scan would time out and report `threads`.
    scan = scan_package(name, timeout=20)

    assert scan.import_failures == ()
    assert list(scan.classes) == [f"{name}.fine.Fine"]


def test_M4_output_of_scanned_modules_is_captured_and_summarised(
    packages, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded(
        {
            "loud.py": FINE
            + "import sys\nprint('hello from import')\nprint('\\x1b[2Jwarn', file=sys.stderr)\n"
        }
    )
    capsys.readouterr()

    assert main(["check", name, "--baseline", str(path)]) == 0
    out = capsys.readouterr()
    assert "hello from import" not in out.out.splitlines()  # never mixed into the report
    assert "the scanned modules printed 1 line on stdout, the first: hello from import" in out.out
    assert "the scanned modules printed 1 line on stderr, the first: \\x1b[2Jwarn" in out.out
    assert "\x1b" not in out.out and out.err == ""


def test_M4_crash_at_import_is_exit_1_naming_the_module_never_a_traceback(
    packages, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded({"good.py": FINE})
    packages.write({"good.py": FINE, "bad.py": "raise KeyboardInterrupt\n"}, name=name)
    capsys.readouterr()

    assert main(["check", name, "--baseline", str(path)]) == 1
    out = capsys.readouterr()
    assert f"[M4] {name}.bad: failed to import (KeyboardInterrupt)" in out.out
    assert "Traceback" not in out.out + out.err


def test_M4_real_ctrl_c_stops_the_guard_with_exit_130(packages, tmp_path: Path) -> None:
    name = packages.write({"fine.py": FINE, "slow.py": "import time\ntime.sleep(600)\n"})
    path = tmp_path / "api.json"
    root = Path(metatests.__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), packages.root(name)])}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            AS_FROM_A_TERMINAL,
            "metatests",
            "update",
            name,
            "--baseline",
            str(path),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not _has_child(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()

    assert process.returncode == 130
    assert err == "polyloop-metatests: interrupted\n"
    assert "Traceback" not in out
    assert not path.exists()


def _has_child(pid: int) -> bool:
    try:
        return bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:
        return True  # no /proc: just wait the fixed delay


def test_M4_import_failure_under_a_private_package_is_ignored(packages) -> None:
    name = packages.write(
        {
            "fine.py": FINE,
            "_inductor/__init__.py": "",
            "_inductor/codegen.py": "import definitely_not_installed_anywhere\n",
            "core/__init__.py": "",
            "core/_numba/__init__.py": "",
            "core/_numba/kernels.py": "raise ImportError('no numba')\n",
        }
    )

    scan = scan_package(name)

    assert scan.import_failures == ()
    assert list(scan.classes) == [f"{name}.fine.Fine"]


def test_M4_exclude_leaves_modules_out_and_is_recorded_with_its_reason(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write(
        {
            "fine.py": FINE,
            "drivers/__init__.py": "",
            "drivers/windows.py": "import msvcrt_definitely_missing\n",
            "drivers/win32_extra.py": "import winreg_definitely_missing\n",
            "drivers/linux.py": FINE.replace("Fine", "Linux"),
        }
    )
    path = tmp_path / "api.json"

    assert main(["update", name, "--baseline", str(path)]) == 1
    assert main(["update", name, "--baseline", str(path), "--exclude", f"{name}.drivers.win*"]) == 2
    assert "needs a reason to be recorded" in capsys.readouterr().err
    pattern = f"{name}.drivers.win*"
    assert (
        main(["update", name, "--baseline", str(path), "--exclude", f"{pattern}=Windows only"]) == 0
    )

    report = check_package(name, path)
    assert report.ok and report.classes == 2
    assert f"excluded from the scan (1 pattern):\n  {pattern} (baseline: Windows only)" in (
        report.render()
    )
    scan = scan_package(name, exclude=[pattern])
    assert sorted(scan.classes) == [f"{name}.drivers.linux.Linux", f"{name}.fine.Fine"]
    assert f"{name}.drivers.windows" not in scan.modules
    # A check-only exclusion (no reason needed) leaves a module out for this run only.
    assert check_package(name, path, exclude=[f"{name}.drivers.linux"]).classes == 1
    assert load_baseline(path).exclude == {pattern: "Windows only"}


def test_M4_exclusions_render_with_their_reason_and_source() -> None:
    from metatests import Report

    def render(excluded: tuple[tuple[str, str, str], ...]) -> str:
        return Report(
            package="pkg",
            version="1.0",
            baseline_path="api.json",
            baseline_version="1.0",
            major_bump=False,
            classes=1,
            findings=(),
            excluded=excluded,
        ).render()

    two = (("pkg.m0", "optional extra", "baseline"), ("pkg.m1", "", "command line"))
    assert render(two).splitlines()[1:] == [
        "excluded from the scan (2 patterns):",
        "  pkg.m0 (baseline: optional extra)",
        "  pkg.m1 (command line, no reason recorded)",
    ]
    cli = ("pkg.cli", "", "command line")
    many = (*((f"pkg.m{i}", "extra", "baseline") for i in range(20)), cli)
    text = render(many)
    # Counted where they came from, not all "from the baseline".
    assert "  … and 13 more (12 from the baseline, 1 from the command line;" in text
    assert "\n  pkg.m7 (baseline: extra)\n" in text


def test_M4_a_bug_inside_the_guard_is_exit_2_never_1(
    packages, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded({"fine.py": FINE})

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug in compare")

    monkeypatch.setattr("metatests.operations.compare", broken)

    assert main(["check", name, "--baseline", str(path)]) == 2
    assert capsys.readouterr().err == (
        "polyloop-metatests: internal error (please report it): RuntimeError('bug in compare')\n"
    )
