"""One batch clause's verdict for `certify`: white-box searches the clause's property;
black-box judges what outcomes and the journal alone show (B1, B2) and skips the rest."""

from __future__ import annotations

from typing import Any

import hypothesis

from conformance._core import hypo
from conformance._core.outcome import ClauseOutcome
from conformance._core.report import ClauseStatus
from conformance._core.text import describe_exception

__all__ = ["EXAMPLES_FACTOR", "batch_outcome"]

EXAMPLES_FACTOR = 2
"""A B clause runs this many times the profile's (or ``--examples``) count: a schedule costs
milliseconds, and interleavings are a larger space than one call's inputs. Three gave the same
verdict as two on each of the 551 mutants of the batch mutation run (docs/detection.md) and on
every zoo entry, at a third more time; at one and a half, two mutants the kit kills at two
survive (a kit-only run, 8.9 min)."""


def batch_outcome(
    mode: str, trial: Any, settings: hypothesis.settings, seed: int, label: str, clause_id: str
) -> ClauseOutcome:
    """What checking `clause_id` on the batch executor behind `trial` concluded."""
    from conformance.batch.blackbox import PLAIN_CHECKS, plain_cases, plain_traps
    from conformance.batch.properties import PROPERTIES, BatchProperty
    from conformance.batch.search import search_batch_clause

    prop = PROPERTIES[clause_id]
    if mode == "black-box":
        check = PLAIN_CHECKS.get(clause_id)
        if check is None:
            message = (
                "needs the kit's scripted handlers and gates: certify a batch factory "
                "(white-box) to check it"
            )
            return ClauseOutcome(verdict=ClauseStatus.SKIPPED, examples=0, message=message)
        prop = BatchProperty(clause=clause_id, cases=plain_cases, check=check, traps=plain_traps())
    more = hypo.share_of(settings, EXAMPLES_FACTOR)
    try:
        return search_batch_clause(prop, trial, more, seed, label)
    except Exception as exc:  # a defect in the kit itself: report, don't crash
        message = f"the kit failed while checking this clause: {describe_exception(exc)}"
        return ClauseOutcome(verdict=ClauseStatus.ERROR, examples=0, message=message)
