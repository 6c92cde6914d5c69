"""Mutation analysis of polyloop's tool layer, every mutant judged twice (issue 10).

    python tests/mutants/run.py [--subject executor|batch] [--jobs 2] [--report docs/detection.md]
                                [--limit N]

Mutants come from cosmic-ray's operators (`cosmic_ray.plugins`, `MutationVisitor`) applied to
`polyloop/tools.py`, `polyloop/_json.py` and `polyloop/types.py`. Each mutant is loaded in
memory by an import hook (the tree on disk is never touched, so several mutants run at once)
and judged by two independent commands, each in its own forked process:

- **the kit alone**: one `conformance.certify(RegistryExecutor, only=clauses, level="strict",
  profile="ci", seed=0, fail_fast=True)`, stopping at the first clause that does not pass. A
  mutant strict does not kill is certified again at level ``hardened``: one only its
  hostile-object traps kill is kind ``hardening`` (the library tests judge it, the kit's
  population leaves it out: certification judges realistic input only, issue 18).
  Only the clauses whose reference run executes the mutated statement are run (a clause that
  never reaches the mutated code behaves exactly as on the reference, seed and all);
- **polyloop's own library tests** (`tests/test_*.py` about the library): `pytest -x` over the
  tests whose reference run executes the mutated statement, fastest first.

The reference runs are measured under coverage first (per clause, and per test). The report
(`docs/detection.md`) lists the counts, kill times and every survivor with its diff; mutants
listed in `tests/mutants/equivalent.toml` are equivalent, and an entry that a run kills (or that
no longer matches a mutant) fails the run, so that list only shrinks.

`--subject batch` (issue 20) does the same for `polyloop/batch.py`, the scheduler of
`RegistryBatchExecutor` (contract section 10): the kit judge is `certify(RegistryBatchExecutor,
only=<reachable B clauses>, level="strict", profile="ci", seed=0, fail_fast=True)`, then, when
that passes, the reachable V/E clauses through one-call batches the same way (a survivor is
certified again at level ``hardened`` on those: B1–B18 have no hostile-object traps, so
``hardened`` checks them exactly as ``strict`` does), then the reachable P clauses on
`batch_policy_factory`, the batch with a policy in force (its deciding stages run only then).
Its results, logs, reach cache and equivalent list (`tests/mutants/equivalent_batch.toml`) are
its own; its report is its own section of `docs/detection.md`, which each subject rewrites
alone (`detection_report.py`).

`--subject recovery` (issue 34) mutates `polyloop/durable/_run.py` and `_store.py` (`run_durable`
and `SqliteJournalStore`, contract section 12). The kit judge is `certify(conformance.recovery.
reference:factory, level="strict", profile="ci", seed=0, fail_fast=True)` on J1-J13, whose
lifetimes are fresh child processes: the mutant reaches them through a ``sitecustomize`` shim
that the judge puts first on ``sys.path`` (which the kit hands its children as ``PYTHONPATH``),
installing the same import hook there (`expose_to_children`). Coverage cannot follow a child
that SIGKILLs itself, so every mutant on the path is judged on every J clause (no reach
measurement for the kit); the library tests judge (`tests/test_durable*.py`) is measured as for
the other subjects, and its crash tests' children get the mutant through the same shim.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import hashlib
import importlib
import json
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from detection_report import KINDS
from mutant_loader import MutantLoader

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("polyloop/tools.py", "polyloop/_json.py", "polyloop/types.py")
EQUIVALENT_FILE = ROOT / "tests" / "mutants" / "equivalent.toml"
CACHE_DIR = ROOT / "build" / "mutants"
EXCLUDED_TESTS = {"test_dependency_smoke.py"}

USE_FAIL_FAST = True
"""With `certify(..., fail_fast=True)`, `_kit_verdict` makes one `certify` call over the
reachable clauses (stopping at the first failure) instead of one call per clause."""

PATH_FUNCTIONS = {
    "polyloop/tools.py": {
        "<module>",
        "_CompiledTool.<body>",
        "_OddKey.<body>",
        "RegistryExecutor.<body>",
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
        "ToolRegistry._unknown_tool",
        "_exception_text",
        "_exception_name",
        "RegistryExecutor.execute",
        "RegistryExecutor._admit",
        "_compiled_entry",
        "_run",
        "_map_exception",
        "_map_result",
        "RegistryExecutor.parameters",
        "RegistryExecutor.registry",
    },
    "polyloop/_json.py": {
        "shorten",
        "safe_repr",
        "type_label",
        "thaw",
        "thaw_arguments",
    },
    "polyloop/types.py": {"_trusted_outcome"},
}
"""The validation and dispatch path (issue 10): what `RegistryExecutor.execute` runs —
`_CompiledTool`, the registry's unknown-tool message, the outcome builder and argument thawing,
with the helpers they call (`_admit` compiles a tool's checks on its first lookup through
`_compiled_entry`; `execute` and `_run` map a handler's exception and return value through
`_map_exception` and `_map_result`, which the policy stages share). Not on it, so judged by the
library tests only:

- `ToolRegistry.validate` and `_problem`: `execute` does not call them (it does the same lookup
  inline, then `_CompiledTool.problem`), so no executor behaviour depends on them;
- `RegistryExecutor.__init__`: its checks refuse to build an executor (R8); the kit certifies
  an executor that was built;
- `freeze_arguments` and its helpers: they build the `ToolCall` (the recorded call) before any
  executor sees it, and the kit builds its own calls with them;
- `polyloop/types.py` at import, and the class bodies of `ToolSpec` and `ToolRegistry` (their
  dataclass flags, field defaults and decorators): spec and registry declarations whose shape
  is the public API, guarded by `metatests` and the library tests; the kit builds its own
  specs and registries with them.

