"""The public entry points of the tool checks: `check_tool`, `check_registry`, `tool_property`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from hypothesis.database import ExampleDatabase

from conformance._core.deadline import LoopThread
from conformance._core.limits import HANDLER_DEADLINE
from conformance.tools.clauses import check_one
from conformance.tools.engine import (
    INHERIT,
    NO_GENERATION,
    ToolProperty,
    given_property,
    run_settings,
)
from conformance.tools.inputs import as_items, normalise
from conformance.tools.report import CLAUSE_IDS, ToolCheckReport, ToolReport
from polyloop import ToolRegistry

__all__ = ["check_registry", "check_tool", "select_tool_clauses", "tool_property"]


def select_tool_clauses(only: Iterable[str] | None) -> frozenset[str]:
    """The tool clauses a run checks: all of them, or `only` (ValueError for an unknown ID)."""
    if only is None:
        return frozenset(CLAUSE_IDS)
    chosen = frozenset(clause.strip().upper() for clause in only)
    unknown = sorted(chosen - set(CLAUSE_IDS))
    if unknown:
        raise ValueError(
            f"unknown clause(s) {unknown}; the tool checks are {', '.join(CLAUSE_IDS)}"
        )
    return chosen


def check_tool(
    tool: object,
    *,
    registry: ToolRegistry | None = None,
    examples: int | None = None,
    deadline: float = HANDLER_DEADLINE,
    seed: int | None = None,
    replay: bool = False,
    only: Iterable[str] | None = None,
    profile: str | None = None,
    database: ExampleDatabase | None = INHERIT,
    raise_on_failure: bool = False,
    fail_on_raise: bool = False,
) -> ToolReport:
    """Check one tool against H1-H6 and return its report (raising only when asked to).

    `registry`: validate (V1) with this registry instead of a one-tool registry of its own.
    `examples`: valid argument sets to generate for H4 (0: schema checks only; default: the
    profile's `max_examples`, or 25). `deadline`: seconds one handler call may take.
    `seed`: reproduce a run. `replay`: run the opt-in H6. `only`: a subset of clause IDs.
    `profile`: a kit profile (`quick`, `ci`, `thorough`) to take Hypothesis settings from;
    default: the active Hypothesis profile. `database`: a Hypothesis example database (default:
    the profile's), so failing arguments found once are tried first next time.

    H4 and H6 call the tool's real handler on the generated arguments: check a tool with side
    effects through a spec with a stub handler (`dataclasses.replace(spec, handler=stub)`), or
    with `handler=None` for the schema checks and V1 only. `fail_on_raise`: a handler raising
    an `Exception` on valid generated arguments fails H4 (default: an allowed observation, E4,
    counted in `handler_stats`).
    """
    chosen = select_tool_clauses(only)
    run = run_settings(examples, deadline, seed, database, profile, fail_on_raise=fail_on_raise)
    items, own = as_items(tool)
    if len(items) != 1:
        raise ValueError(f"check_tool takes one tool, got {len(items)}; use check_registry")
    report = check_one(normalise(items, registry or own)[0], chosen, run, replay)
    if raise_on_failure:
        report.raise_for_failures()
    return report


def check_registry(
    tools: object,
    *,
    examples: int | None = None,
    deadline: float = HANDLER_DEADLINE,
    seed: int | None = None,
    replay: bool = False,
    only: Iterable[str] | None = None,
    profile: str | None = None,
    database: ExampleDatabase | None = INHERIT,
    raise_on_failure: bool = True,
    target: str | None = None,
    progress: Callable[[str], None] | None = None,
    fail_on_raise: bool = False,
) -> ToolCheckReport:
    """Check every tool of a registry (or an iterable of tools) against H1-H6.

    Raises `ToolCheckFailed` (an `AssertionError`, so a plain `check_registry(reg)` line is a
    complete test) with a readable summary when any tool fails; `raise_on_failure=False`
    returns the report instead. A `ToolRegistry` is checked as a whole: its own `validate` and
    `schema_for_model()` are the ones exercised.

    H4 and H6 call the real handlers (see `check_tool` for tools with side effects; or check
    `registry.restrict_to([...])`, the tools safe to call). `fail_on_raise` as in `check_tool`.
    """
    chosen = select_tool_clauses(only)
    run = run_settings(examples, deadline, seed, database, profile, fail_on_raise=fail_on_raise)
    items, registry = as_items(tools)
    normalised = normalise(items, registry)
    start = time.monotonic()
    reports = []
    for i, tool in enumerate(normalised):
        if progress is not None:
            progress(f"[{i + 1}/{len(normalised)}] {tool.label}")
        reports.append(check_one(tool, chosen, run, replay))
    report = ToolCheckReport(
        target=target or _tools_name(tools, len(normalised)),
        tools=tuple(reports),
        examples=run.examples,
        deadline=run.deadline,
        seed=seed,
        seconds=time.monotonic() - start,
    )
    if raise_on_failure:
        report.raise_for_failures()
    return report


def _tools_name(tools: object, count: int) -> str:
    if isinstance(tools, ToolRegistry):
        return f"ToolRegistry({count} tools)"
    return f"{type(tools).__name__} of {count} tools"


def tool_property(
    tool: object,
    clause: str = "H4",
    *,
    registry: ToolRegistry | None = None,
    deadline: float = HANDLER_DEADLINE,
    fail_on_raise: bool = False,
) -> Callable[[], None]:
    """H4 (or H6) for one tool as a standalone Hypothesis test, e.g. a HypoFuzz target.

    ```python
    test_search_H4 = tool_property(search_spec)          # collected by pytest and HypoFuzz
    ```

    It uses whatever Hypothesis settings are active (profile, database), exactly the check
    `check_tool` runs, without the statistics or the hang budget. It calls the real handler;
    `fail_on_raise` as in `check_tool`.
    """
    if clause not in ("H4", "H6"):
        raise ValueError(f"tool_property checks H4 or H6, not {clause!r}")
    items, own = as_items(tool)
    if len(items) != 1:
        raise ValueError(f"tool_property takes one tool, got {len(items)}")
    normalised = normalise(items, registry or own)[0]
    # Generation needs a valid, satisfiable schema: say so now rather than fail at import.
    prerequisites = check_one(normalised, frozenset({"H2", "H3", "H5"}), NO_GENERATION, False)
    if not prerequisites.passed or "skipped" in prerequisites.statuses.values():
        raise ValueError(
            f"cannot generate calls for tool {normalised.label!r}: "
            + "; ".join(
                [str(finding) for finding in prerequisites.findings]
                + [f"{c}: {why}" for c, why in prerequisites.reasons.items()]
            )
        )
    # The runner lives as long as the returned test; its daemon thread ends with the process.
    return given_property(
        ToolProperty(normalised, clause, deadline, LoopThread(), fail_on_raise=fail_on_raise)
    )
