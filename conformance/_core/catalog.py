"""The contract's clause rows shared by every subject: the `Clause` record, the levels and
section names, and the rows of the sections no kit subject certifies (tool specs, the registry,
run requests, API evolution: polyloop's library tests and `metatests` check those).

Each subject keeps its own rows beside its properties: `conformance.executor.rows` (V, E),
`conformance.batch.rows` (B) and `conformance.tools.rows` (H). `conformance.catalog` puts all
of them together in contract order: that table is the single source for clause IDs, levels and
titles (the report, the pytest test names, the generated `docs/contract.md`, the CLI's progress
lines). The authoritative wording stays in CONTRACT.md; the summaries here are the kit's
one-paragraph paraphrase of each clause.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "CONTRACT_VERSION",
    "LEVELS",
    "LIBRARY_ROWS",
    "SECTIONS",
    "Clause",
    "clause",
    "index",
    "lookup",
    "rows_from_text",
]

CONTRACT_VERSION = "1.0"
"""Version of CONTRACT.md this catalog describes; reports carry it."""

LEVELS = ("core", "strict", "hardened")
"""Certification levels: ``core`` checks design 0008's clauses; ``strict`` adds the [H]
hardening. Both judge realistic input only (calls as JSON decoding makes them, handlers that
return honest values and raise honest exceptions). ``hardened`` is opt-in: strict's clauses
plus objects that lie about themselves (a key whose ``__eq__`` raises, a metaclass hiding
``__name__``, a ``__class__`` claiming ``str``, a ``__str__`` raising a BaseException, non-JSON
leaves). It measures polyloop's own paranoia; no third-party executor is expected to pass it."""