Everything else (spec and registry construction, `schema_for_model`, `restrict_to`,
`ActionOutcome`'s own checks, S4/S5) belongs to clauses the executor kit does not certify."""

BATCH_MODULES = ("polyloop/batch.py",)
BATCH_PATH_FUNCTIONS = {
    "polyloop/batch.py": {
        "<module>",
        "_not_run",
        "_Fault.__init__",
        "_Raised.__init__",
        "_classify",
        "RegistryBatchExecutor.<body>",
        "RegistryBatchExecutor.execute_batch",
        "_Batch.<body>",
        "_Batch.__init__",
        "_Batch.stopping",
        "_Batch.run",
        "_Batch._fill",
        "_Batch._start",
        "_Batch._body",
        "_Batch._attempt",
        "_Batch._settled",
        "_Batch._record",
        "_Batch._set_fault",
        "_Batch._cancel_running",
        "_Batch._wake",
        "_Batch._wait",
        "_Batch._on_cancel",
        "_Batch._commit_ready",
        "_Batch._journal_call",
        "_Batch._resolve_not_entered",
        "_Batch._not_run_text",
        "_Batch._deciding_busy",
        "_Batch._decide_all",
        "_Batch._deciding_was_cancelled",
        "_Batch._attempt_chain",
        "_Batch._attempt_chain.cancelled",
    },
}
"""The scheduling path (issue 20): what `RegistryBatchExecutor.execute_batch` runs — its own
argument checks and the one-call shortcut (B4, B14), the `_Batch` scheduler whole (starting,
settling, waiting, committing and the stops of B13–B16), the classifier call (`_classify`, B9),
the markers a call's task returns (`_Fault`, `_Raised`) and the synthetic outcomes with their
texts (`_not_run`, the module's `NOT_RUN_CANCELLED`, `INTERRUPTED` and `_INTERRUPTED`, B13–B15).
The class bodies (`__slots__`, the `stopping` property) are on it too: `execute_batch` and
`_Batch` read through them. Not on it, so judged by the library tests only (`BATCH_OFF_PATH`):

- `RegistryBatchExecutor.__init__`: its checks of `max_concurrency` refuse to build an
  executor; they are R9, which the library tests check and certify does not (the kit builds
  every executor with a valid cap, 1 to 4, through the factory);
- the `registry` and `max_concurrency` properties, `parameters` and `__repr__`: R9's accessors
  and reproducibility parameters, which `execute_batch` never reads (it holds the inner
  `RegistryExecutor` and the cap in its slots);
- `_NotEntered.<body>`: a docstring only; the marker's identity is made at import (`<module>`).

The batch's policy stages (`_decide_all`, `_deciding_was_cancelled`, `_attempt_chain`, section
11) are on the path too: they run only with a `ToolPolicy` in force, so the kit judge certifies
`batch_policy_factory` on P1-P12 for them (P11 is the batch's own policy clause).

What `execute_batch` calls in `polyloop/tools.py` (`_admit`, `_run`, `_map_exception`,
`_map_result`, `_exception_name`) is the executor subject's path, mutated there."""

BATCH_OFF_PATH = {
    "polyloop/batch.py": {
        "_NotEntered.<body>",
        "_Fault.<body>",
        "_Raised.<body>",
        "RegistryBatchExecutor.__init__",
        "RegistryBatchExecutor.registry",
        "RegistryBatchExecutor.max_concurrency",
        "RegistryBatchExecutor.parameters",
        "RegistryBatchExecutor.__repr__",
    },
}
"""Every function of `polyloop/batch.py` is on `BATCH_PATH_FUNCTIONS` or here (a test checks
it, so a new function is classified on purpose). `_Fault.<body>` and `_Raised.<body>` hold a
docstring and `__slots__ = ("error",)`, which no operator mutates."""

_ON_PATH = {**PATH_FUNCTIONS, **BATCH_PATH_FUNCTIONS}
"""Both subjects' paths, by module (their modules are disjoint)."""

POLICY_MODULES = ("polyloop/policy.py", "polyloop/tools.py")
POLICY_PATH_FUNCTIONS = {
    "polyloop/policy.py": {"<module>", "Decision.<body>"},
    "polyloop/tools.py": {
        "RegistryExecutor.execute",
        "_denied",
        "_policy_if_active",
        "_decide",
        "_Chain.<body>",
        "_Chain.__init__",
        "_Chain.at",
        "_Chain.wrap",
        "_Chain.enter",
        "_chain",
    },
}
"""The policy path (issue 33, contract section 11): what an executor built with a `ToolPolicy`
runs between admission and the outcome — `execute`'s policed branch (with `_policed` written
out, and the cancellation reading of P9), the deciders and approver (`_decide`, `_denied`,
P3–P6), the wrapper chain and the handler entry (`_Chain`, `_chain`, P8–P10) with the
post-processors, `_policy_if_active` (a `ToolPolicy()` that changes nothing is no policy), and
the `Decision` values the stages compare by identity. Not on it (`POLICY_OFF_PATH`), so judged by
the library tests only:

- the construction checks of `polyloop/policy.py`, which refuse to build a `Verdict` or
  `ToolPolicy` (the kit builds valid ones only, as it builds its executors);
- `_execute_policed`, `_policed` and `_never`: on 3.11+ an `execute` awaited in a task (as the
  kit always awaits it) runs `_policed` written out in `execute`; these run on 3.10, for a
  coroutine driven by hand outside a task, and (`_policed`) in `RegistryBatchExecutor`;
  `_in_child` and `_Escaped` only on 3.10 (the child task's `SystemExit`/`KeyboardInterrupt`);
- `_Track` and `_HandlerRaised`: a batch's per-call record (P9, P10 in a batch); a plain
  executor's chain has no track. The policy factory certified here builds plain executors.

Only these functions (both sets) are mutated for `--subject policy`: the rest of
`polyloop/tools.py` (admission, `_run`, `_map_result`, `_map_exception`, the module's
constants) is the executor subject's population, mutated there."""

POLICY_OFF_PATH = {
    "polyloop/policy.py": {
        "Verdict.<body>",
        "Verdict.__post_init__",
        "_listeners",
        "_check_async",
        "ToolPolicy.<body>",
        "ToolPolicy.__post_init__",
    },
    "polyloop/tools.py": {
        "_policed",
        "_never",
        "_execute_policed",
        "_Escaped.<body>",
        "_Escaped.__init__",
        "_in_child",
        "_Track.<body>",
        "_Track.__init__",
        "_HandlerRaised.<body>",
        "_HandlerRaised.__init__",
    },
}
"""Every function of `polyloop/policy.py`, and of the policy section of `polyloop/tools.py`, is on
`POLICY_PATH_FUNCTIONS` or here (a test checks it, so a new function is classified on purpose)."""


RECOVERY_MODULES = ("polyloop/durable/_run.py", "polyloop/durable/_store.py")
RECOVERY_PATH_FUNCTIONS = {
    "polyloop/durable/_run.py": {
        "<module>",
        "BatchState.<body>",
        "BatchState.__init__",
        "_StoreJournal.<body>",
        "_StoreJournal.__init__",
        "_StoreJournal.committed",
        "_StoreJournal.started",
        "_call_body",
        "_canonical",
        "_check_same_batch",
        "_describe",
        "_env_error_not_run",
        "_interrupted",
        "_outcome_body",
        "_outcome_from",
        "_policy_now",
        "_rejection",
        "_run",
        "_stop",
        "_store_name",
        "read_batch",
        "run_durable",
    },
    "polyloop/durable/_store.py": {
        "<module>",
        "StoredRecord.<body>",
        "SqliteJournalStore.<body>",
        "SqliteJournalStore.__init__",
        "SqliteJournalStore._check_or_create",
        "SqliteJournalStore._connect",
        "SqliteJournalStore._create",
        "SqliteJournalStore._verify",
        "SqliteJournalStore.append",
        "SqliteJournalStore.records",
        "_crc",
    },
}
"""What `run_durable` over `SqliteJournalStore` runs when the recovery subject's reference
target runs, resumes or refuses a batch."""
RECOVERY_OFF_PATH = {
    "polyloop/durable/_run.py": {
        "BatchState.state_of",
        "_check_arguments",
        "JournalStore.<body>",
        "JournalStore.append",
        "JournalStore.records",
    },
    "polyloop/durable/_store.py": {
        "JournalStoreError.<body>",
        "JournalDamagedError.<body>",
        "SqliteJournalStore.__enter__",
        "SqliteJournalStore.__exit__",
        "SqliteJournalStore.__repr__",
        "SqliteJournalStore.batch_ids",
        "SqliteJournalStore.close",
        "SqliteJournalStore.iter_all",
        "SqliteJournalStore.path",
        "_fsync_directory",
        "_uri_path",
    },
}
"""Off the recovery kit's path, with the reason: the `JournalStore` protocol's stubs; the error
classes' bodies (docstrings); what only ``python -m polyloop.durable show`` and the library's
own tests use (`BatchState.state_of`, `read_only` opening and its `_uri_path`, `batch_ids`,
`iter_all`, `close`, the context manager, `path`, `__repr__`); `run_durable`'s argument
checks (`_check_arguments`: they refuse a call, as `RegistryExecutor.__init__`'s refuse an
executor, and a runtime under certification is called with a batch id and actions); and
`_fsync_directory`, which only a power loss can tell from a no-op (J12, which the kit skips: a
SIGKILL never loses the page cache). Every function of the two modules is on one list or the
other (a test checks it). Single statements on the path that only such conditions reach are
kind ``unreachable`` in `tests/mutants/equivalent_recovery.toml`, each with its reason."""


POLICY_OWNED = {
    "polyloop/tools.py": (
        POLICY_PATH_FUNCTIONS["polyloop/tools.py"] | POLICY_OFF_PATH["polyloop/tools.py"]
    )
    - PATH_FUNCTIONS["polyloop/tools.py"]
}
"""The policy stages of `polyloop/tools.py` (`_decide`, `_Chain`, `_policed`, ...): the policy
subject mutates them and judges them by `certify(policy_factory)` and `tests/test_policy*.py`,
so the executor subject leaves them out. `RegistryExecutor.execute` is on both paths and both
subjects mutate it (its policed branch runs only under a policy: the executor's kit never
reaches it)."""


def policy_factory(registry: Any, policy: Any) -> Any:
    """The policy factory the policy subject's kit judge certifies on P1–P12."""
    return registry.executor(policy=policy)


def batch_policy_factory(registry: Any, policy: Any, max_concurrency: int = 10) -> Any:
    """The batch policy factory the batch subject's kit judge certifies on P1–P12 (P11
    included): the batch's own deciding stages run only with a policy in force."""
    return registry.batch_executor(max_concurrency=max_concurrency, policy=policy)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Subject:
    """What one `--subject` mutates, how its kit judge certifies it, and where it writes."""

    name: str
    modules: tuple[str, ...]
    target: str
    """The polyloop class the kit certifies (a factory: `certify(target, ...)`)."""
    clause_kinds: str
    """The first letters of the clause IDs whose reach is measured and that judge a mutant."""
    equivalent_file: Path
    results: Path
    logs: Path
    reach_prefix: str
    path: dict[str, set[str]] | None = None
    """The functions on the subject's path (default `_ON_PATH`, both older subjects')."""
    population: dict[str, set[str]] | None = None
    """When set, only mutants of these functions are made (the modules are shared)."""
    left_to: dict[str, set[str]] | None = None
    """Functions of the subject's modules that another subject mutates and judges (its own
    path and off-path sets), so they are not made here: each mutant is counted once."""
    tests: str = "test_*.py"
    """The library tests that judge the subject (a glob under `tests/`)."""


SUBJECTS = {
    "executor": Subject(
        name="executor",
        modules=MODULES,
        target="RegistryExecutor",
        clause_kinds="VE",
        equivalent_file=EQUIVALENT_FILE,
        results=CACHE_DIR / "results.json",
        logs=CACHE_DIR / "logs",
        reach_prefix="reach-",
        left_to=POLICY_OWNED,
    ),
    "batch": Subject(
        name="batch",
        modules=BATCH_MODULES,
        target="RegistryBatchExecutor",
        clause_kinds="BVEP",
        equivalent_file=ROOT / "tests" / "mutants" / "equivalent_batch.toml",
        results=CACHE_DIR / "results-batch.json",
        logs=CACHE_DIR / "logs-batch",
        reach_prefix="reach-batch-",
    ),
    "policy": Subject(
        name="policy",
        modules=POLICY_MODULES,
        target="policy_factory",
        clause_kinds="P",
        equivalent_file=ROOT / "tests" / "mutants" / "equivalent_policy.toml",
        results=CACHE_DIR / "results-policy.json",
        logs=CACHE_DIR / "logs-policy",
        reach_prefix="reach-policy-",
        path=POLICY_PATH_FUNCTIONS,
        population={
            module: POLICY_PATH_FUNCTIONS.get(module, set()) | POLICY_OFF_PATH.get(module, set())
            for module in POLICY_MODULES
        },
        tests="test_policy*.py",
    ),
    "recovery": Subject(
        name="recovery",
        modules=RECOVERY_MODULES,
        target="conformance.recovery.reference:factory",
        clause_kinds="J",
        equivalent_file=ROOT / "tests" / "mutants" / "equivalent_recovery.toml",
        results=CACHE_DIR / "results-recovery.json",
        logs=CACHE_DIR / "logs-recovery",
        reach_prefix="reach-recovery-",
        path=RECOVERY_PATH_FUNCTIONS,
        population={
            module: RECOVERY_PATH_FUNCTIONS[module] | RECOVERY_OFF_PATH[module]
            for module in RECOVERY_MODULES
        },
        tests="test_durable*.py",
    ),
}
SUBJECT = SUBJECTS["executor"]
"""The subject of this run, set by `main` before anything forks (the children inherit it)."""


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
        paths = _ON_PATH if SUBJECT.path is None else SUBJECT.path
        return self.function in paths.get(self.module, set())


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
                # A class's own statements (fields, decorators, `__slots__`) are "Class.<body>",
                # so they are told apart from the module's; its methods are narrower spans.
                qualified = f"{name}.<body>" if isinstance(child, ast.ClassDef) else name
                functions.append((first, child.end_lineno or child.lineno, qualified))
                name += "."
            if isinstance(child, ast.stmt):
                body = getattr(child, "body", None)
                if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                    inner = [
                        body[0].lineno,
                        *(d.lineno for d in getattr(body[0], "decorator_list", [])),
                    ]
                    header_end = max(child.lineno, min(inner) - 1)
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
    """Every mutant cosmic-ray's argument-free operators make of the subject's modules (cached
    on disk by the sources' hash, since parsing and walking them costs tens of seconds)."""
    from cosmic_ray.ast import ast_nodes, get_ast

    sources = {module: (ROOT / module).read_text(encoding="utf-8") for module in SUBJECT.modules}
    digest = hashlib.sha256(
        json.dumps(
            [sources, [name for name, _ in _operators()], Path(__file__).read_text()],
            sort_keys=True,
        ).encode()
    ).hexdigest()[:16]
    cache = CACHE_DIR / f"mutants-{digest}.pickle"
    if cache.exists():
        cached: list[Mutant] = pickle.loads(cache.read_bytes())
        return _population(cached)
    tasks: list[tuple[str, str, int]] = []
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
    return _population(mutants)


def _population(mutants: list[Mutant]) -> list[Mutant]:
    """The subject's mutants: those of its `population` functions when it names some, never
    those of functions it leaves to another subject (`left_to`)."""
    kept, left = SUBJECT.population, SUBJECT.left_to or {}
    mutants = [m for m in mutants if m.function not in left.get(m.module, set())]
    if kept is None:
        return mutants
    return [m for m in mutants if m.function in kept.get(m.module, set())]


def target() -> Any:
    """What the subject's kit judge certifies: a polyloop class, or a factory of this module."""
    import polyloop

    if ":" in SUBJECT.target:  # an importable factory: the recovery subject's lifetimes import it
        module, _, attr = SUBJECT.target.partition(":")
        return getattr(importlib.import_module(module), attr)
    found = getattr(polyloop, SUBJECT.target, None)
    return found if found is not None else globals()[SUBJECT.target]


# ---- loading a mutant in memory ---------------------------------------------------------------


def _install(mutant: Mutant | None) -> None:
    if mutant is not None:
        loader = MutantLoader(mutant.module_name, str(ROOT / mutant.module), mutant.source)
        sys.meta_path.insert(0, loader)


_CO_OPTIMIZED = 0x0001


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _own(code: types.CodeType) -> types.CodeType:
    """`code` without its nested code objects: what its own body does."""
    return code.replace(
        co_consts=tuple(None if isinstance(c, types.CodeType) else c for c in code.co_consts)
    )


def code_patches(mutant: Mutant) -> list[tuple[types.CodeType, types.CodeType]] | None:
    """(original, mutated) code objects of the functions the mutant changes, or None when it
    changes something that runs at import (module or class body, a default, a decorator):
    such a mutant needs a fresh import instead of patched functions."""
    path = str(ROOT / mutant.module)
    original = compile((ROOT / mutant.module).read_text(encoding="utf-8"), path, "exec")
    try:
        mutated = compile(mutant.source, path, "exec")
    except SyntaxError:
        return None  # judged by a fresh import, which fails: every judge sees it
    # co_qualname is 3.11+; the runs use 3.11 (tox -e mutants), the harness's tests every Python.
    before = {(_qualname(c), c.co_firstlineno): c for c in _codes(original)}
    after = {(_qualname(c), c.co_firstlineno): c for c in _codes(mutated)}
    if before.keys() != after.keys():
        return None
    patches = []
    for key, old in before.items():
        new = after[key]
        if old == new:
            continue
        if _own(old) != _own(new):
            if not old.co_flags & _CO_OPTIMIZED or old.co_freevars != new.co_freevars:
                return None  # a module or class body changed
            patches.append((old, new))
    return patches


def live_functions(prefix: str = "polyloop") -> list[types.FunctionType]:
    """Every function object of polyloop alive now (methods, lambdas kept in tables, ...)."""
    import gc

    return [
        obj
        for obj in gc.get_objects()
        if type(obj) is types.FunctionType and str(obj.__module__).startswith(prefix)
    ]


def _qualname(code: types.CodeType) -> str:
    return str(getattr(code, "co_qualname", code.co_name))


def patch_in_place(mutant: Mutant, functions: Sequence[types.FunctionType]) -> bool:
    """Swap the mutated code into the live function objects; False when that cannot express
    the mutant (then the caller imports it fresh)."""
    patches = code_patches(mutant)
    if not patches:
        return False
    patched = 0
    for old, new in patches:
        for function in functions:
            if function.__code__ == old:
                function.__code__ = new
                patched += 1
    return patched > 0


def fresh_import(mutant: Mutant) -> None:
    """Forget polyloop, the kit and the test modules, then import them again over the mutant."""
    for name in list(sys.modules):
        root = name.split(".")[0]
        if root in ("polyloop", "conformance", "_helpers", "conftest") or root.startswith("test_"):
            del sys.modules[name]
    _install(mutant)


_SHIM = """\
# Written by tests/mutants/run.py: loads the mutant named by POLYLOOP_MUTANT in every process
# started with this folder first on its path (the recovery kit's lifetimes, a crash test's child).
import sys

sys.path.insert(0, {folder!r})
from mutant_loader import install_from_environment

del sys.path[0]
install_from_environment()
"""


def expose_to_children(mutant: Mutant) -> Path:
    """Make every Python process this one starts from now on import `mutant` (a
    ``sitecustomize`` shim first on ``sys.path`` and ``PYTHONPATH``, reading the mutant from
    the file ``POLYLOOP_MUTANT`` names). Returns the shim's folder (the forked judge's own,
    removed with its temporary files)."""
    folder = Path(tempfile.mkdtemp(prefix="polyloop-mutant-shim-"))
    shim = _SHIM.format(folder=str(Path(__file__).resolve().parent))
    (folder / "sitecustomize.py").write_text(shim, encoding="utf-8")
    found = folder / "mutant.json"
    body = {"name": mutant.module_name, "path": str(ROOT / mutant.module), "source": mutant.source}
    found.write_text(json.dumps(body), encoding="utf-8")
    os.environ["POLYLOOP_MUTANT"] = str(found)
    sys.path.insert(0, str(folder))
    paths = [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    return folder


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

    return [clause.id for clause in CLAUSES if clause.id[0] in SUBJECT.clause_kinds]


def _batch_kit_verdict(
    mutant: Mutant, clauses: Sequence[str], functions: Sequence[types.FunctionType]
) -> dict[str, Any]:
    """Certify the (mutated) RegistryBatchExecutor on its reachable B clauses, then, if they
    pass, on its reachable V/E clauses through one-call batches, then `batch_policy_factory` on
    its reachable P clauses; each `certify` stops at the first clause that fails. A survivor
    is certified again at level ``hardened`` on the V/E clauses only: that level adds hostile
    objects to V/E's scenarios and nothing to B1–B18 or P1-P12."""
    if not patch_in_place(mutant, functions):
        fresh_import(mutant)
    try:
        from conformance import certify
        from polyloop import RegistryBatchExecutor
    except Exception as exc:
        return {"status": "killed", "clause": "import", "detail": repr(exc)[:300]}
    batch = [c for c in clauses if c.startswith("B")]
    through = [c for c in clauses if c[0] in "VE"]
    policed = [c for c in clauses if c.startswith("P")]
    groups = ((RegistryBatchExecutor, batch), (RegistryBatchExecutor, through))
    for factory, group in (*groups, (batch_policy_factory, policed)):
        if not group:
            continue
        report = certify(factory, only=group, level="strict", profile="ci", seed=0, fail_fast=True)
        if not report.passed:
            return {"status": "killed", "clause": report.failed_ids()[0]}
    if through:
        return _hardening(certify, RegistryBatchExecutor, through)
    return {"status": "survived"}


RECOVERY_PROFILE = "ci"
"""The recovery kit judge's profile (the harness's own tests use ``fast``: 5 schedules)."""


def _recovery_kit_verdict(
    mutant: Mutant, clauses: Sequence[str], functions: Sequence[types.FunctionType]
) -> dict[str, Any]:
    """Certify the reference durable runtime on J1-J13 with the mutant in every lifetime (the
    lifetimes are child processes: `expose_to_children`), stopping at the first clause that
    fails. There is no ``hardened`` pass: that level adds nothing to J1-J13."""
    fresh_import(mutant)
    expose_to_children(mutant)
    try:
        from conformance import certify

        factory = target()
    except Exception as exc:
        return {"status": "killed", "clause": "import", "detail": repr(exc)[:300]}
    report = certify(
        factory, only=clauses, level="strict", profile=RECOVERY_PROFILE, seed=0, fail_fast=True
    )
    if report.passed:
        return {"status": "survived"}
    return {"status": "killed", "clause": report.failed_ids()[0]}


def _kit_verdict(
    mutant: Mutant, clauses: Sequence[str], functions: Sequence[types.FunctionType]
) -> dict[str, Any]:
    """Certify the (mutated) RegistryExecutor, stopping at the first clause that fails."""
    if not patch_in_place(mutant, functions):
        fresh_import(mutant)
    try:
        from conformance import certify

        RegistryExecutor = target()  # the executor subject's class, or a factory
    except Exception as exc:
        return {"status": "killed", "clause": "import", "detail": repr(exc)[:300]}
    if USE_FAIL_FAST:
        report = certify(
            RegistryExecutor, only=clauses, level="strict", profile="ci", seed=0, fail_fast=True
        )
        if report.passed:
            return _hardening(certify, RegistryExecutor, clauses)
        return {"status": "killed", "clause": report.failed_ids()[0]}
    for clause in clauses:
        try:
            report = certify(RegistryExecutor, only=[clause], level="strict", profile="ci", seed=0)
        except Exception as exc:
            return {"status": "killed", "clause": clause, "detail": f"certify raised {exc!r}"[:300]}
        if not report.passed:
            return {"status": "killed", "clause": clause}
    return _hardening(certify, RegistryExecutor, clauses)


def _hardening(certify: Any, executor: Any, clauses: Sequence[str]) -> dict[str, Any]:
    """A mutant strict does not kill, judged again at level ``hardened`` (issue 18): one
    that only a hostile-object trap kills is kind ``hardening`` (left to the library tests,
    outside the kit's population), with the clause that told it apart as its reason."""
    report = certify(executor, only=clauses, level="hardened", profile="ci", seed=0, fail_fast=True)
    if report.passed:
        return {"status": "survived"}
    return {"status": "survived", "hardening": report.failed_ids()[0]}


def _tests_verdict(mutant: Mutant, nodeids: Sequence[str]) -> dict[str, Any]:
    """A fresh `pytest -x` over `nodeids` with the mutant imported (for mutants that change
    what runs at import; the others go to a `_TestServer`)."""
    fresh_import(mutant)
    if SUBJECT.name == "recovery":
        expose_to_children(mutant)  # the crash tests' children
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
        data_file=None, include=[str(ROOT / module) for module in SUBJECT.modules], branch=False
    )
    return cov


def _lines_by_module(data: Any) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for filename in data.measured_files():
        module = Path(filename).resolve().relative_to(ROOT).as_posix()
        found[module] = sorted(data.lines(filename) or [])
    return found


def _recovery_reach() -> dict[str, Any]:
    """The recovery reference certified once on every J clause: which pass (J12 is skipped), and
    how long each took. No lines: the lifetimes run in child processes that SIGKILL themselves,
    where coverage cannot follow, so every mutant on the path is judged on every clause."""
    from conformance import certify

    report = certify(target(), level="strict", profile="ci", seed=0)
    return {
        "status": "pass" if report.passed else "fail",
        "clauses": {
            result.id: {"status": str(result.status), "clause_seconds": result.seconds}
            for result in report.results
        },
    }


def _clause_reach(clause: str) -> dict[str, Any]:
    cov = _coverage()
    cov.start()
    started = time.monotonic()
    from conformance import certify

    subject_target = target()
    if SUBJECT.name == "batch" and clause.startswith("P"):
        subject_target = batch_policy_factory  # the batch with a policy in force
    try:
        report = certify(subject_target, only=[clause], level="strict", profile="ci", seed=0)
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
        for path in (ROOT / "tests").glob(SUBJECT.tests)
        if path.name not in EXCLUDED_TESTS
    )


