"""The built wheel in fresh venvs, as a downstream project installs it (tox -e downstream).

1. **With the extra, newest Hypothesis first**: a fresh venv gets the newest Hypothesis, pinned
   by a constraint, then ``polyloop[conformance]`` from the wheel. The install must succeed
   without touching that Hypothesis, and ``certify``, ``check-tools`` and the pytest base
   classes (``ExecutorContract``, ``ToolContract``) must pass on the reference executor.
2. **Base wheel and pytest only**: ``pytest`` on an unrelated project passes (with ``-W error``),
   ``polyloop-conformance certify`` exits 2 with one line naming the extra, and
   ``from conformance import ExecutorContract`` names it too.
3. In both venvs a downstream project with its own top-level ``conformance`` package runs pytest.
4. The guard in the base venv: a 0.x downstream package accepts a break with a recorded reason
   (``update --accept-break``), a 0.x minor bump allows one, and ``assert_api_stable`` fails at
   the downstream test's own line.
5. With the extra (issue 24): the executor of ``docs/writing-an-executor.md`` certifies at
   ``strict``, ``plain_arguments`` gives plain data ``jsonschema`` accepts, and a project's own
   ``tests/conformance.py`` that shadows the kit is named in the error (pytest and the script).
6. The README's ways to depend on polyloop from another package resolve offline: a plain
   requirement with ``--find-links`` to a wheel directory, and a ``file:`` URL.

Run it with ``python tests/packaging/downstream.py`` (``--keep`` keeps the temporary directory).
Exit 0 when every check passed; each check prints one line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRA_HINT = "pip install 'polyloop[conformance]'"

REFERENCE_TESTS = """
from typing import Any

from conformance import ExecutorContract
from conformance.toolcheck import ToolContract
from polyloop import RegistryExecutor, ReplayPolicy, ToolSpec


async def search(arguments: dict[str, Any]) -> str:
    return f"results for {arguments.get('q')!r}"


async def fails(arguments: dict[str, Any]) -> str:
    raise ValueError("the handler raises, which H4 allows")


SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
TOOLS = [
    ToolSpec(name="search", description="Search.", parameters=SCHEMA,
             replay_policy=ReplayPolicy.SAFE, handler=search),
    ToolSpec(name="fails", description="Always raises.", parameters=SCHEMA, handler=fails),
]


class TestReferenceExecutor(ExecutorContract):
    make_executor = staticmethod(RegistryExecutor)


class TestTools(ToolContract):
    tools = TOOLS
    replay = True
    examples = 10
"""

BROKEN_EXECUTOR = """
import dataclasses

from polyloop import RegistryExecutor


class Edits:
    def __init__(self, registry):
        self._inner = RegistryExecutor(registry)
        self.registry = registry

    def parameters(self):
        return self._inner.parameters()

    async def execute(self, action):
        outcome = await self._inner.execute(action)
        return dataclasses.replace(outcome, observation=outcome.observation + "!")


def make(registry):
    return Edits(registry)
"""

BROKEN_TESTS = """
from conformance import ExecutorContract

import myexec


class TestEdits(ExecutorContract):
    profile = "fast"
    make_executor = staticmethod(myexec.make)
