"""The registry of the kit's subjects: one line per subject, in contract order.

Each line names a subpackage of `conformance` whose ``subject`` module defines ``SUBJECT``, an
object with every part of `conformance._core.subject.Subject`. The engine, the command line,
the report, the pytest plugin and the docs generator loop over `SUBJECTS`; none of them names
a subject. The first is the default: what ``certify`` takes a target for when no subject
claims it more specifically, and what a report names when built without a subject.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from conformance._core import wording
from conformance._core.subject import Subject, missing_parts

__all__ = [
    "DEFAULT",
    "REGISTERED",
    "SUBJECTS",
    "by_name",
    "certified",
    "chain",
    "owner",
    "shared_order",
]

REGISTERED: tuple[str, ...] = (
    "executor",  # V1-V8, E1-E15: an ActionExecutor factory, or an instance (black-box)
    "batch",  # B1-B18, and V/E through one-call batches: a BatchExecutor
    "tools",  # H1-H6: tool definitions (`check-tools`, `check_registry`)
    "policy",  # P1-P12: a policy factory, factory(registry, policy) -> ActionExecutor
    "recovery",  # J1-J13: a durable runtime factory(registry, directory), lifetimes killed
)


def _load(name: str) -> Subject:
    module = importlib.import_module(f"conformance.{name}.subject")
    found: Any = getattr(module, "SUBJECT", None)
    missing = missing_parts(found)
    if missing:
        raise TypeError(
            f"conformance.{name}.subject.SUBJECT lacks {', '.join(missing)} of the Subject "
            "protocol (conformance._core.subject)"
        )
    if found.name != name:
        raise TypeError(f"conformance.{name}.subject.SUBJECT is named {found.name!r}")
    subject: Subject = found
    return subject


SUBJECTS: tuple[Subject, ...] = tuple(_load(name) for name in REGISTERED)
"""Every registered subject, in `REGISTERED` order."""

DEFAULT: Subject = SUBJECTS[0]

for _subject in SUBJECTS:
    wording.register(_subject.name, _subject.words)


def by_name(name: str) -> Subject:
    """The registered subject of this name; ValueError naming the registered ones."""
    for subject in SUBJECTS:
        if subject.name == name:
            return subject
    raise ValueError(f"unknown subject {name!r}; the kit's subjects are {', '.join(REGISTERED)}")


def certified() -> tuple[Subject, ...]:
    """The subjects ``certify`` takes targets of."""
    return tuple(subject for subject in SUBJECTS if subject.certified)


def chain(subject: Subject) -> tuple[Subject, ...]:
    """`subject` and the subjects it is checked through, the innermost first: a subject
    checked `through` another answers that one's clauses before its own."""
    found = [subject]
    while found[-1].through is not None:
        inner = by_name(found[-1].through)
        if inner in found:
            raise ValueError(f"subject {subject.name} is checked through itself")
        found.append(inner)
    return tuple(reversed(found))


def owner(clause_id: str) -> Subject | None:
    """The subject that checks this clause itself, or None."""
    return next((s for s in SUBJECTS if clause_id in s.clauses), None)


def shared_order(clauses: Sequence[str]) -> tuple[str, ...]:
    """`clauses` in the order a run with a time budget takes them: one of each subject's in
    turn (round robin, each subject's own in contract order), so that a budget spent early
    leaves every subject partly judged instead of the first taking everything."""
    groups: dict[str, list[str]] = {}
    for clause in clauses:
        found = owner(clause)
        groups.setdefault(found.name if found is not None else "", []).append(clause)
    order: list[str] = []
    for turn in range(max((len(g) for g in groups.values()), default=0)):
        order += [group[turn] for group in groups.values() if turn < len(group)]
    return tuple(order)
