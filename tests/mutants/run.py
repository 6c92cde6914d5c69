"""Mutation analysis of polyloop's tool layer, every mutant judged twice (issue 10).

    python tests/mutants/run.py [--jobs 2] [--report docs/detection.md] [--limit N]

Mutants come from cosmic-ray's operators (`cosmic_ray.plugins`, `MutationVisitor`) applied to
`polyloop/tools.py`, `polyloop/_json.py` and `polyloop/types.py`. Each mutant is loaded in
memory by an import hook (the tree on disk is never touched, so several mutants run at once)
and judged by two independent commands, each in its own forked process:

- **the kit alone**: `conformance.certify(RegistryExecutor, only=[clause], level="strict",
  profile="ci", seed=0)` clause by clause, stopping at the first clause that does not pass.
  Only the clauses whose reference run executes the mutated statement are run (a clause that
  never reaches the mutated code behaves exactly as on the reference, seed and all);
- **polyloop's own library tests** (`tests/test_*.py` about the library): `pytest -x` over the
  tests whose reference run executes the mutated statement, fastest first.

The reference runs are measured under coverage first (per clause, and per test). The report
(`docs/detection.md`) lists the counts, kill times and every survivor with its diff; mutants
listed in `tests/mutants/equivalent.toml` are equivalent, and an entry that a run kills (or that
no longer matches a mutant) fails the run, so that list only shrinks.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import hashlib
import importlib.abc
import importlib.util
import json
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import tomllib

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("polyloop/tools.py", "polyloop/_json.py", "polyloop/types.py")
EQUIVALENT_FILE = ROOT / "tests" / "mutants" / "equivalent.toml"
CACHE_DIR = ROOT / "build" / "mutants"
EXCLUDED_TESTS = {"test_dependency_smoke.py"}

USE_FAIL_FAST = False
"""Switch to True once `certify(..., fail_fast=True)` exists: `_kit_verdict` then makes one
`certify` call over the reachable clauses instead of one call per clause."""

PATH_FUNCTIONS = {
    "polyloop/tools.py": {
        "<module>",
        "_is_integer",
        "_is_number",
        "_json_type_name",
        "_type_rule",
        "_quoted_list",
        "_OddKey.__init__",
        "_OddKey.__repr__",
        "_plain_key",
        "_CompiledTool.__init__",
        "_CompiledTool.problem",
        "_CompiledTool._describe",
        "ToolRegistry.validate",
        "ToolRegistry._problem",
        "ToolRegistry._unknown_tool",
        "_exception_text",
        "_exception_name",
        "RegistryExecutor.__init__",
        "RegistryExecutor.execute",
    },
    "polyloop/_json.py": {
        "shorten",
        "safe_repr",
        "type_label",
        "freeze_arguments",
        "_copy_leaf",
        "_copy_key",
        "_freeze_any",
        "thaw",
        "thaw_arguments",
    },
    "polyloop/types.py": {"_trusted_outcome", "<module>"},
}
"""The validation and dispatch path (issue 10): `_CompiledTool`, `ToolRegistry.validate`,
`RegistryExecutor`, the outcome builder and argument recording/thawing, with the helpers they
call. Everything else (spec and registry construction, `schema_for_model`, `restrict_to`,
`ActionOutcome`'s own checks, S4/S5) belongs to clauses the executor kit does not certify."""


# ---- mutants ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Mutant:
    id: str
    module: str
    operator: str
    occurrence: int
    function: str
    lines: tuple[int, int]
    """The mutated statement's lines (its header, for a compound statement)."""
    diff: str
    source: str

    @property
    def module_name(self) -> str:
        return self.module.removesuffix(".py").replace("/", ".")

    @property
    def on_path(self) -> bool:
        return self.function in PATH_FUNCTIONS.get(self.module, set())


def _scopes(source: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """(function spans with qualified names, statement spans) of `source`, from `ast`."""
    import ast

    tree = ast.parse(source)
    functions: list[tuple[int, int, str]] = []
    statements: list[tuple[int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                if not isinstance(child, ast.ClassDef):
                    functions.append((first, child.end_lineno or child.lineno, name))
                name += "."
            if isinstance(child, ast.stmt):
                body = getattr(child, "body", None)
                if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                    header_end = max(child.lineno, body[0].lineno - 1)
                    decorators = getattr(child, "decorator_list", [])
                    start = min([child.lineno, *(d.lineno for d in decorators)])
                    statements.append((start, header_end))
                else:
                    statements.append((child.lineno, child.end_lineno or child.lineno))
            visit(child, name)

    visit(tree, "")
    return functions, statements


def _locate(source: str, line: int) -> tuple[str, tuple[int, int]]:
    functions, statements = _scopes(source)
    inside = [f for f in functions if f[0] <= line <= f[1]]
    function = max(inside, key=lambda f: f[0])[2] if inside else "<module>"
    spans = [s for s in statements if s[0] <= line <= s[1]]
    span = min(spans, key=lambda s: s[1] - s[0]) if spans else (line, line)
    return function, span


def _operators() -> list[tuple[str, Any]]:
    import cosmic_ray.plugins

    found = []
    for name in sorted(set(cosmic_ray.plugins.operator_names())):
        kind = cosmic_ray.plugins.get_operator(name)
        if not kind.arguments():
            found.append((name, kind()))
    return found


def _mutate_one(task: tuple[str, str, int]) -> tuple[str, str, int, str | None]:
    from cosmic_ray.mutating import MutationVisitor

    module, operator_name, occurrence = task
    operator = dict(_operators())[operator_name]
    tree = pickle.loads(_TREES[module])
    visitor = MutationVisitor(occurrence, operator)
    mutated = visitor.walk(tree)
    return (
        module,
        operator_name,
        occurrence,
        (mutated.get_code() if visitor.mutation_applied else None),
    )


_TREES: dict[str, bytes] = {}


def generate(jobs: int) -> list[Mutant]:
    """Every mutant cosmic-ray's argument-free operators make of `MODULES` (cached on disk by
    the sources' hash, since parsing and walking them costs tens of seconds)."""
    from cosmic_ray.ast import ast_nodes, get_ast

    sources = {module: (ROOT / module).read_text(encoding="utf-8") for module in MODULES}
    digest = hashlib.sha256(
        json.dumps([sources, [name for name, _ in _operators()]], sort_keys=True).encode()
    ).hexdigest()[:16]
    cache = CACHE_DIR / f"mutants-{digest}.pickle"
    if cache.exists():
        cached: list[Mutant] = pickle.loads(cache.read_bytes())
        return cached
    tasks = []
    for module, source in sources.items():
        tree = get_ast(source)
        _TREES[module] = pickle.dumps(tree)
        nodes = list(ast_nodes(tree))
        for name, operator in _operators():
            count = sum(len(list(operator.mutation_positions(node))) for node in nodes)
            tasks.extend((module, name, occurrence) for occurrence in range(count))
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        produced = pool.map(_mutate_one, tasks, chunksize=8)
    mutants: list[Mutant] = []
    seen: dict[str, int] = {}
    for module, operator_name, occurrence, mutated in produced:
        if mutated is None or mutated == sources[module]:
            continue
        original = sources[module].splitlines()
        changed = mutated.splitlines()
        diff_lines = list(
            difflib.unified_diff(original, changed, f"a/{module}", f"b/{module}", n=1, lineterm="")
        )
        first = next(
            (i for i, (a, b) in enumerate(zip(original, changed, strict=False)) if a != b),
            min(len(original), len(changed)) - 1,
        )
        function, span = _locate(sources[module], first + 1)
        before = original[first].strip() if first < len(original) else ""
        after = changed[first].strip() if first < len(changed) else ""
        key = f"{module}::{function}::{operator_name.removeprefix('core/')}::{before} => {after}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f" #{seen[key]}"
        mutants.append(
            Mutant(
                id=key,
                module=module,
                operator=operator_name,
                occurrence=occurrence,
                function=function,
                lines=span,
                diff="\n".join(diff_lines[2:]),
                source=mutated,
            )
        )
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(mutants))
    return mutants


# ---- loading a mutant in memory ---------------------------------------------------------------


class _MutantLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the mutated source for one module name; every other import is left alone."""

    def __init__(self, name: str, path: Path, source: str) -> None:
        self.name, self.path, self.source = name, path, source

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=str(self.path))

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        module.__file__ = str(self.path)
        exec(compile(self.source, str(self.path), "exec"), module.__dict__)


def _install(mutant: Mutant | None) -> None:
    if mutant is not None:
        loader = _MutantLoader(mutant.module_name, ROOT / mutant.module, mutant.source)
        sys.meta_path.insert(0, loader)


# ---- forked jobs ------------------------------------------------------------------------------


@dataclasses.dataclass
class _Job:
    key: tuple[str, str]
    work: Callable[[], Any]
    timeout: float
    log: Path


def run_jobs(
    jobs: Sequence[_Job], workers: int, on_done: Callable[[_Job, dict[str, Any]], None]
) -> None:
    """Run each job's `work` in a forked child (its own process group), `workers` at a time,
    killing a child that outlives its timeout. `on_done` gets the child's JSON result, or
    ``{"status": "timeout"}`` / ``{"status": "crashed"}``."""
    pending = list(jobs)
    running: dict[int, tuple[_Job, float, Path]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="polyloop-mutants-"))
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                out = scratch / f"{os.getpid()}-{len(running)}-{time.monotonic_ns()}.json"
                pid = os.fork()
                if pid == 0:  # the child
                    _child(job, out)
                running[pid] = (job, time.monotonic(), out)
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                now = time.monotonic()
                for child, (job, started, _) in list(running.items()):
                    if now - started > job.timeout:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(child, signal.SIGKILL)
                        os.waitpid(child, 0)
                        del running[child]
                        on_done(job, {"status": "timeout", "seconds": now - started})
                time.sleep(0.02)
                continue
            if pid not in running:
                continue
            job, started, out = running.pop(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # children the target left behind
            try:
                result = json.loads(out.read_text())
            except (OSError, ValueError):
                result = {"status": "crashed", "exit": status}
            result.setdefault("seconds", time.monotonic() - started)
            on_done(job, result)
    finally:
        for child in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child, signal.SIGKILL)
        for leftover in scratch.iterdir():
            leftover.unlink()
        scratch.rmdir()


def _child(job: _Job, out: Path) -> None:
    code = 0
    try:
        os.setpgid(0, 0)
        job.log.parent.mkdir(parents=True, exist_ok=True)
        log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = tempfile.mkdtemp(prefix="polyloop-hyp-")
        started = time.monotonic()
        result = job.work()
        result["seconds"] = time.monotonic() - started
        out.write_text(json.dumps(result))
    except BaseException as exc:  # the child must always reach os._exit
        try:
            out.write_text(json.dumps({"status": "crashed", "error": repr(exc)[:500]}))
        except BaseException:
            code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# ---- the two judges ---------------------------------------------------------------------------


def kit_clauses() -> list[str]:
    from conformance import CLAUSES

    return [clause.id for clause in CLAUSES if clause.id[0] in "VE"]


def _kit_verdict(mutant: Mutant | None, clauses: Sequence[str]) -> dict[str, Any]:
    """Certify the (mutated) RegistryExecutor, stopping at the first clause that fails."""
    _install(mutant)
    try:
        from conformance import certify
        from polyloop import RegistryExecutor
    except Exception as exc:
        return {"status": "killed", "clause": "import", "detail": repr(exc)[:300]}
    if USE_FAIL_FAST:
        report = certify(
            RegistryExecutor, only=clauses, level="strict", profile="ci", seed=0, fail_fast=True
        )
        if report.passed:
            return {"status": "survived"}
        return {"status": "killed", "clause": report.failed_ids()[0]}
    for clause in clauses:
        try:
            report = certify(RegistryExecutor, only=[clause], level="strict", profile="ci", seed=0)
        except Exception as exc:
            return {"status": "killed", "clause": clause, "detail": f"certify raised {exc!r}"[:300]}
        if not report.passed:
            return {"status": "killed", "clause": clause}
    return {"status": "survived"}


def _tests_verdict(mutant: Mutant | None, nodeids: Sequence[str]) -> dict[str, Any]:
    _install(mutant)
    import pytest

    os.chdir(ROOT)
    os.environ["HYPOTHESIS_PROFILE"] = "ci"
    code = pytest.main(
        ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-o", "addopts=", *nodeids]
    )
    return {"status": "survived" if int(code) == 0 else "killed", "exit": int(code)}


# ---- reference coverage -----------------------------------------------------------------------


def _coverage() -> Any:
    import coverage

    cov = coverage.Coverage(
        data_file=None, include=[str(ROOT / module) for module in MODULES], branch=False
    )
    return cov


def _lines_by_module(data: Any) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for filename in data.measured_files():
        module = Path(filename).resolve().relative_to(ROOT).as_posix()
        found[module] = sorted(data.lines(filename) or [])
    return found


def _clause_reach(clause: str) -> dict[str, Any]:
    cov = _coverage()
    cov.start()
    started = time.monotonic()
    from conformance import certify
    from polyloop import RegistryExecutor

    try:
        report = certify(RegistryExecutor, only=[clause], level="strict", profile="ci", seed=0)
    except ValueError:
        cov.stop()
        return {"status": "not-certified"}
    seconds = time.monotonic() - started
    cov.stop()
    return {
        "status": "pass" if report.passed else "fail",
        "clause_seconds": seconds,
        "lines": _lines_by_module(cov.get_data()),
    }


def _tests_reach(test_file: str) -> dict[str, Any]:
    import pytest

    cov = _coverage()
    durations: dict[str, float] = {}

    class Contexts:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
            cov.switch_context(item.nodeid)
            began = time.monotonic()
            yield
            durations[item.nodeid] = time.monotonic() - began
            cov.switch_context("")

    os.chdir(ROOT)
    os.environ["HYPOTHESIS_PROFILE"] = "ci"
    cov.start()
    code = pytest.main(
        ["-q", "-p", "no:cacheprovider", "-o", "addopts=", test_file], plugins=[Contexts()]
    )
    cov.stop()
    data = cov.get_data()
    reach: dict[str, dict[str, list[str]]] = {}
    for filename in data.measured_files():
        module = Path(filename).resolve().relative_to(ROOT).as_posix()
        by_line = data.contexts_by_lineno(filename)
        reach[module] = {str(line): sorted(set(ctx)) for line, ctx in by_line.items()}
    return {"status": "pass" if int(code) == 0 else "fail", "durations": durations, "reach": reach}


def library_tests() -> list[str]:
    return sorted(
        f"tests/{path.name}"
        for path in (ROOT / "tests").glob("test_*.py")
        if path.name not in EXCLUDED_TESTS
    )


# ---- the run ----------------------------------------------------------------------------------


def _equivalents() -> dict[str, str]:
    if not EQUIVALENT_FILE.exists():
        return {}
    data = tomllib.loads(EQUIVALENT_FILE.read_text(encoding="utf-8"))
    entries = data.get("equivalent", [])
    found = {}
    for entry in entries:
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise SystemExit(f"{EQUIVALENT_FILE}: entry {entry.get('id')!r} needs a reason")
        found[entry["id"]] = entry["reason"]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", default=str(ROOT / "docs" / "detection.md"))
    parser.add_argument("--results", default=str(CACHE_DIR / "results.json"))
    parser.add_argument("--limit", type=int, default=None, help="judge only the first N mutants")
    parser.add_argument("--match", default=None, help="judge only mutants whose id contains this")
    parser.add_argument(
        "--reuse-kills",
        action="store_true",
        help="keep the kills of the previous --results for unchanged mutants (for iterating "
        "on tests; the report says so); judge everything else again",
    )
    args = parser.parse_args(argv)

    began = time.monotonic()
    load = os.getloadavg()
    # Import the heavy third-party modules once, so each forked judge starts warm; polyloop and
    # the kit are imported only in the children, where the mutant's import hook is in place.
    import coverage  # noqa: F401
    import hypothesis  # noqa: F401
    import hypothesis_jsonschema  # noqa: F401
    import jsonschema  # noqa: F401
    import pytest  # noqa: F401
    import pytest_asyncio  # noqa: F401
    import xdist  # noqa: F401

    mutants = generate(args.jobs)
    generated = len(mutants)
    print(f"{generated} mutants generated in {time.monotonic() - began:.0f}s", flush=True)
    equivalents = _equivalents()
    stale = sorted(set(equivalents) - {m.id for m in mutants})
    if args.match:
        mutants = [m for m in mutants if args.match in m.id]
    if args.limit is not None:
        mutants = mutants[: args.limit]

    # Reference reach: which clause and which test executes which line.
    clauses: list[str] = []
    clause_info: dict[str, dict[str, Any]] = {}
    test_info: dict[str, dict[str, Any]] = {}
    logs = CACHE_DIR / "logs"
    reach_cache = CACHE_DIR / f"reach-{_inputs_digest()}.json"
    cached_reach = json.loads(reach_cache.read_text()) if reach_cache.exists() else None
    reach_jobs = [
        _Job(("clause", c), functools_partial(_clause_reach, c), 900, logs / f"reach-{c}.log")
        for c in _subprocess_value(kit_clauses)
    ] + [
        _Job(
            ("tests", t),
            functools_partial(_tests_reach, t),
            1200,
            logs / f"reach-{Path(t).stem}.log",
        )
        for t in library_tests()
    ]
    if cached_reach is not None:
        reach_jobs = []
        clauses[:] = cached_reach["clauses"]
        clause_info.update(cached_reach["clause_info"])
        test_info.update(cached_reach["test_info"])

    def reach_done(job: _Job, result: dict[str, Any]) -> None:
        kind, name = job.key
        if kind == "clause":
            if result.get("status") == "not-certified":
                return
            if result.get("status") != "pass":
                raise SystemExit(f"reference run of clause {name} did not pass: {result}")
            clauses.append(name)
            clause_info[name] = result
        else:
            if result.get("status") != "pass":
                raise SystemExit(f"reference run of {name} did not pass: {result} (see {job.log})")
            test_info[name] = result

    run_jobs(reach_jobs, args.jobs, reach_done)
    order = _subprocess_value(kit_clauses)
    clauses.sort(key=order.index)
    if cached_reach is None:
        reach_cache.parent.mkdir(parents=True, exist_ok=True)
        reach_cache.write_text(
            json.dumps({"clauses": clauses, "clause_info": clause_info, "test_info": test_info})
        )
    reference_seconds = time.monotonic() - began
    print(f"reference reach measured ({reference_seconds:.0f}s so far)", flush=True)

    durations = {n: d for info in test_info.values() for n, d in info["durations"].items()}
    all_tests = sorted(durations, key=lambda n: durations[n])

    def reached_clauses(mutant: Mutant) -> list[str]:
        lines = set(range(mutant.lines[0], mutant.lines[1] + 1))
        hit = [c for c in clauses if lines & set(clause_info[c]["lines"].get(mutant.module, []))]
        return sorted(hit, key=lambda c: clause_info[c]["clause_seconds"])

    def reached_tests(mutant: Mutant) -> list[str]:
        found: set[str] = set()
        for info in test_info.values():
            by_line = info["reach"].get(mutant.module, {})
            for line in range(mutant.lines[0], mutant.lines[1] + 1):
                contexts = by_line.get(str(line), [])
                if "" in contexts:
                    return all_tests  # import time: every test depends on it
                found.update(contexts)
        return sorted(found, key=lambda n: durations.get(n, 0.0))

    results: dict[str, dict[str, Any]] = {m.id: {} for m in mutants}
    previous: dict[str, dict[str, Any]] = {}
    if args.reuse_kills and Path(args.results).exists():
        previous = json.loads(Path(args.results).read_text())
    jobs: list[_Job] = []
    for mutant in mutants:
        kit = reached_clauses(mutant)
        tests = reached_tests(mutant)
        results[mutant.id]["kit_clauses"] = kit
        results[mutant.id]["test_count"] = len(tests)
        results[mutant.id]["source_sha"] = hashlib.sha1(mutant.source.encode()).hexdigest()
        safe = hashlib.sha1(mutant.id.encode()).hexdigest()[:12]
        old = previous.get(mutant.id, {})
        if old.get("source_sha") == results[mutant.id]["source_sha"]:
            for judge in ("kit", "tests"):
                if old.get(judge, {}).get("status") == "killed":
                    results[mutant.id][judge] = {**old[judge], "reused": True}
        if "kit" in results[mutant.id]:
            pass
        elif kit:
            budget = sum(clause_info[c]["clause_seconds"] for c in kit)
            jobs.append(
                _Job(
                    (mutant.id, "kit"),
                    functools_partial(_kit_verdict, mutant, kit),
                    60 + 4 * budget,
                    logs / f"{safe}.kit.log",
                )
            )
        else:
            results[mutant.id]["kit"] = {"status": "unreached"}
        if "tests" in results[mutant.id]:
            pass
        elif tests:
            budget = sum(durations.get(n, 0.0) for n in tests)
            jobs.append(
                _Job(
                    (mutant.id, "tests"),
                    functools_partial(_tests_verdict, mutant, tests),
                    60 + 4 * budget,
                    logs / f"{safe}.tests.log",
                )
            )
        else:
            results[mutant.id]["tests"] = {"status": "unreached"}

    done = [0]

    def judged(job: _Job, result: dict[str, Any]) -> None:
        mutant_id, judge = job.key
        results[mutant_id][judge] = result
        if result.get("status") in ("survived", "killed"):
            job.log.unlink(missing_ok=True)
        done[0] += 1
        if done[0] % 50 == 0:
            elapsed = time.monotonic() - began
            print(f"  {done[0]}/{len(jobs)} judgements ({elapsed:.0f}s)", flush=True)

    run_jobs(jobs, args.jobs, judged)
    wall = time.monotonic() - began
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text(json.dumps(results, indent=1, sort_keys=True))

    from report import write_report  # tests/mutants/report.py

    problems = write_report(
        Path(args.report),
        mutants=mutants,
        generated=generated,
        results=results,
        equivalents=equivalents,
        stale=stale if not (args.match or args.limit) else [],
        wall=wall,
        reference_seconds=reference_seconds,
        jobs=args.jobs,
        load=(load, os.getloadavg()),
        partial=bool(args.match or args.limit),
    )
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"report written to {args.report} ({wall:.0f}s)")
    return 1 if problems else 0


def _inputs_digest() -> str:
    """A hash of everything the reference runs depend on: library, kit and tests."""
    digest = hashlib.sha256()
    for folder in ("polyloop", "conformance", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "mutants" not in path.parts:
                digest.update(path.relative_to(ROOT).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def functools_partial(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


def _subprocess_value(function: Callable[[], list[str]]) -> list[str]:
    """`function()` computed in a forked child, so the parent never imports the kit (which
    imports polyloop, which must stay unimported until a mutant's hook is in place)."""
    cached = _VALUES.get(function.__name__)
    if cached is not None:
        return cached
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, json.dumps(function()).encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    value: list[str] = json.loads(b"".join(chunks))
    _VALUES[function.__name__] = value
    return value


_VALUES: dict[str, list[str]] = {}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(main())