# ---- the run ----------------------------------------------------------------------------------


ANNOTATION_REASON = (
    "annotation only: polyloop modules use `from __future__ import annotations`, so a "
    "function's annotations are strings nothing evaluates, and an annotated assignment in a "
    "function body is never evaluated at all; the compiled code is otherwise identical (found "
    "by `annotation_only`, not judged)"
)


def annotation_only(mutant: Mutant) -> bool:
    """True when the mutant changes nothing but function annotations (parameters, returns) and
    the annotations of assignments in a function's own body (``compiled: dict[...] = {}``),
    which Python never evaluates nor stores (PEP 526). Annotations at module or class level are
    kept: they are stored, and a dataclass reads its fields' annotations."""
    import ast

    def in_body(function: ast.AST) -> Iterable[ast.AST]:
        pending = list(ast.iter_child_nodes(function))
        while pending:
            node = pending.pop()
            yield node
            if not isinstance(node, ast.ClassDef):  # a class body's annotations are stored
                pending.extend(ast.iter_child_nodes(node))

    def stripped(source: str) -> str:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                node.returns = None
                for inner in in_body(node):
                    if isinstance(inner, ast.AnnAssign):
                        inner.annotation = ast.Constant(value=None)
            elif isinstance(node, ast.arg):
                node.annotation = None
        return ast.dump(tree)

    original = (ROOT / mutant.module).read_text(encoding="utf-8")
    if "from __future__ import annotations" not in original:
        return False
    try:
        mutated = stripped(mutant.source)
    except SyntaxError:  # e.g. `*` -> `+` in `(self, *, max_concurrency)`: judged, fails to import
        return False
    return stripped(original) == mutated