"""

UNRELATED_TEST = "def test_unrelated():\n    assert 1 + 1 == 2\n"
OWN_CONFORMANCE_TEST = (
    "from conformance import OWNER\n\n"
    'def test_own_conformance_package():\n    assert OWNER == "downstream"\n'
)


class Check:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self._last = time.monotonic()

    def __call__(self, ok: bool, what: str, detail: str = "") -> None:
        now = time.monotonic()
        took, self._last = now - self._last, now
        print(f"{'ok  ' if ok else 'FAIL'} {took:5.1f}s  {what}", flush=True)
        if not ok:
            self.failures.append(what)
            if detail:
                print(textwrap.indent(detail.strip()[-3000:], "      "), flush=True)


def run(
    command: Sequence[str | Path], *, cwd: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def output(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin"


def pip(bin_dir: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run([bin_dir / "python", "-m", "pip", "install", "--quiet", *args])


def project(root: Path, name: str, files: dict[str, str]) -> Path:
    """Write ``files`` under ``root/name``. Bytecode caches there go first: a rewrite of the same
    size within the same second (``0.3.2`` -> ``0.4.0``) would otherwise import the stale one."""
    directory = root / name
    for cache in directory.rglob("__pycache__"):
        shutil.rmtree(cache)
    for relative, text in files.items():
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        (directory / relative).write_text(text)
    return directory


# Built from a clean copy: an in-tree build leaves build/ behind, whose stale files (a module
# since deleted) would otherwise end up in the next wheel.
_NOT_SOURCE = shutil.ignore_patterns(
    ".*", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench", "examples"
)


def build_wheel(out: Path) -> Path:
    source = out.parent / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    result = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, source])
    if result.returncode != 0:
        raise SystemExit("cannot build the wheel:\n" + output(result))
    (wheel,) = out.glob("polyloop-*.whl")
    return wheel


def own_conformance_package_runs(tmp: Path, bin_dir: Path, check: Check, *, extra: bool) -> None:
    """A downstream project's own top-level `conformance` package still imports under pytest:
    polyloop's pytest plugin, loaded at start-up, must not shadow it."""
    theirs = project(
        tmp,
        "theirs-extra" if extra else "theirs-base",
        {"conformance/__init__.py": 'OWNER = "downstream"\n', "test_own.py": OWN_CONFORMANCE_TEST},
    )
    result = run([bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=theirs)
    check(
        result.returncode == 0,
        f"{'with' if extra else 'without'} the extra, a project with its own `conformance` "
        "package runs pytest",
        output(result),
    )


def annotations_point_into_the_project(tmp: Path, bin_dir: Path, check: Check) -> None:
    """Issue 24, item 4: a failure's CI annotation names the project's file (the factory's
    module, or the test class under pytest), never the kit's file in the venv."""
    broken = project(
        tmp, "annotated", {"myexec.py": BROKEN_EXECUTOR, "test_broken.py": BROKEN_TESTS}
    )
    result = run(
        [bin_dir / "polyloop-conformance", "certify", "myexec:make", "--only", "E5",
         "--profile", "fast", "--format", "github"],
        cwd=broken,
    )  # fmt: skip
    line = BROKEN_EXECUTOR.splitlines().index("def make(registry):") + 1
    check(
        result.returncode == 1 and f"::error file=myexec.py,line={line}," in result.stdout,
        "a certify annotation points at the factory's module and line",
        output(result),
    )
    junit = broken / "junit.xml"
    result = run(
        [bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "E5",
         f"--junitxml={junit}", "-o", "junit_family=xunit1"],
        cwd=broken,
    )  # fmt: skip
    text = junit.read_text() if junit.is_file() else ""
    check(
        result.returncode == 1 and 'file="test_broken.py"' in text and "site-packages" not in text,
        "under pytest a failing contract test is located in the project's test file",
        output(result) + text[-2000:],
    )


def with_extra_and_newest_hypothesis(tmp: Path, wheel: Path, check: Check) -> None:
    bin_dir = make_venv(tmp / "venv-extra")
    result = pip(bin_dir, "--upgrade", "hypothesis")
    check(result.returncode == 0, "newest Hypothesis installs first", output(result))
    version = run([bin_dir / "python", "-c", "import hypothesis; print(hypothesis.__version__)"])
    newest = version.stdout.strip()
    constraints = tmp / "constraints.txt"
    constraints.write_text(f"hypothesis=={newest}\n")
    result = pip(bin_dir, "-c", constraints, f"{wheel}[conformance]")
    check(
        result.returncode == 0,
        f"the wheel with the conformance extra installs beside hypothesis=={newest}",
        output(result),
    )
    again = run([bin_dir / "python", "-c", "import hypothesis; print(hypothesis.__version__)"])
    check(again.stdout.strip() == newest, f"Hypothesis stays at {newest}", output(again))

    result = run([bin_dir / "polyloop-conformance", "certify"], cwd=tmp)
    check(
        result.returncode == 0 and "PASSED" in result.stdout,
        "polyloop-conformance certify passes on the reference executor",
        output(result),
    )
    tests = project(tmp, "reference", {"test_reference.py": REFERENCE_TESTS})
    result = run(
        [
            bin_dir / "polyloop-conformance",
            "check-tools",
            "test_reference:TOOLS",
            "--examples",
            "20",
        ],
        cwd=tests,
    )
    check(
        result.returncode == 0 and "2 passed, 0 failed" in result.stdout,
        "polyloop-conformance check-tools passes on two good tools (one handler raises)",
        output(result),
    )
    result = run(
        [bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        cwd=tests,
    )
    check(
        result.returncode == 0 and " passed" in result.stdout and "failed" not in result.stdout,
        "ExecutorContract and ToolContract pass on the reference under pytest -W error",
        output(result),
    )
    annotations_point_into_the_project(tmp, bin_dir, check)
    own_conformance_package_runs(tmp, bin_dir, check, extra=True)


def base_wheel_and_pytest(tmp: Path, wheel: Path, check: Check) -> None:
    bin_dir = make_venv(tmp / "venv-base")
    result = pip(bin_dir, wheel, "pytest")
    check(result.returncode == 0, "the base wheel and pytest install", output(result))
    present = run(
        [bin_dir / "python", "-c", "import importlib.util as u; print(u.find_spec('hypothesis'))"]
    )
    check(present.stdout.strip() == "None", "Hypothesis is not installed", output(present))

    unrelated = project(tmp, "unrelated", {"test_unrelated.py": UNRELATED_TEST})
    result = run(
        [bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error"],
        cwd=unrelated,
    )
    check(result.returncode == 0, "pytest -W error passes on an unrelated project", output(result))
    result = run(
        [bin_dir / "python", "-m", "pytest", "-p", "no:cacheprovider", "--markers"], cwd=unrelated
    )
    check(
        "@pytest.mark.conformance" in result.stdout,
        "the conformance marker is registered",
        output(result),
    )

    result = run([bin_dir / "polyloop-conformance", "certify"], cwd=tmp)
    lines = result.stderr.splitlines()
    check(
        result.returncode == 2
        and len(lines) == 1
        and EXTRA_HINT in lines[0]
        and result.stdout == "",
        "polyloop-conformance certify exits 2 with one line naming the extra",
        output(result),
    )
    result = run(
        [bin_dir / "python", "-c", "from conformance import ExecutorContract"], cwd=unrelated
    )
    last = result.stderr.strip().splitlines()[-1:] or [""]
    check(
        result.returncode != 0
        and last[0].startswith("ModuleNotFoundError: ")
        and EXTRA_HINT in last[0],
        "`from conformance import ExecutorContract` fails with one line naming the extra",
        output(result),
    )
    for script in ("polyloop-conformance", "polyloop-metatests"):
        result = run([bin_dir / script, "--version"])
        check(
            result.returncode == 0 and result.stdout.startswith(f"{script} "),
            f"{script} --version works without the extra",
            output(result),
        )
    result = run([bin_dir / "polyloop-metatests", "check", "polyloop", "--baseline", "none.json"])
    check(
        result.returncode == 2 and "none.json" in result.stderr,
        "polyloop-metatests runs without the extra (a missing baseline is its exit 2)",
        output(result),
    )
    own_conformance_package_runs(tmp, bin_dir, check, extra=False)


SHAPES_MODEL = (
    "from dataclasses import dataclass\n\n"
    "@dataclass(kw_only=True)\nclass Point:\n    x: int\n{rest}"
)
SHAPES_TEST = (
    "from pathlib import Path\n\nfrom metatests import assert_api_stable\n\n\n"
    "def test_public_api_is_stable():\n"
    '    assert_api_stable("shapes", baseline=Path(__file__).with_name("api.json"))\n'
)


def guard_accepts_a_zero_x_break(tmp: Path, check: Check) -> None:
    """Issue 24: a 0.x library records a break with a reason (`update --accept-break`), a 0.x
    minor bump allows one by itself, and `assert_api_stable` fails at the downstream test's
    line, not inside the guard. In the base venv: the guard needs no extra."""
    python = tmp / "venv-base" / "bin" / "python"

    def version(number: str, rest: str) -> Path:
        return project(
            tmp,
            "shapes-project",
            {
                "shapes/__init__.py": f'__version__ = "{number}"\n',
                "shapes/models.py": SHAPES_MODEL.format(rest=rest),
                "test_api.py": SHAPES_TEST,
            },
        )

    def guard(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return run(
            [python, "-m", "metatests", *args, "shapes", "--baseline", "api.json"], cwd=where
        )

    where = version("0.3.0", "    y: int = 0\n")
    result = guard(where, "update")
    check(result.returncode == 0, "guard: update records shapes 0.3.0", output(result))
    where = version("0.3.1", "")
    result = guard(where, "update")
    check(
        result.returncode == 1 and "--accept-break 'shapes.models.Point=" in result.stdout,
        "guard: a break in a 0.x patch release is refused, naming --accept-break",
        output(result),
    )
    reason = "y was never read; removed in 0.3.1"
    result = guard(where, "update", "--accept-break", f"shapes.models.Point={reason}")
    baseline = where / "api.json"
    recorded = baseline.read_text() if baseline.exists() else ""
    check(
        result.returncode == 0 and reason in recorded and '"version": "0.3.1"' in recorded,
        "guard: update --accept-break records the break with its reason",
        output(result),
    )
    result = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=where)
    check(
        result.returncode == 0,
        "guard: assert_api_stable passes after the accepted break",
        output(result),
    )
    renamed = SHAPES_MODEL.format(rest="").replace("x: int", "w: int")
    where = version("0.3.2", "")
    (where / "shapes" / "models.py").write_text(renamed)
    result = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=where)
    text = result.stdout + result.stderr
    check(
        result.returncode == 1
        and "test_api.py:7" in text
        and "API evolution check failed" in text
        and "metatests/operations.py" not in text,
        "guard: assert_api_stable fails at the downstream test's line with the report",
        output(result),
    )
    where = version("0.4.0", "")
    (where / "shapes" / "models.py").write_text(renamed)
    result = guard(where, "update")
    check(
        result.returncode == 0 and "breaking version step (0.3.1 -> 0.4.0)" in result.stdout,
        "guard: a 0.x minor bump (0.3.1 -> 0.4.0) allows the break by itself",
        output(result),
    )


# -- issue 24: the executor guide, plain_arguments, a shadowed kit ----------------------------

GUIDE_EXECUTOR = ROOT / "examples" / "my_executor.py"

PLAIN_ARGUMENTS_SCRIPT = """
import json
import jsonschema
from polyloop import ToolCall, plain_arguments

call = ToolCall(name="t", arguments={"tags": ["a", {"b": [1, 2.5, None]}], "n": 1})
schema = {"type": "object", "properties": {"tags": {"type": "array"}}}
first, second = plain_arguments(call), plain_arguments(call)
assert first == {"tags": ["a", {"b": [1, 2.5, None]}], "n": 1}, first
assert type(first) is dict and type(first["tags"]) is list and type(first["tags"][1]) is dict
assert not jsonschema.Draft202012Validator(schema).is_valid(call.arguments)
jsonschema.validate(first, schema)
first["tags"].append("x")
assert second == plain_arguments(call) and "x" not in json.dumps(plain_arguments(call))
print("plain ok")
"""

SHADOWED_TEST = "from conformance import ExecutorContract\n"


def guide_executor_certifies(tmp: Path, bin_dir: Path, check: Check) -> None:
    """docs/writing-an-executor.md's executor, copied into a project, certifies at strict."""
    guide = project(tmp, "guide", {"my_executor.py": GUIDE_EXECUTOR.read_text()})
    report = guide / "report.json"
    command = [bin_dir / "polyloop-conformance", "certify", "my_executor:MyExecutor"]
    result = run([*command, "--level", "strict", "--json", report], cwd=guide)
    failed: set[str] = set()
    data: dict[str, list[dict[str, str]]] = {"results": []}
    if report.is_file():
        data = json.loads(report.read_text())
        failed = {clause["id"] for clause in data["results"] if clause["status"] != "pass"}
    check(
        report.is_file() and len(data["results"]) == 23 and not failed,
        f"the guide's executor certifies at strict (failed: {sorted(failed) or 'none'})",
        output(result),
    )


def plain_arguments_helper_works(tmp: Path, bin_dir: Path, check: Check) -> None:
    result = run([bin_dir / "python", "-c", PLAIN_ARGUMENTS_SCRIPT], cwd=tmp)
    check(
        result.returncode == 0 and result.stdout.strip() == "plain ok",
        "plain_arguments gives a fresh plain tree that jsonschema accepts",
        output(result),
    )


def shadowed_kit_is_named(tmp: Path, bin_dir: Path, check: Check) -> None:
    """A project's `tests/conformance.py` shadows the kit: the error names that file."""
    shadowed = project(
        tmp,
        "shadowed",
        {"tests/conformance.py": 'OWNER = "downstream"\n', "tests/test_c.py": SHADOWED_TEST},
    )
    shadow = shadowed / "tests" / "conformance.py"
    result = run(
        [bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=shadowed,
    )
    check(
        result.returncode == 2
        and f"polyloop: the name 'conformance' resolves to {shadow}" in result.stdout,
        "pytest: `from conformance import ExecutorContract` under a tests/conformance.py names it",
        output(result),
    )
    env = {"PATH": str(bin_dir), "PYTHONPATH": str(shadow.parent)}
    launched = subprocess.run(
        [str(bin_dir / "polyloop-conformance"), "certify"],
        cwd=shadowed,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    lines = launched.stderr.splitlines()
    check(
        launched.returncode == 2 and len(lines) == 1 and str(shadow) in lines[0],
        "polyloop-conformance under a shadowing PYTHONPATH exits 2 with one line naming the file",
        output(launched),
    )


def documented_requirements_install(tmp: Path, wheel: Path, check: Check) -> None:
    """The README's ways to depend on polyloop resolve, offline: a plain requirement with a
    local wheel directory, and a `file:` URL (direct reference) to the wheel."""
    bin_dir = make_venv(tmp / "venv-requirements")
    plain = tmp / "requirements-plain.txt"
    plain.write_text("polyloop>=0.1\n")
    result = pip(bin_dir, "--no-index", "--find-links", wheel.parent, "-r", plain)
    imported = run([bin_dir / "python", "-c", "import polyloop; print(polyloop.__version__)"])
    check(
        result.returncode == 0 and imported.stdout.strip() == "0.1.0",
        "a plain `polyloop>=0.1` requirement installs from a local wheel directory",
        output(result) + output(imported),
    )
    direct = tmp / "requirements-file-url.txt"
    direct.write_text(f"polyloop @ {wheel.resolve().as_uri()}\n")
    result = pip(bin_dir, "--no-index", "--force-reinstall", "-r", direct)
    check(
        result.returncode == 0,
        "a `polyloop @ file:///...whl` direct reference installs",
        output(result),
    )


def issue24_checks(tmp: Path, check: Check) -> None:
    bin_dir = tmp / "venv-extra" / "bin"
    guide_executor_certifies(tmp, bin_dir, check)
    plain_arguments_helper_works(tmp, bin_dir, check)
    shadowed_kit_is_named(tmp, bin_dir, check)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="polyloop-downstream-"))
    check = Check()
    try:
        wheel = build_wheel(tmp / "dist")
        print(f"wheel {wheel.name}", flush=True)
        base_wheel_and_pytest(tmp, wheel, check)
        guard_accepts_a_zero_x_break(tmp, check)
        with_extra_and_newest_hypothesis(tmp, wheel, check)
        issue24_checks(tmp, check)
        documented_requirements_install(tmp, wheel, check)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.monotonic() - started
    if check.failures:
        print(f"downstream: {len(check.failures)} check(s) failed ({elapsed:.0f}s)")
        return 1
    print(f"downstream: every check passed ({elapsed:.0f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
