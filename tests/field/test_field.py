"""Field certification: executors built on five real tool runtimes, against a committed matrix.

Each adapter in this package is certified once (``--level strict --profile ci --seed 0``) and
every certified clause's verdict is compared with ``expected.json``: a clause listed under
``failing`` must fail, any other must pass, so a verdict that changes either way fails its test
(`TestMcp::test_clause_verdict[E5]` ...). A clause listed under ``kit_defects`` is one where the
kit's verdict today is wrong; its test asserts the true verdict and is a strict xfail, so it
starts failing (XPASS) the day the kit is fixed, and the entry must then be deleted.

Each certification runs the kit's command line in a fresh interpreter, as an integrator would
(``python -m conformance certify field.mcp_adapter:McpExecutor --level strict --profile ci
--seed 0 --json FILE``): in-process, the verdicts would depend on which other modules this test
session happened to import (kit defect 10: Hypothesis draws constants from local modules), and
the runtimes' log output would land in this session.

A batch adapter (``"batch": true`` in ``expected.json``) is a factory
``Factory(registry, max_concurrency=N)``; the kit certifies it against V1-V8 and E1-E15
through one-call batches and against B1-B18, with the same command. Until the kit certifies
batch executors (its ``select_clauses`` takes ``subject=``), those tests skip, saying so.

The certification needs the pinned runtimes (``tests/field/requirements.txt``) and takes
minutes, so it runs only with ``POLYLOOP_FIELD=1`` (``tox -e field``); without the runtimes the
tests skip. `test_expected_matrix_is_well_formed` always runs.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.engine import select_clauses

EXPECTED_FILE = Path(__file__).with_name("expected.json")
EXPECTED: dict[str, Any] = json.loads(EXPECTED_FILE.read_text(encoding="utf-8"))["adapters"]
ENABLED = os.environ.get("POLYLOOP_FIELD") == "1"
CLAUSES = select_clauses("strict")
BATCH_IDS = tuple(f"B{n}" for n in range(1, 19))
KIT_CERTIFIES_BATCH = "subject" in inspect.signature(select_clauses).parameters
"""Whether this kit certifies batch factories (the kit's batch subject, branch wp-batchkit):
until it does, the batch adapters' tests skip, saying so."""
BATCH_CLAUSES: tuple[str, ...] = (
    select_clauses("strict", subject="batch")  # type: ignore[call-arg,unused-ignore]
    if KIT_CERTIFIES_BATCH
    else (*CLAUSES, *BATCH_IDS)
)
"""What a batch factory is certified against: V/E through one-call batches, then B1-B18."""
SEED = 0
TESTS_DIR = Path(__file__).resolve().parent.parent

Report = dict[str, dict[str, Any]]
"""A certification's results from its JSON report, by clause ID."""


def _true_verdict(adapter: str, clause: str) -> str:
    entry = EXPECTED[adapter]
    if clause in entry.get("skipped", {}):
        return "skipped"  # the kit cannot judge it on this target, and says why
    if clause in entry.get("errors", {}):
        return "error"  # the kit could not build the executor: the runtime refused the registry
    return "fail" if clause in entry["failing"] else "pass"


def _clauses(adapter: str) -> tuple[str, ...]:
    """What the adapter is certified against: ``"subject"`` in its entry names the kit's
    subject (``policy``: P1-P12 for a policy factory; ``recovery``: J1-J13 for a durable
    runtime factory); ``"batch": true`` is the batch subject; otherwise V/E."""
    subject = EXPECTED[adapter].get("subject")
    if subject is not None:
        return select_clauses("strict", subject=subject)
    return BATCH_CLAUSES if EXPECTED[adapter].get("batch") else CLAUSES


def _cases(adapter: str) -> list[Any]:
    entry = EXPECTED[adapter]
    cases = []
    for clause in _clauses(adapter):
        defect = entry["kit_defects"].get(clause)
        marks = [pytest.mark.xfail(strict=True, reason=f"kit defect: {defect}")] if defect else []
        verdict = _true_verdict(adapter, clause)
        cases.append(pytest.param(clause, id=f"{clause}-{verdict}", marks=marks))
    return cases


def _certify(adapter: str, tmp_path: Path) -> Report:
    entry = EXPECTED[adapter]
    for module in entry["requires"]:
        if ENABLED:
            importlib.import_module(module)  # in the field env a missing runtime is an error
        else:
            pytest.importorskip(module)
    if not ENABLED:
        pytest.skip("field certification runs with POLYLOOP_FIELD=1 (tox -e field)")
    if entry.get("batch") and not KIT_CERTIFIES_BATCH:
        pytest.skip(
            f"{adapter} is a batch factory and this kit does not certify batch executors yet "
            "(select_clauses has no subject=; the kit's batch subject is on branch wp-batchkit): "
            "its verdicts in expected.json were observed with that branch's kit before the merge"
        )
    output = tmp_path / f"{adapter}.json"
    command = [
        sys.executable,
        "-m",
        "conformance",
        "certify",
        entry["target"],
        "--level",
        "strict",
        "--profile",
        "ci",
        "--seed",
        str(SEED),
        "--json",
        str(output),
    ]
    path = [str(TESTS_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    # Exit status 1 means "a clause failed", which most adapters do by design.
    assert done.returncode in (0, 1) and output.is_file(), (
        f"certify {entry['target']} exited {done.returncode}:\n{done.stderr[-3000:]}"
    )
    report = json.loads(output.read_text(encoding="utf-8"))
    return {result["id"]: result for result in report["results"]}


@pytest.fixture(scope="class")
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """One certification per adapter class, shared by its clause tests."""
    adapter: str = request.cls.ADAPTER
    return _certify(adapter, tmp_path_factory.mktemp(adapter))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each adapter class's `test_clause_verdict` runs once per certified clause, with that
    adapter's expected verdict in the test id and its kit defects as strict xfails."""
    if "clause" in metafunc.fixturenames and metafunc.cls is not None:
        metafunc.parametrize("clause", _cases(metafunc.cls.ADAPTER))


class _FieldAdapter:
    """The checks every adapter's test class runs on its report; a subclass names its adapter."""

    ADAPTER: ClassVar[str]

    def test_clause_verdict(self, report: Report, clause: str) -> None:
        assert clause in report, (
            f"{self.ADAPTER}: the kit's report has no {clause} (it reported "
            f"{', '.join(report)}); a batch factory is certified against V/E and B1-B18"
        )
        result = report[clause]
        expected = _true_verdict(self.ADAPTER, clause)
        entry = EXPECTED[self.ADAPTER]
        why = (
            entry["failing"].get(clause)
            or entry.get("errors", {}).get(clause)
            or entry.get("skipped", {}).get(clause, "")
        )
        assert result["status"] == expected, (
            f"{self.ADAPTER} {clause}: the kit now says {result['status']}, expected.json says "
            f"{expected}{f' ({why})' if why else ''}; kit message: {result['message']}; "
            f"reproduce: PYTHONPATH=tests {result['reproduce']}. Update expected.json and "
            "docs/field-report.md if the runtime's behaviour really changed."
        )

    def test_failing_clauses_match(self, report: Report) -> None:
        entry = EXPECTED[self.ADAPTER]
        defects = set(entry["kit_defects"])
        failing = {c for c, r in report.items() if r["status"] not in ("pass", "skipped")} - defects
        assert failing == (set(entry["failing"]) | set(entry.get("errors", {}))) - defects
        skipped = {c for c, r in report.items() if r["status"] == "skipped"}
        assert skipped == set(entry.get("skipped", {}))


class TestMcp(_FieldAdapter):
    ADAPTER = "mcp"


class TestOpenAIAgents(_FieldAdapter):
    ADAPTER = "openai-agents"


class TestLangChain(_FieldAdapter):
    ADAPTER = "langchain"


class TestLangChainHandledErrors(_FieldAdapter):
    ADAPTER = "langchain-handled"


class TestPydanticAi(_FieldAdapter):
    ADAPTER = "pydantic-ai"


class TestOpenAIAgentsBatch(_FieldAdapter):
    ADAPTER = "openai-agents-batch"


class TestPydanticAiBatch(_FieldAdapter):
    ADAPTER = "pydantic-ai-batch"


class TestLangGraphBatch(_FieldAdapter):
    ADAPTER = "langgraph-batch"


class TestPydanticAiPolicy(_FieldAdapter):
    ADAPTER = "pydantic-ai-policy"


class TestPydanticAiPolicyBatch(_FieldAdapter):
    ADAPTER = "pydantic-ai-policy-batch"


class TestOpenAIAgentsPolicy(_FieldAdapter):
    ADAPTER = "openai-agents-policy"


class TestOpenAIAgentsPolicyBatch(_FieldAdapter):
    ADAPTER = "openai-agents-policy-batch"


class TestLangChainPolicy(_FieldAdapter):
    ADAPTER = "langchain-policy"


class TestLangChainPolicyBatch(_FieldAdapter):
    ADAPTER = "langchain-policy-batch"


class TestAgentsBatchRunnerDefault(_FieldAdapter):
    ADAPTER = "openai-agents-batch-default"


class TestLangGraphReactBatch(_FieldAdapter):
    ADAPTER = "langgraph-react-batch"


class TestLangGraphRecovery(_FieldAdapter):
    ADAPTER = "langgraph-recovery"


class TestLangGraphRecoverySync(_FieldAdapter):
    ADAPTER = "langgraph-recovery-sync"


class TestPydanticAiDbosRecovery(_FieldAdapter):
    ADAPTER = "pydantic-ai-dbos-recovery"


class TestPydanticAiDbosRecoverySteps(_FieldAdapter):
    ADAPTER = "pydantic-ai-dbos-recovery-steps"


class TestOpenAIAgentsRecovery(_FieldAdapter):
    ADAPTER = "openai-agents-recovery"


class TestOpenAIAgentsRunStateRecovery(_FieldAdapter):
    ADAPTER = "openai-agents-runstate-recovery"


def test_expected_matrix_is_well_formed() -> None:
    """Every adapter has a test class, names an existing module, and every clause it lists is
    a certified clause with a non-empty reason; no clause is both a divergence and a defect
    entry unless the kit's wrong verdict is a pass for a true failure."""
    classes = {cls.ADAPTER for cls in _FieldAdapter.__subclasses__()}
    assert classes == set(EXPECTED)
    for adapter, entry in EXPECTED.items():
        module_name = entry["target"].partition(":")[0]
        assert Path(__file__).with_name(f"{module_name.rpartition('.')[2]}.py").is_file()
        for section in ("failing", "errors", "skipped", "kit_defects"):
            for clause, reason in entry.get(section, {}).items():
                known = _clauses(adapter)
                assert clause in known, f"{adapter} {section} names unknown clause {clause}"
                assert isinstance(reason, str) and len(reason) > 20, (adapter, clause)
        for clause, reason in entry["kit_defects"].items():
            assert reason.startswith("defect "), (adapter, clause, "name the issue-9 defect")


def test_report_matrices_match_expected() -> None:
    """The policy and recovery tables of docs/field-report.md are the pinned verdicts: a
    verdict changed in expected.json without the report (or the reverse) fails here; rewrite
    them with ``python tests/field/matrix.py``."""
    from field.matrix import REPORT, render

    text = REPORT.read_text(encoding="utf-8")
    assert render(text, EXPECTED) == text, "run: python tests/field/matrix.py"
