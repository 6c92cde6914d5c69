"""The `Subject` protocol: what the kit needs to know of one kind of target.

A subject is one kind of thing the kit checks against one part of the contract: an action
executor (V, E), a batch executor (B), tool definitions (H). Each is a subpackage of
`conformance` whose ``subject`` module defines ``SUBJECT``, an object with every part below;
`conformance.subjects` is the registry, one line per subject. The engine, the command line, the
report, the pytest plugin and the docs generator loop over that registry and name no subject:
adding one is one subpackage and one registry line (`CONTRIBUTING.md` lists the steps).

The parts, in the order a run uses them:

- its clause rows (`rows`, `clauses`), the docs' headings for its sections and who checks its
  clauses (`headings`, `entry_points`, `checked_by`), its pytest base classes
  (`contract_classes`);
- how it recognises a target (`claims`: how specifically it takes ``(target, registry)``,
  0 when not at all; the engine picks the highest) and checks it (`mode`: ``white-box`` or
  ``black-box``, TypeError naming what is wrong; `set_up_problem`: the one-line set-up error
  for a factory it recognises but cannot call as its factory signature says);
- how it builds a trial (`trial`) and searches one clause (`search`);
- how it writes a counterexample (the `ClauseOutcome`'s, built by `search`) and the reproduce
  line (`reproduce`);
- what it adds to the report (`words`); what the CLI loads before the target (`preload`).

A subject may also be checked on another subject's clauses through a view of its target
(`through`, `adapt`): a batch executor answers V and E through one-call batches (B4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from conformance._core import hypo
from conformance._core.limits import EXECUTE_DEADLINE
from conformance._core.wording import ReportWords

if TYPE_CHECKING:
    import hypothesis

    from conformance._core.catalog import Clause
    from conformance._core.deadline import DeadlineRunner
    from conformance._core.outcome import ClauseOutcome
    from polyloop import ToolRegistry

__all__ = [
    "PARTS",
    "RunSpec",
    "Subject",
    "SubjectDefaults",
    "Unwatched",
    "Watched",
    "certify_line",
    "clause_ids",
    "missing_parts",
]


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One run's checked settings, as every subject's trial and search receive them."""

    target: Any
    """What the subject checks (for a subject checked `through` another: already adapted)."""
    registry: ToolRegistry | None
    """The registry a black-box target serves; None for a factory (white-box)."""
    mode: str
    """``white-box`` or ``black-box``."""
    name: str
    """How reproduce lines name the target."""
    level: str
    profile: str
    seed: int
    deadline: float
    settings: hypothesis.settings
    runner: DeadlineRunner


@runtime_checkable
class Watched(Protocol):
    """What the engine reads of the trial of a run's root subject between clauses: whether a
    call never gave its event loop back (`stuck`, counted) and whether the target still
    answers a plain call; it records the clause where either began."""

    stuck: int
    stuck_since: str | None
    silent_since: str | None

    def answers(self) -> bool: ...


@dataclass(kw_only=True)
class Unwatched:
    """`Watched` for a trial whose searches report a stuck or silent target themselves: never
    stuck, always answering."""

    stuck: int = 0
    stuck_since: str | None = None
    silent_since: str | None = None

    def answers(self) -> bool:
        return True


