"""Issue 30, item 1: a subject is one subpackage and one registry line.

A toy subject shaped like the coming policy subject (its target is ``factory(registry,
policy)``) is registered the way `conformance.subjects` registers one, and `certify` takes it:
the engine picks it by its claim, checks its clause with its search, writes its reproduce line
and its words in the report, without a line of the engine, the report or the CLI naming it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from conformance import catalog, engine, subjects
from conformance._core import wording
from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus, Counterexample, report_schema
from conformance._core.subject import RunSpec, Subject, Unwatched, Watched, missing_parts
from conformance._core.wording import ReportWords
from conformance.engine import SetUpError, certify, select_clauses
from polyloop import ToolRegistry

pytestmark = pytest.mark.every_python  # targets are recognised by `inspect.signature`

CLAUSE = "S1"
"""A catalog row no registered subject checks (the library's own tests do): the toy's."""


class ToySubject:
    """A policy-shaped subject: ``factory(registry, policy)`` builds an object whose
    ``allow(name)`` must refuse the names the policy denies."""

    name: str = "toy"
    rows: tuple[catalog.Clause, ...] = (catalog.get(CLAUSE),)
    clauses: tuple[str, ...] = (CLAUSE,)
    headings: Mapping[str, str] = MappingProxyType({"spec": "3. Tool specs"})
    entry_points: Mapping[str, str] = MappingProxyType({"toy": "the toy subject"})
    checked_by: tuple[str, ...] = ("toy",)
    contract_classes: tuple[str, ...] = ()
    certified: bool = True
    through: str | None = None
    wrong_target: str = "a toy clause: the target is not a toy"
    words: ReportWords = ReportWords(kind="a toy policy")
    preload: tuple[str, ...] = ()

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        try:
            # 4: above the registered policy subject, which claims the same factories with 3
            return 4 if "policy" in inspect.signature(target).parameters else 0
        except (TypeError, ValueError):
            return 0

    def is_instance(self, found: object) -> bool:
        return False

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        return "white-box"

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        kind = inspect.signature(target).parameters["policy"].kind
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            return "the toy factory must take policy= by keyword"
        return None

    def adapt(self, target: Any, mode: str) -> Any:
        return target

    def trial(self, spec: RunSpec) -> Callable[..., Any]:
        factory: Callable[..., Any] = spec.target
        return factory

    def watch(self, trial: Any) -> Watched:
        return Unwatched()

    def search(self, spec: RunSpec, trial: Any, clause_id: str) -> ClauseOutcome:
        built = trial(ToolRegistry([]), policy={"deny": ["rm"]})
        if not built.allow("rm"):
            return ClauseOutcome(verdict=ClauseStatus.PASS, examples=1)
        example = Counterexample(
            schema=None,
            action={"tool_call": {"name": "rm", "arguments": {}}},
            behaviour="denied by the policy",
            expected="refused",
            actual="allowed",
        )
        return ClauseOutcome(
            verdict=ClauseStatus.FAIL, examples=1, message="allowed rm", counterexample=example
        )

    def reproduce(self, spec: RunSpec, clause_id: str) -> str:
        return f"toy-check {spec.name} --seed {spec.seed} --only {clause_id}"


class _Keeps:
    def __init__(self, deny: list[str]) -> None:
        self.deny = deny

    def allow(self, name: str) -> bool:
        return name not in self.deny


class _Ignores(_Keeps):
    def allow(self, name: str) -> bool:
        return True


def keeps_policy(registry: ToolRegistry, policy: dict[str, list[str]]) -> _Keeps:
    return _Keeps(policy["deny"])


def ignores_policy(registry: ToolRegistry, policy: dict[str, list[str]]) -> _Keeps:
    return _Ignores(policy["deny"])


def positional_policy(registry: ToolRegistry, policy: object, /) -> _Keeps:
    return _Keeps([])


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Subject]:
    """The toy registered as one more line of `conformance.subjects` would register it."""
    subject: Subject = ToySubject()
    assert missing_parts(subject) == []
    monkeypatch.setattr(subjects, "SUBJECTS", (*subjects.SUBJECTS, subject))
    wording.register(subject.name, subject.words)
    yield subject
    wording._WORDS.pop(subject.name)


def test_30_a_registered_subject_is_selected_by_name(toy: Subject) -> None:
    assert select_clauses("strict", subject="toy") == (CLAUSE,)
    assert CLAUSE in select_clauses("strict", [CLAUSE], subject="any")
    with pytest.raises(ValueError, match="E4, a clause of action executors"):
        select_clauses("strict", ["E4"], subject="toy")


def test_30_certify_takes_a_registered_subject_by_its_claim(toy: Subject) -> None:
    report = certify(keeps_policy, only=[CLAUSE], profile="fast", target_name="toy:keeps")
    assert report.subject == "toy" and report.passed
    assert [(r.id, r.status) for r in report.results] == [(CLAUSE, "pass")]
    assert "(white-box, a toy policy)" in report.to_text()
    assert "subject" not in report.to_json()  # the toy adds no JSON fields
    import jsonschema

    jsonschema.validate(report.to_json(), report_schema())


def test_30_a_registered_subject_writes_its_counterexample_and_reproduce_line(
    toy: Subject,
) -> None:
    report = certify(ignores_policy, only=[CLAUSE], profile="fast", target_name="toy:ignores")
    result = report.result(CLAUSE)
    assert result.status == "fail" and result.message == "allowed rm"
    assert result.counterexample is not None and result.counterexample.actual == "allowed"
    assert result.reproduce == "toy-check toy:ignores --seed 0 --only S1"


def test_30_a_registered_subject_gives_the_set_up_error(toy: Subject) -> None:
    with pytest.raises(SetUpError, match="the toy factory must take policy= by keyword"):
        certify(positional_policy, only=[CLAUSE], profile="fast")


def test_30_a_plain_factory_stays_with_the_default_subject(toy: Subject) -> None:
    assert engine._subject(lambda registry: None, None) == subjects.DEFAULT.name


# --- the tools subject's own parts (certify takes none of its targets) --------------------------


def _tools_spec(target: object) -> RunSpec:
    from conformance._core.deadline import LoopThread
    from conformance._core.limits import HANDLER_DEADLINE
    from conformance._core.runs import run_settings

    return RunSpec(
        target=target,
        registry=None,
        mode="white-box",
        name="tools:here",
        level="strict",
        profile="fast",
        seed=3,
        deadline=HANDLER_DEADLINE,
        settings=run_settings("fast", None, False, 5),
        runner=LoopThread(),
    )


def _sync(arguments: object) -> str:
    return "ok"


async def _async(arguments: object) -> str:
    return "ok"


def test_30_H1_the_tools_subject_searches_one_clause_over_every_tool() -> None:
    from conformance.tools import ToolDraft

    tools = subjects.by_name("tools")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    drafts = [
        ToolDraft(name="good", description="d", parameters=schema, handler=_async),
        ToolDraft(name="sync", description="d", parameters=schema, handler=_sync),
    ]
    spec = _tools_spec(drafts)
    assert tools.mode(drafts, None) == "white-box" and tools.claims(drafts, None) == 0
    outcome = tools.search(spec, tools.trial(spec), "H1")
    assert outcome.verdict is ClauseStatus.FAIL and outcome.message == "H1 fails for 'sync'"
    assert outcome.counterexample is not None and outcome.counterexample.schema == schema
    assert "async" in outcome.counterexample.actual + outcome.counterexample.expected
    good = _tools_spec(drafts[:1])
    assert tools.search(good, tools.trial(good), "H1").verdict is ClauseStatus.PASS
    assert (
        tools.reproduce(spec, "H1")
        == "polyloop-conformance check-tools tools:here --seed 3 --only H1"
    )