def with_annotation_only(
    mutants: Sequence[Mutant], equivalents: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """`equivalents` plus every annotation-only mutant, as kind `equivalent`."""
    found = dict(equivalents)
    for mutant in mutants:
        if mutant.id not in found and annotation_only(mutant):
            found[mutant.id] = {"kind": "equivalent", "reason": ANNOTATION_REASON}
    return found


def _equivalents(path: Path | None = None) -> dict[str, dict[str, str]]:
    """The subject's equivalent list, by mutant id. Besides `[[equivalent]]` entries (kinds
    equivalent, wording, hardening, unreachable) a list may hold `[[survivor]]` entries: a
    survivor kept on purpose, still counted as one, whose reason the report prints; kind
    ``survivor``."""
    equivalent_file = SUBJECT.equivalent_file if path is None else path
    if not equivalent_file.exists():
        return {}
    import tomllib  # the tox env runs on 3.11; the harness's unit tests never get here

    data = tomllib.loads(equivalent_file.read_text(encoding="utf-8"))
    found = {}
    for entry in data.get("equivalent", []):
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise SystemExit(f"{equivalent_file}: entry {entry.get('id')!r} needs a reason")
        kind = entry.get("kind", "equivalent")
        if kind not in KINDS:
            raise SystemExit(f"{equivalent_file}: {entry['id']!r}: kind is one of {KINDS}")
        found[entry["id"]] = {"reason": entry["reason"], "kind": kind}
    for entry in data.get("survivor", []):
        if not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise SystemExit(f"{equivalent_file}: survivor {entry.get('id')!r} needs a reason")
        found[entry["id"]] = {"reason": entry["reason"], "kind": "survivor"}
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--subject",
        choices=tuple(SUBJECTS),
        default="executor",
        help="executor: polyloop/tools.py, _json.py, types.py judged by certify(RegistryExecutor); "
        "batch: polyloop/batch.py judged by certify(RegistryBatchExecutor) on B1-B18 (and V/E, "
        "and P1-P12 on batch_policy_factory); "
        "policy: the policy stages of polyloop/tools.py and polyloop/policy.py judged by "
        "certify(policy_factory) on P1-P12; "
        "recovery: polyloop/durable/_run.py, _store.py judged by "
        "certify(conformance.recovery.reference:factory) on J1-J13 "
        "(each rewrites its own section of --report)",
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", default=str(ROOT / "docs" / "detection.md"))
    parser.add_argument(
        "--results", default=None, help="default: build/mutants/results.json (results-batch.json)"
    )
    parser.add_argument("--limit", type=int, default=None, help="judge only the first N mutants")
    parser.add_argument("--match", default=None, help="judge only mutants whose id contains this")
    parser.add_argument(
        "--judge",
        choices=("both", "kit", "tests"),
        default="both",
        help="run only one judge (for iterating on the kit or on the tests; the report says "
        "the run is partial)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite the report from --results without judging anything",
    )
    parser.add_argument(
        "--reuse-kills",
        action="store_true",
        help="keep the kills and timeouts of the previous --results for unchanged mutants (for "
        "iterating on the kit or the tests, which only add checks; the report says so); judge "
        "everything else again",
    )
    args = parser.parse_args(argv)
    global SUBJECT
    SUBJECT = SUBJECTS[args.subject]
    if args.results is None:
        args.results = str(SUBJECT.results)

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
    equivalents = with_annotation_only(mutants, equivalents)
    if args.report_only:
        saved = json.loads(Path(args.results).read_text())
        meta = saved.pop("__meta__", {})
        mutants = [m for m in mutants if m.id in saved]
        return _write(args, mutants, generated, saved, equivalents, stale, meta)

    # Reference reach: which clause and which test executes which line.
    clauses: list[str] = []
    clause_info: dict[str, dict[str, Any]] = {}
    test_info: dict[str, dict[str, Any]] = {}
    logs = SUBJECT.logs
    reach_cache = CACHE_DIR / f"{SUBJECT.reach_prefix}{_inputs_digest()}.json"
    cached_reach = json.loads(reach_cache.read_text()) if reach_cache.exists() else None
    clause_jobs = [
        _Job(("clause", c), functools_partial(_clause_reach, c), 900, logs / f"reach-{c}.log")
        for c in _subprocess_value(kit_clauses)
    ]
    if SUBJECT.name == "recovery":
        clause_jobs = [_Job(("recovery", "J"), _recovery_reach, 1800, logs / "reach-J.log")]
    reach_jobs = clause_jobs + [
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
        if kind == "recovery":
            if result.get("status") != "pass":
                raise SystemExit(f"reference run of the recovery clauses did not pass: {result}")
            for clause, info in result["clauses"].items():
                if info["status"] == "pass":  # J12 is skipped: it judges no mutant
                    clauses.append(clause)
                    clause_info[clause] = {"clause_seconds": info["clause_seconds"], "lines": {}}
        elif kind == "clause":
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
        if SUBJECT.name == "recovery":
            return list(clauses)  # lifetimes share the clauses; contract order (J1 runs them)
        lines = set(range(mutant.lines[0], mutant.lines[1] + 1))
        hit = [c for c in clauses if lines & set(clause_info[c]["lines"].get(mutant.module, []))]
        if not hit and code_patches(mutant) is None:
            hit = list(clauses)  # runs at import, before any clause is measured: all depend on it
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
        if not found and code_patches(mutant) is None:
            return all_tests  # runs at import, before any test is measured: all depend on it
        return sorted(found, key=lambda n: durations.get(n, 0.0))

    results: dict[str, dict[str, Any]] = {m.id: {} for m in mutants}
    previous: dict[str, dict[str, Any]] = {}
    if args.reuse_kills and Path(args.results).exists():
        previous = json.loads(Path(args.results).read_text())
    kit_jobs: list[_Job] = []
    test_requests: list[tuple[Mutant, list[str], float]] = []
    # The kit and the test modules are imported once, here, with the reference code: each
    # forked judge swaps the mutated code objects into the live functions (a mutant of what
    # runs at import is imported afresh instead).
    import polyloop  # noqa: F401
    from conformance import certify  # noqa: F401

    functions = live_functions()
    verdict = {"batch": _batch_kit_verdict, "recovery": _recovery_kit_verdict}.get(
        SUBJECT.name, _kit_verdict
    )
    stats = _KillStats(clause_info)
    by_id = {mutant.id: mutant for mutant in mutants}
    for mutant in mutants:
        kit = reached_clauses(mutant)
        tests = reached_tests(mutant)
        entry = results[mutant.id]
        entry["kit_clauses"] = kit
        entry["test_count"] = len(tests)
        entry["source_sha"] = hashlib.sha1(mutant.source.encode()).hexdigest()
        entry["patched"] = bool(code_patches(mutant))
        if equivalents.get(mutant.id, {}).get("reason") == ANNOTATION_REASON:
            entry["kit"] = entry["tests"] = {"status": "not judged"}
            continue
        old = previous.get(mutant.id, {})
        if old.get("source_sha") == entry["source_sha"]:
            for judge in ("kit", "tests"):
                if old.get(judge, {}).get("status") in ("killed", "timeout"):
                    entry[judge] = {**old[judge], "reused": True}
        if "kit" in entry:
            pass
        elif args.judge == "tests":
            entry["kit"] = {"status": "skipped"}
        elif not mutant.on_path:
            entry["kit"] = {"status": "off-path"}  # the kit's target is the path; saves time
        elif kit:
            budget = sum(clause_info[c]["clause_seconds"] for c in kit)
            kit_jobs.append(
                _Job(
                    (mutant.id, "kit"),
                    functools_partial(verdict, mutant, _Ordered(kit, mutant, stats), functions),
                    60 + 4 * budget,
                    logs / f"{_safe(mutant)}.kit.log",
                )
            )
        else:
            entry["kit"] = {"status": "unreached"}
        if "tests" in entry:
            pass
        elif args.judge == "kit":
            entry["tests"] = {"status": "skipped"}
        elif tests:
            budget = sum(durations.get(n, 0.0) for n in tests)
            test_requests.append((mutant, tests, 60 + 4 * budget))
        else:
            entry["tests"] = {"status": "unreached"}

    done = [0]
    total = len(kit_jobs) + len(test_requests)

    def judged(job: _Job, result: dict[str, Any]) -> None:
        mutant_id, judge = job.key
        if judge == "kit" and result.get("status") == "killed":
            stats.add(by_id[mutant_id].function, str(result.get("clause")))
        record(mutant_id, judge, result, job.log)

    def record(mutant_id: str, judge: str, result: dict[str, Any], log: Path) -> None:
        results[mutant_id][judge] = result
        if result.get("status") in ("survived", "killed"):
            log.unlink(missing_ok=True)
        done[0] += 1
        if done[0] % 50 == 0:
            elapsed = time.monotonic() - began
            print(f"  {done[0]}/{total} judgements ({elapsed:.0f}s)", flush=True)

    run_jobs(kit_jobs, args.jobs, judged)
    print(f"kit judged ({time.monotonic() - began:.0f}s so far)", flush=True)
    fresh = serve_tests(test_requests, args.jobs, logs, record, set(durations))
    run_jobs(
        [
            _Job(
                (mutant.id, "tests"),
                functools_partial(_tests_verdict, mutant, tests),
                timeout,
                logs / f"{_safe(mutant)}.tests.log",
            )
            for mutant, tests, timeout in fresh
        ],
        args.jobs,
        judged,
    )
    wall = time.monotonic() - began
    meta = {
        "wall": wall,
        "reference_seconds": reference_seconds,
        "jobs": args.jobs,
        "load": [list(load), list(os.getloadavg())],
        "partial": bool(args.match or args.limit or args.judge != "both"),
        "reused": bool(args.reuse_kills),
    }
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text(
        json.dumps({**results, "__meta__": meta}, indent=1, sort_keys=True)
    )
    return _write(args, mutants, generated, results, equivalents, stale, meta)


def _write(
    args: argparse.Namespace,
    mutants: Sequence[Mutant],
    generated: int,
    results: dict[str, dict[str, Any]],
    equivalents: dict[str, dict[str, str]],
    stale: Sequence[str],
    meta: dict[str, Any],
) -> int:
    from detection_report import write_report

    partial = bool(meta.get("partial")) or len(mutants) < generated
    problems = write_report(
        Path(args.report),
        mutants=mutants,
        generated=generated,
        results=results,
        equivalents=equivalents,
        stale=[] if partial else stale,
        wall=float(meta.get("wall", 0.0)),
        reference_seconds=float(meta.get("reference_seconds", 0.0)),
        jobs=int(meta.get("jobs", args.jobs)),
        load=tuple(tuple(x) for x in meta.get("load", [[0.0], [0.0]])),  # type: ignore[arg-type]
        partial=partial,
        subject=SUBJECT.name,
    )
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"report written to {args.report}")
    return 1 if problems else 0


class _KillStats:
    """Which clause killed earlier mutants, per function: a forked judge tries those first, so
    a kill costs one clause rather than a sweep (the parent's counts are read at fork time)."""

    def __init__(self, clause_info: dict[str, dict[str, Any]]) -> None:
        self.seconds = {c: float(info["clause_seconds"]) for c, info in clause_info.items()}
        self.by_function: dict[str, dict[str, int]] = {}
        self.overall: dict[str, int] = {}

    def add(self, function: str, clause: str) -> None:
        local = self.by_function.setdefault(function, {})
        local[clause] = local.get(clause, 0) + 1
        self.overall[clause] = self.overall.get(clause, 0) + 1

    def order(self, clauses: Sequence[str], function: str) -> list[str]:
        local = self.by_function.get(function, {})
        return sorted(
            clauses,
            key=lambda c: (-local.get(c, 0), -self.overall.get(c, 0) / 4, self.seconds.get(c, 0)),
        )


class _Ordered(Sequence[str]):
    """The reachable clauses, in the order `_KillStats` gives when the judge starts."""

    def __init__(self, clauses: Sequence[str], mutant: Mutant, stats: _KillStats) -> None:
        self.clauses, self.mutant, self.stats = list(clauses), mutant, stats
        self._order: list[str] | None = None

    def _resolved(self) -> list[str]:
        if self._order is None:
            self._order = self.stats.order(self.clauses, self.mutant.function)
        return self._order

    def __getitem__(self, index: Any) -> Any:
        return self._resolved()[index]

    def __len__(self) -> int:
        return len(self.clauses)


def _safe(mutant: Mutant) -> str:
    return hashlib.sha1(mutant.id.encode()).hexdigest()[:12]


def serve_tests(
    requests: Sequence[tuple[Mutant, list[str], float]],
    workers: int,
    logs: Path,
    record: Callable[[str, str, dict[str, Any], Path], None],
    known: set[str],
) -> list[tuple[Mutant, list[str], float]]:
    """Judge `requests` with `workers` test servers: each is one pytest session over every
    library test, collected once, that forks a child per mutant, swaps the mutated code in and
    runs the mutant's tests until one fails. Returns the requests a patch cannot express."""
    if not requests:
        return []
    context = multiprocessing.get_context("fork")
    counter = context.Value("i", 0)
    outputs = [logs / f"server-{k}.jsonl" for k in range(workers)]
    logs.mkdir(parents=True, exist_ok=True)
    servers = []
    for k in range(workers):
        outputs[k].unlink(missing_ok=True)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _tests_server(requests, counter, outputs[k], logs / f"server-{k}.log", known)
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        servers.append(pid)
    for pid in servers:
        os.waitpid(pid, 0)
    fresh = []
    seen = set()
    by_id = {mutant.id: (mutant, tests, timeout) for mutant, tests, timeout in requests}
    for output in outputs:
        if not output.exists():
            continue
        for line in output.read_text().splitlines():
            answer = json.loads(line)
            mutant_id = answer.pop("id")
            seen.add(mutant_id)
            if answer.get("status") == "nopatch":
                fresh.append(by_id[mutant_id])
            else:
                record(mutant_id, "tests", answer, logs / "none")
    for mutant_id in by_id:
        if mutant_id not in seen:
            record(mutant_id, "tests", {"status": "crashed", "detail": "server died"}, logs / "x")
    return fresh


def _tests_server(
    requests: Sequence[tuple[Mutant, list[str], float]],
    counter: Any,
    output: Path,
    log: Path,
    known: set[str],
) -> None:
    import pytest
    from _pytest.runner import runtestprotocol

    handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(handle, 1)
    os.dup2(handle, 2)
    os.chdir(ROOT)
    os.environ["HYPOTHESIS_PROFILE"] = "ci"

    class Server:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtestloop(self, session: Any) -> bool:
            items = {item.nodeid: item for item in session.items}
            functions = live_functions()
            # Tests written after the reference coverage was measured have no reach data:
            # run them for every mutant, after the tests known to reach it.
            unmeasured = [n for n in items if n not in known]
            while True:
                with counter.get_lock():
                    index = counter.value
                    counter.value += 1
                if index >= len(requests):
                    return True
                mutant, nodeids, timeout = requests[index]
                answer = _judge_forked(
                    mutant, [*nodeids, *unmeasured], timeout, items, functions, runtestprotocol
                )
                with output.open("a") as sink:
                    sink.write(json.dumps({"id": mutant.id, **answer}) + "\n")

    pytest.main(
        [
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-o",
            "addopts=",
            *library_tests(),
        ],
        plugins=[Server()],
    )


def _judge_forked(
    mutant: Mutant,
    nodeids: Sequence[str],
    timeout: float,
    items: dict[str, Any],
    functions: Sequence[types.FunctionType],
    runtestprotocol: Callable[..., Any],
) -> dict[str, Any]:
    if not code_patches(mutant):
        return {"status": "nopatch"}
    out = Path(tempfile.mkstemp(prefix="polyloop-mutant-")[1])
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setpgid(0, 0)
            os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = tempfile.mkdtemp(prefix="polyloop-hyp-")
            if not patch_in_place(mutant, functions):
                out.write_text(json.dumps({"status": "nopatch"}))
            else:
                if SUBJECT.name == "recovery":
                    expose_to_children(mutant)  # the crash tests' children
                verdict: dict[str, Any] = {"status": "survived"}
                for nodeid in nodeids:
                    item = items.get(nodeid)
                    if item is None:
                        continue
                    reports = runtestprotocol(item, log=False, nextitem=None)
                    if any(report.failed for report in reports):
                        verdict = {"status": "killed", "test": nodeid}
                        break
                out.write_text(json.dumps(verdict))
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                out.write_text(json.dumps({"status": "crashed", "error": repr(exc)[:300]}))
        finally:
            os._exit(code)
    while True:
        finished, _ = os.waitpid(pid, os.WNOHANG)
        if finished:
            break
        if time.monotonic() - started > timeout:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            out.unlink(missing_ok=True)
            return {"status": "timeout", "seconds": time.monotonic() - started}
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    try:
        answer: dict[str, Any] = json.loads(out.read_text())
    except (OSError, ValueError):
        answer = {"status": "crashed"}
    out.unlink(missing_ok=True)
    answer["seconds"] = time.monotonic() - started
    return answer


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
