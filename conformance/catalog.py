"""Every clause of the polyloop tool contract, one row each, in contract order.

The rows live with what checks them (`conformance._core.catalog` for the library's own
sections, each registered subject's `rows`: `conformance.subjects`); this module puts them
together. It is the single source for clause IDs, levels and titles: the
certification report, the pytest test names, the generated `docs/contract.md` and the CLI's
progress lines all read it, so a clause is renamed in one place.
"""

from __future__ import annotations

from conformance._core.catalog import (
    CONTRACT_VERSION,
    LEVELS,
    LIBRARY_ROWS,
    Clause,
    index,
    lookup,
)
from conformance._core.catalog import SECTIONS as _LISTED
from conformance.subjects import SUBJECTS

__all__ = ["CLAUSES", "CONTRACT_VERSION", "LEVELS", "SECTIONS", "Clause", "get"]

SECTIONS: tuple[str, ...] = _LISTED + tuple(
    section for subject in SUBJECTS for section in subject.headings if section not in _LISTED
)
"""Section names in contract order: the core's list, then the sections of registered subjects
it does not list yet, in registry order (a new subject's section needs no other entry)."""

CLAUSES: tuple[Clause, ...] = tuple(
    sorted(
        LIBRARY_ROWS + tuple(row for subject in SUBJECTS for row in subject.rows),
        key=lambda row: SECTIONS.index(row.section),  # stable: each section keeps its order
    )
)

_BY_ID = index(CLAUSES)


def get(clause_id: str) -> Clause:
    """The clause with this ID; an unknown ID raises ValueError listing the known ones."""
    return lookup(_BY_ID, clause_id)
