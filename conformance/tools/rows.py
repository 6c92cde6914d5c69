"""The tools subject's catalog rows: contract section 8 (tool authors' checks, H)."""

from __future__ import annotations

from conformance._core.catalog import Clause, clause

__all__ = ["ROWS"]

ROWS: tuple[Clause, ...] = (
    # 8. Tool authors' checks
    clause(
        "tools",
        "H1",
        "core",
        "The handler is async",
        """A tool's handler is an async callable (S5).""",
    ),
    clause(
        "tools",
        "H2",
        "core",
        "parameters is a valid 2020-12 schema of type object",
        """parameters passes the Draft 2020-12 metaschema and its top level is
       "type": "object".""",
    ),
    clause(
        "tools",
        "H3",
        "core",
        "The schema is satisfiable",
        """Some call can pass: the parameters schema is satisfiable.""",
    ),
    clause(
        "tools",
        "H4",
        "core",
        "Generated calls pass validation and the handler behaves",
        """For arguments generated from the tool's own schema, the subset validator accepts them
       and the handler returns a str or raises an Exception within the deadline.""",
    ),
    clause(
        "tools",
        "H5",
        "core",
        "The model-visible schema survives a JSON round trip",
        """json.loads(json.dumps(schema_for_model())) equals schema_for_model().""",
    ),
    clause(
        "tools",
        "H6",
        "core",
        "A SAFE tool replays to the same observation (opt-in)",
        """Opt-in: a tool declared SAFE returns the same observation when the same call is
       replayed.""",
    ),
)