SECTIONS = ("spec", "registry", "validation", "dispatch", "session", "tools", "api", "batch")
"""Section names in contract order (section 1–2 of the contract, types and ports, have no IDs)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Clause:
    """One contract clause: its stable ID, the level that checks it, and what it says."""

    id: str
    level: str
    """``"core"`` (design 0008) or ``"strict"`` (this project's [H] hardening)."""
    title: str
    summary: str
    section: str


def clause(section: str, clause_id: str, level: str, title: str, summary: str) -> Clause:
    """One row: the summary's whitespace is folded to single spaces."""
    return Clause(
        id=clause_id, level=level, title=title, summary=" ".join(summary.split()), section=section
    )


def rows_from_text(section: str, text: str) -> tuple[Clause, ...]:
    """Rows written as text: per clause "ID level: title", then the indented summary, with a
    blank line between clauses (a compact form for a long section)."""
    rows = []
    for row in text.strip().split("\n\n"):
        head, _, summary = row.partition("\n")
        clause_id, _, rest = head.partition(" ")
        level, _, title = rest.partition(": ")
        rows.append(clause(section, clause_id, level, title, summary))
    return tuple(rows)


def index(rows: Iterable[Clause]) -> dict[str, Clause]:
    """Clause ID -> row."""
    return {row.id: row for row in rows}


def lookup(rows: Mapping[str, Clause], clause_id: str) -> Clause:
    """The row with this ID; an unknown ID raises ValueError listing the known ones."""
    try:
        return rows[clause_id]
    except (KeyError, TypeError):
        known = ", ".join(rows)
        raise ValueError(f"unknown contract clause {clause_id!r}; known clauses: {known}") from None


LIBRARY_ROWS: tuple[Clause, ...] = (
    # 3. Tool specs
    clause(
        "spec",
        "S1",
        "core",
        "ToolSpec is a frozen, slotted, keyword-only dataclass",
        """ToolSpec takes keyword arguments only (positional construction raises TypeError) and
       has the fields name, description, parameters, replay_policy (default NEVER),
       completes_run (default False), handler (default None) and concurrency_safe (default
       False, appended for batch dispatch), in that order; new fields are only ever appended,
       and polyloop's own API guard sees such an append as compatible.""",
    ),
    clause(
        "spec",
        "S2",
        "core",
        "parameters is a plain JSON Schema dict, copied and deep-frozen",
        """parameters is a plain JSON Schema mapping, never a third-party model object. It is
       copied and deep-frozen at construction, so changes to the caller's dict never reach the
       spec and the stored value cannot be mutated at any depth.""",
    ),
    clause(
        "spec",
        "S3",
        "core",
        "Bad spec input raises at construction, naming the problem",
        """A name that is not a str (TypeError) or is blank (ValueError), a description that is
       not a str, parameters that are not a mapping, or a handler that is not callable raise
       at construction with a message naming the problem.""",
    ),
    clause(
        "spec",
        "S4",
        "strict",
        "parameters must be JSON data; errors name the JSON path",
        """parameters may hold only JSON data: str-keyed mappings, lists/tuples, str, int,
       finite float, bool and None. Anything else, a reference cycle, or nesting deeper than 64
       levels raises TypeError/ValueError naming the JSON path, never RecursionError.""",
    ),
    clause(
        "spec",
        "S5",
        "strict",
        "handler must be an async callable",
        """handler must be an async def function, an object whose __call__ is async def, or a
       functools.partial of either; a plain function raises TypeError at construction naming
       the tool and suggesting async def.""",
    ),
    clause(
        "spec",
        "S6",
        "core",
        "concurrency_safe is True, False or a plain callable; fail-closed",
        """concurrency_safe is True, False, or a plain (not async) callable taking the call's
       read-only arguments and answering whether this call may overlap other concurrency-safe
       calls; anything else raises TypeError at construction naming the tool. The default
       False makes a tool exclusive.""",
    ),
    # 4. The registry
    clause(
        "registry",
        "R1",
        "core",
        "ToolRegistry keeps registration order",
        """ToolRegistry(specs=()) keeps registration order, and names() and schema_for_model()
       follow it.""",
    ),
    clause(
        "registry",
        "R2",
        "core",
        "ToolRegistry rejects non-specs and duplicate names",
        """A non-ToolSpec item raises TypeError and a duplicate tool name raises ValueError
       naming it.""",
    ),
    clause(
        "registry",
        "R3",
        "core",
        "Registries compare by content and order; unhashable",
        """Two registries are equal when their specs are equal and in the same order, not by
       identity; registries are unhashable.""",
    ),
    clause(
        "registry",
        "R4",
        "core",
        "restrict_to returns a new registry in registration order",
        """restrict_to(names) returns a new registry in registration order whatever the order or
       type of names, leaves the original unchanged, carries every field (handlers included),
       and raises ValueError listing unknown and available names for any unknown name.""",
    ),
    clause(
        "registry",
        "R5",
        "core",
        "schema_for_model shows only name, description, parameters",
        """schema_for_model() returns, per tool in order, exactly name, description and
       parameters as fresh plain dicts and lists: mutating the result changes nothing and
       json.dumps always works.""",
    ),
    clause(
        "registry",
        "R6",
        "core",
        "Model-visible schema is deterministic across processes",
        """The same construction code yields byte-identical json.dumps(schema_for_model()) and
       names() under any PYTHONHASHSEED, including after restrict_to(a_set).""",
    ),
    clause(
        "registry",
        "R7",
        "core",
        "spec_for returns the spec or None",
        """spec_for(name) returns the spec, or None for an unknown name.""",
    ),
    clause(
        "registry",
        "R8",
        "core",
        "executor() names every spec that lacks a handler",
        """executor() raises ValueError naming all specs without a handler, otherwise returns a
       RegistryExecutor whose registry equals this registry.""",
    ),
    clause(
        "registry",
        "R9",
        "core",
        "batch_executor() checks handlers and max_concurrency",
        """batch_executor(*, max_concurrency=10) checks handlers as executor() does and
       max_concurrency (an int >= 1, not a bool: TypeError/ValueError naming it), and returns a
       RegistryBatchExecutor with .registry, .max_concurrency and parameters() ==
       {"tools": "a,b,c", "max_concurrency": "10"}.""",
    ),
    # 7. Run requests
    clause(
        "session",
        "N1",
        "core",
        "History shows the observation only for EXECUTED",
        """observation_for_history(outcome, synthetic) returns the executor's observation for
       EXECUTED and the configured synthetic text otherwise.""",
    ),
    clause(
        "session",
        "N2",
        "core",
        "RunRequest checks a RegistryExecutor's registry",
        """RunRequest raises ValueError if its executor is a RegistryExecutor whose registry does
       not equal tools (by content); any other executor is accepted.""",
    ),
    # 9. Public API evolution
    clause(
        "api",
        "M1",
        "core",
        "Public dataclasses are keyword-only",
        """Every public dataclass of the scanned package takes no positional constructor
       parameter besides self, except classes named in an allowlist.""",
    ),
    clause(
        "api",
        "M2",
        "core",
        "The keyword-only allowlist only shrinks",
        """An allowlist entry that names a missing class or a class that now complies fails the
       check.""",
    ),
    clause(
        "api",
        "M3",
        "core",
        "Dataclass fields are only appended, with defaults",
        """Against the committed baseline, a field may only be appended after the recorded ones
       and only with a default, unless the package's major version rose.""",
    ),
    clause(
        "api",
        "M4",
        "core",
        "What counts as public, and import failures fail the scan",
        """Public means a non-underscore class defined in a module with no underscore-prefixed
       part, or listed in a public module's __all__; modules that fail to import fail the check
       by name, and an empty scan fails.""",
    ),
    clause(
        "api",
        "M5",
        "core",
        "Keyword-only fields stay out of __match_args__",
        """Keyword-only fields are absent from __match_args__, and the baseline records
       __match_args__ so a change there is visible.""",
    ),
)
