"""Generating one pytest test per clause on a contract base class, for both halves."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from conformance._core.catalog import Clause

__all__ = ["add_clause_tests"]


def add_clause_tests(
    cls: type,
    clauses: Iterable[Clause],
    make: Callable[[str], Callable[..., None]],
    name: Callable[[Clause], str],
    doc: Callable[[Clause], str],
) -> None:
    """Set ``make(id)`` on `cls` for every clause row, named and documented from the row,
    so a clause added to the catalog gets its test without an edit here. Each test carries the
    ``conformance`` marker (with its clause ID), so ``-m "not conformance"`` deselects them."""
    import pytest

    for clause in clauses:
        clause_id = clause.id
        test: Any = make(clause_id)
        test.__name__ = test.__qualname__ = name(clause)
        test.__doc__ = doc(clause)
        setattr(cls, test.__name__, pytest.mark.conformance(clause=clause_id)(test))