@runtime_checkable
class Subject(Protocol):
    """One kind of target and its part of the contract (see the module's docstring)."""

    name: str
    """The subject's name (its package's), as the report's ``subject`` holds it."""
    rows: tuple[Clause, ...]
    """Its catalog rows, in contract order."""
    clauses: tuple[str, ...]
    """The IDs of the clauses it checks itself, in contract order."""
    headings: Mapping[str, str]
    """The docs heading of each catalog section its rows belong to."""
    entry_points: Mapping[str, str]
    """The entry points (name -> what it is) that check its clauses, for the docs."""
    checked_by: tuple[str, ...]
    """Which of the docs' entry points check its clauses."""
    contract_classes: tuple[str, ...]
    """Its pytest base classes' names in `conformance.contract` (for the pytest plugin)."""
    certified: bool
    """Whether ``certify`` takes its targets (a subject with its own command does not)."""
    through: str | None
    """The subject whose clauses it is also checked on, through `adapt`; None for none."""
    wrong_target: str
    """Why a selection that names one of its clauses for another subject's target is refused
    (after ``names B4, ``)."""
    words: ReportWords
    """What it adds to the report."""
    preload: tuple[str, ...]
    """Modules its checks are built from, imported by the command line's child process
    before the target is (what a target patches at import cannot reach them)."""

    def claims(self, target: Any, registry: ToolRegistry | None) -> int:
        """How specifically it takes this target: 0 not at all; the highest claim wins."""
        ...

    def is_instance(self, found: object) -> bool:
        """Whether `found` is an instance of its kind, to be certified black-box."""
        ...

    def mode(self, target: Any, registry: ToolRegistry | None) -> str:
        """``white-box`` or ``black-box``; TypeError naming what the target should be."""
        ...

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        """Why a target it claims cannot be checked (one line), or None."""
        ...

    def adapt(self, target: Any, mode: str) -> Any:
        """The target as the `through` subject is to check it (unchanged when none)."""
        ...

    def trial(self, spec: RunSpec) -> Any:
        """Build what its searches run the target through, once per run."""
        ...

    def watch(self, trial: Any) -> Watched:
        """The part of `trial` the engine watches between clauses (`Watched`)."""
        ...

    def search(self, spec: RunSpec, trial: Any, clause_id: str) -> ClauseOutcome:
        """Search one of its clauses; the outcome carries the counterexample it wrote."""
        ...

    def reproduce(self, spec: RunSpec, clause_id: str) -> str:
        """The shell line that reruns this clause alone with the same seed."""
        ...


_METHODS = (
    "claims",
    "is_instance",
    "mode",
    "set_up_problem",
    "adapt",
    "trial",
    "watch",
    "search",
    "reproduce",
)
PARTS: tuple[str, ...] = (
    "name",
    "rows",
    "clauses",
    "headings",
    "entry_points",
    "checked_by",
    "contract_classes",
    "certified",
    "through",
    "wrong_target",
    "words",
    "preload",
    *_METHODS,
)
"""Every part of the protocol, by name (`missing_parts` checks a subject has them all; the
last nine, `_METHODS`, are methods)."""


def missing_parts(subject: object) -> list[str]:
    """The parts of the protocol `subject` lacks (a method must be callable)."""
    missing = []
    for part in PARTS:
        value = getattr(subject, part, _ABSENT)
        if value is _ABSENT or (part in _METHODS and not callable(value)):
            missing.append(part)
    return missing


_ABSENT = object()


def certify_line(spec: RunSpec, clause_id: str) -> str:
    """The ``certify`` command that reruns one clause with the same seed and settings."""
    line = (
        f"polyloop-conformance certify {spec.name} --level {spec.level} --profile "
        f"{spec.profile} --seed {spec.seed} --only {clause_id}"
    )
    if spec.deadline != EXECUTE_DEADLINE:
        line += f" --deadline {spec.deadline:g}"
    if spec.settings.max_examples != hypo.profile(spec.profile).max_examples:
        line += f" --examples {spec.settings.max_examples}"
    return line


class SubjectDefaults:
    """The parts most subjects share, as a base class: a subject overrides what differs.

    It is certified by ``certify`` (`certified`), checked on no other subject's clauses
    (`through`), preloads nothing, adds nothing of its own to the report (`words`), has no
    instances to certify black-box, no set-up problem, no adaptation, nothing for the engine
    to watch between clauses, and reruns a clause with `certify_line`."""

    certified: bool = True
    through: str | None = None
    preload: tuple[str, ...] = ()
    words: ReportWords = ReportWords()

    def is_instance(self, found: object) -> bool:
        return False

    def set_up_problem(self, target: Any, registry: ToolRegistry | None) -> str | None:
        return None

    def adapt(self, target: Any, mode: str) -> Any:
        return target

    def watch(self, trial: Any) -> Watched:
        return Unwatched()

    def reproduce(self, spec: RunSpec, clause_id: str) -> str:
        return certify_line(spec, clause_id)


def clause_ids(subjects: Iterable[Subject]) -> tuple[str, ...]:
    """Every clause the subjects check themselves, in the subjects' order."""
    return tuple(clause for subject in subjects for clause in subject.clauses)
