"""What a subject adds to the certification report, by the subject's name.

The report (`conformance._core.report`) and the CI outputs know subjects only through this
table: `conformance.subjects`, the registry, fills it with each registered subject's
`ReportWords` when the kit loads. A subject that adds nothing leaves the report in the shape it
had before subjects existed (no ``subject`` key in the JSON).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SUBJECT", "ReportWords", "register", "words"]

DEFAULT_SUBJECT = "executor"
"""The subject a `Report` names when it is built without one (the first registered subject;
`tests/kit/test_layout.py` keeps the two equal). Kept here, not in the report, so that the
report names no subject."""


@dataclass(frozen=True, kw_only=True)
class ReportWords:
    """A subject's additions to the report; the defaults add nothing."""

    kind: str = ""
    """How the text report's target line names the kind of target (``a batch executor``)."""
    own_fields: bool = False
    """The JSON report names the subject (``subject``) and the clauses checked through another
    subject's view of the target (``through_one_call_batches``)."""
    through_label: str = ""
    """The text report's label for the line naming the clauses checked through that view."""
    through_text: str = ""
    """What that line says after the first and last such clause."""
    through_suffix: str = ""
    """Appended (in parentheses) to a CI case's name for such a clause."""
    through_detail: str = ""
    """Opens a CI case's detail for such a clause that failed."""


_WORDS: dict[str, ReportWords] = {}
_NONE = ReportWords()


def register(name: str, found: ReportWords) -> None:
    """Record `found` as subject `name`'s additions (called by `conformance.subjects`)."""
    _WORDS[name] = found


def words(name: str) -> ReportWords:
    """Subject `name`'s additions to the report; nothing for a subject that registered none."""
    return _WORDS.get(name, _NONE)
