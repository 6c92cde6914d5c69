"""Checks for tool authors: contract clauses H1-H6 for one tool, a registry or a schema file.

```python
from conformance.toolcheck import check_registry, check_tool

report = check_tool(my_spec)          # -> ToolReport; never raises for a finding
check_registry(my_registry)           # raises ToolCheckFailed (an AssertionError) on a finding
report = check_registry(my_registry, raise_on_failure=False)   # the non-raising variant
```

What each clause checks:

- **H1** the handler is async (an `async def` function, an object with `async def __call__`, or a
  `functools.partial` of either).
- **H2** `parameters` is a valid schema under the dialect its `$schema` names (2020-12 when
  absent), by jsonschema's metaschema check, with `"type": "object"` on top. A type name that
  is not JSON Schema's (`dict`, `float`, `tuple`, `any`, `strng`) gets a did-you-mean fix.
- **H3** the schema is satisfiable (hypothesis-jsonschema finds it non-empty; with generation
  on, a generated instance passes jsonschema too).
- **H4** for arguments generated from the schema (hypothesis-jsonschema, every instance filtered
  through jsonschema under the schema's dialect, ints sometimes turned into floats): the
  registry's validator accepts them (V1), and the handler returns a `str` or raises an
  `Exception` within the deadline. Besides pass/fail, the report counts how often the handler
  raised on valid input and keeps the smallest such input.
- **H5** the model-visible schema survives `json.loads(json.dumps(...))` unchanged.
- **H6** (opt in with `replay=True`) a `SAFE` tool gives the same observation when the same call
  is replayed.

Accepted input: a `ToolSpec`; a `ToolDraft` (the same fields, unchecked, so a tool that
`ToolSpec` itself would refuse, e.g. with a sync handler or a set in its schema, can still be
diagnosed); a mapping in MCP (`inputSchema`), OpenAI/BFCL (`parameters`), OpenAI
`{"type": "function", "function": {...}}` or Anthropic (`input_schema`) form; or any object
with `name` and `parameters` attributes. Tools without a handler get the schema checks and the
V1 half of H4.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import inspect
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky, NoSuchExample, Unsatisfiable
from jsonschema.validators import Draft202012Validator

from conformance import _toolcheck_schema as _schema
from conformance._hjs_compat import from_schema
from conformance._toolcheck_report import (
    CLAUSES,
    Finding,
    HandlerStats,
    ToolCheckFailed,
    ToolCheckReport,
    ToolReport,
    json_text,
)
from conformance._toolcheck_run import CallResult, call_handler, describe_exception
from polyloop import ReplayPolicy, ToolCall, ToolRegistry, ToolSpec
from polyloop.tools import ToolEnvironmentError, ToolValidationError

__all__ = [
    "CLAUSES",
    "Finding",
    "HandlerStats",
    "ToolCheckFailed",
    "ToolCheckReport",
    "ToolContract",
    "ToolDraft",
    "ToolReport",
    "add_check_tools_command",
    "check_registry",
    "check_tool",
    "load_tool_file",
    "tool_property",
]

DEFAULT_EXAMPLES = 25
DEFAULT_DEADLINE = 2.0
MAX_HANGS = 8
"""Hanging calls tolerated in one H4/H6 run before it stops shrinking: each costs a full
deadline (and a thread, when the handler blocks its event loop)."""


# --- input ---------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ToolDraft:
    """A tool as its author wrote it, before `ToolSpec` checks it.

    The fields mirror `ToolSpec` (same names, order and defaults) without any validation, so a
    draft that passes every check converts with `ToolSpec(**vars(draft))`. Use it to diagnose a
    tool `ToolSpec` would refuse outright (a sync handler, S5; a set inside the schema, S4).
    """

    name: str
    description: str
    parameters: object
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER
    completes_run: bool = False
    handler: object = None

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any]) -> ToolDraft:
        """A draft from an MCP, OpenAI/BFCL or Anthropic tool definition (no handler)."""
        if entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
            entry = entry["function"]
        for key in ("inputSchema", "parameters", "input_schema"):
            if key in entry:
                parameters = entry[key]
                break
        else:
            raise ValueError(
                f"tool {entry.get('name')!r} has no schema: expected one of the keys "
                "'inputSchema' (MCP), 'parameters' (OpenAI/BFCL) or 'input_schema' (Anthropic)"
            )
        if "name" not in entry:
            raise ValueError(f"a tool definition has no 'name' (keys: {sorted(entry)})")
        return cls(
            name=entry["name"], description=entry.get("description", ""), parameters=parameters
        )


@dataclass(frozen=True, kw_only=True)
class _Tool:
    """One tool under check, normalised from whatever the caller passed."""

    label: str
    name: object
    description: object
    parameters: object
    replay_policy: object
    handler: object
    registry: ToolRegistry | None
    registry_error: str | None
    model_entry: object = None
    has_model_entry: bool = False


def _draft_of(item: object) -> ToolDraft | ToolSpec:
    if isinstance(item, (ToolSpec, ToolDraft)):
        return item
    if isinstance(item, Mapping):
        return ToolDraft.from_mapping(item)
    if hasattr(item, "name") and hasattr(item, "parameters"):
        return ToolDraft(
            name=item.name,
            description=getattr(item, "description", ""),
            parameters=item.parameters,
            replay_policy=getattr(item, "replay_policy", ReplayPolicy.NEVER),
            completes_run=getattr(item, "completes_run", False),
            handler=getattr(item, "handler", None),
        )
    raise TypeError(
        f"cannot check a {type(item).__name__}: pass a ToolSpec, a ToolDraft, a ToolRegistry, "
        "a tool definition mapping (MCP/OpenAI/BFCL), or an iterable of these"
    )


def _own_registry(tool: ToolDraft | ToolSpec) -> tuple[ToolRegistry | None, str | None]:
    """A one-tool registry for V1 validation; the handler is left out, as validation needs none."""
    try:
        spec = ToolSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,  # type: ignore[arg-type]
            replay_policy=tool.replay_policy,
            completes_run=tool.completes_run,
        )
        return ToolRegistry([spec]), None
    except Exception as exc:
        return None, f"ToolSpec refuses this tool ({describe_exception(exc)})"


def _field(item: object, name: str, default: object = None) -> object:
    try:
        return getattr(item, name)
    except AttributeError:  # a spec built with object.__new__ may lack slots
        return default


def _normalise(items: Sequence[object], registry: ToolRegistry | None) -> list[_Tool]:
    drafts = [_draft_of(item) for item in items]
    entries: list[object] | None = None
    if registry is not None:
        try:
            entries = list(registry.schema_for_model())
        except Exception:
            entries = None
    # A name that occurs twice (BFCL's corpus has such) gets its index, so labels stay unique.
    labels = [str(_field(draft, "name", "?")) for draft in drafts]
    repeated = {label for label, count in Counter(labels).items() if count > 1}
    tools = []
    for i, draft in enumerate(drafts):
        label = f"{labels[i]} #{i}" if labels[i] in repeated else labels[i]
        own, error = (registry, None) if registry is not None else _own_registry(draft)
        entry_known = entries is not None and i < len(entries)
        tools.append(
            _Tool(
                label=label,
                name=_field(draft, "name"),
                description=_field(draft, "description", ""),
                parameters=_field(draft, "parameters"),
                replay_policy=_field(draft, "replay_policy", ReplayPolicy.NEVER),
                handler=_field(draft, "handler"),
                registry=own,
                registry_error=error,
                model_entry=entries[i] if entries is not None and entry_known else None,
                has_model_entry=entry_known,
            )
        )
    return tools


def _as_items(tools: object) -> tuple[list[object], ToolRegistry | None]:
    if isinstance(tools, ToolRegistry):
        return list(tools.specs), tools
    if isinstance(tools, (ToolSpec, ToolDraft, Mapping)):
        return [tools], None
    if isinstance(tools, (str, bytes)):
        raise TypeError("pass tools, not a string (for a JSON file use load_tool_file)")
    if isinstance(tools, Iterable):
        return list(tools), None
    return [tools], None


def load_tool_file(path: str | os.PathLike[str]) -> list[ToolDraft]:
    """Tool definitions from a JSON file: a list of tools, or `{"tools": [...]}` (MCP
    `tools/list`). Each entry in MCP, OpenAI/BFCL or Anthropic form; none has a handler."""
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if isinstance(data, Mapping) and ("name" in data or "function" in data):
        data = [data]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of tool definitions or {{'tools': [...]}}")
    drafts = []
    for i, entry in enumerate(data):
        if not isinstance(entry, Mapping):
            raise ValueError(f"{path}: entry {i} is a {type(entry).__name__}, not an object")
        try:
            drafts.append(ToolDraft.from_mapping(entry))
        except ValueError as exc:
            raise ValueError(f"{path}: entry {i}: {exc}") from None
    return drafts


# --- properties (H4, H6): one check per generated call, shared by check_tool, ToolContract and
# fuzzing targets -----------------------------------------------------------------------------


class _Violation(AssertionError):
    """Raised inside a property so Hypothesis shrinks towards the smallest failing arguments."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(str(finding))
        self.finding = finding


class _TooManyHangs(BaseException):
    """Stops a run early (not an `Exception`, so Hypothesis neither shrinks nor retries it)."""


def _size_key(arguments: Mapping[str, object]) -> tuple[int, str]:
    text = json_text(arguments)
    return len(text), text


@dataclass
class _Recorder:
    """What happened across one property run (mutable: one per run, never shared)."""

    max_hangs: int | None = None
    tried: int = 0
    calls: int = 0
    raised: int = 0
    exceptions: Counter[str] = field(default_factory=Counter)
    smallest: tuple[tuple[int, str], dict[str, Any], str] | None = None
    violations: list[Finding] = field(default_factory=list)
    hangs: int = 0

    def attempt(self) -> None:
        if not self.violations:
            self.tried += 1

    def call(self, arguments: dict[str, Any], result: CallResult) -> None:
        if result.kind == "hang":
            self.hangs += 1
        if self.violations:
            return  # past the first failure Hypothesis is shrinking: keep the stats of the search
        self.calls += 1
        if result.kind == "raised" and result.exception is not None:
            self.raised += 1
            self.exceptions[type(result.exception).__name__] += 1
            key = _size_key(arguments)
            if self.smallest is None or key < self.smallest[0]:
                self.smallest = (key, arguments, describe_exception(result.exception))

    def violation(self, finding: Finding) -> None:
        self.violations.append(finding)
        if self.max_hangs is not None and self.hangs >= self.max_hangs:
            raise _TooManyHangs

    def stats(self) -> HandlerStats:
        return HandlerStats(
            calls=self.calls,
            raised=self.raised,
            exceptions=dict(self.exceptions),
            smallest_raising=None if self.smallest is None else self.smallest[1],
            smallest_observation=None if self.smallest is None else self.smallest[2],
        )

    def smallest_violation(self) -> Finding | None:
        with_examples = [v for v in self.violations if v.example is not None]
        if not with_examples:
            return self.violations[0] if self.violations else None
        return min(with_examples, key=lambda v: _size_key(v.example or {}))


def _ints_to_floats(value: object) -> object:
    """3 -> 3.0 everywhere: hypothesis-jsonschema never generates an integral float, and JSON
    (hence a model) may well send one where the schema says `integer`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value) if abs(value) < 2**53 else value
    if isinstance(value, dict):
        return {key: _ints_to_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_ints_to_floats(item) for item in value]
    return value


def _arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments for `schema`: hypothesis-jsonschema's instances, some with ints as floats,
    kept only when jsonschema (under the schema's own dialect) accepts them."""
    cls, _ = _schema.dialect_of(schema)
    validator = (cls or Draft202012Validator)(schema)
    pairs = st.tuples(from_schema(schema), st.booleans())
    mutated = pairs.map(lambda pair: _ints_to_floats(pair[0]) if pair[1] else pair[0])
    valid = mutated.filter(lambda value: isinstance(value, dict) and validator.is_valid(value))
    return valid  # type: ignore[return-value]  # the filter keeps only dicts


class _Property:
    """H4 or H6 for one tool: `check(arguments)` raises `_Violation` on a broken call."""

    def __init__(
        self, tool: _Tool, clause: str, deadline: float, recorder: _Recorder | None = None
    ) -> None:
        self.tool = tool
        self.clause = clause
        self.deadline = deadline
        self.recorder = recorder
        self.calls_handler = _calls_handler(tool)

    def _finding(self, code: str, message: str, fix: str, arguments: dict[str, Any]) -> Finding:
        path = "parameters" if code.startswith("validator-") else "handler"
        return Finding(
            clause=self.clause,
            tool=self.tool.label,
            path=path,
            code=code,
            message=message,
            fix=fix,
            example=arguments,
        )

    def _fail(self, code: str, message: str, fix: str, arguments: dict[str, Any]) -> None:
        finding = self._finding(code, message, fix, arguments)
        if self.recorder is not None:
            self.recorder.violation(finding)
        raise _Violation(finding)

    def _call(self, arguments: dict[str, Any]) -> CallResult:
        # Each call gets its own deep copy: a handler mutating its input must not change the
        # arguments Hypothesis shrinks from (E13 gives a real executor the same guarantee).
        fresh = json.loads(json.dumps(arguments))
        result = call_handler(self.tool.handler, fresh, self.deadline, self.tool.label)
        if self.recorder is not None:
            self.recorder.call(arguments, result)
        return result

    def check(self, arguments: dict[str, Any]) -> None:
        if self.clause == "H6":
            self._check_replay(arguments)
        else:
            self._check_call(arguments)

    def _check_call(self, arguments: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.attempt()
        registry = self.tool.registry
        if registry is not None:
            try:
                registry.validate(ToolCall(name=str(self.tool.name), arguments=arguments))
            except ToolValidationError as exc:
                self._fail(
                    "validator-rejected",
                    f"the registry's validator rejects arguments the schema accepts ({exc})",
                    "this breaks V1: the model could never call the tool this way; report it "
                    "against the validator, or simplify the schema around that keyword",
                    arguments,
                )
            except Exception as exc:
                self._fail(
                    "validator-crashed",
                    f"the registry's validator raised {describe_exception(exc)}",
                    "validate must return None or raise ToolValidationError",
                    arguments,
                )
        if not self.calls_handler:
            return
        result = self._call(arguments)
        problem = _call_problem(result, self.deadline)
        if problem is not None:
            self._fail(*problem, arguments)

    def _check_replay(self, arguments: dict[str, Any]) -> None:
        first = _observation(self._call(arguments))
        second = _observation(self._call(arguments))
        if first is None or second is None:
            return  # broken calls and environment failures are H4's business, not replay's
        if first != second:
            self._fail(
                "replay-differs",
                f"replaying the same call gave {_shorten(second)!r} after {_shorten(first)!r}",
                "declare replay_policy=ReplayPolicy.NEVER, or make the handler deterministic "
                "for equal arguments",
                arguments,
            )


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _observation(result: CallResult) -> str | None:
    """The observation a replay would show the model, or None when there is none to compare."""
    if result.kind == "returned" and isinstance(result.value, str):
        return result.value
    if result.kind == "raised" and not isinstance(result.exception, ToolEnvironmentError):
        assert result.exception is not None
        return describe_exception(result.exception)
    return None


def _call_problem(result: CallResult, deadline: float) -> tuple[str, str, str] | None:
    """(code, message, fix) when a call broke H4, else None."""
    if result.kind == "returned" and not isinstance(result.value, str):
        shown = _shorten(repr(result.value), 60)
        return (
            "non-str-return",
            f"the handler returned {type(result.value).__name__} ({shown}), not str",
            "return the observation text as a str on every path (an executor raises TypeError "
            "on the first such call, E9)",
        )
    if result.kind == "base":
        assert result.exception is not None
        return (
            "base-exception",
            f"the handler raised {describe_exception(result.exception)}, a BaseException "
            "that is not an Exception",
            "raise an Exception subclass (ToolEnvironmentError when the backend is down): "
            "SystemExit, KeyboardInterrupt and CancelledError escape the executor and stop the "
            "whole run (E6)",
        )
    if result.kind == "hang":
        if result.blocking:
            return (
                "deadline",
                f"the handler did not finish within {deadline:g}s and blocked its event loop",
                "move blocking work off the loop (asyncio.to_thread) and bound every wait",
            )
        return (
            "deadline",
            f"the handler did not finish within {deadline:g}s",
            "bound every wait (asyncio.timeout, wait_for) and raise ToolEnvironmentError when "
            "the backend does not answer",
        )
    if result.kind == "not-awaitable":
        return (
            "not-awaitable",
            f"calling the handler returned {type(result.value).__name__}, not an awaitable",
            "declare the handler with `async def`",
        )
    return None


def _digest(tool: _Tool, clause: str) -> bytes:
    text = json_text(
        {"clause": clause, "name": str(tool.name), "parameters": _schema.thaw(tool.parameters)}
    )
    return hashlib.sha256(text.encode()).digest()


def _given_property(prop: _Property) -> Callable[[], None]:
    """`prop` as a Hypothesis test with no parameters (settings come from the active profile)."""

    def property_test(arguments: dict[str, Any]) -> None:
        prop.check(arguments)

    # Hypothesis keys its example database by the test function's source; every tool shares
    # this one, so mix the tool and clause in (the hook Hypothesis uses for parametrized tests).
    property_test._hypothesis_internal_add_digest = _digest(prop.tool, prop.clause)  # type: ignore[attr-defined]
    property_test.__name__ = f"test_{prop.clause}_{_identifier(prop.tool.label)}"
    property_test.__qualname__ = property_test.__name__
    strategy = _arguments(_schema.thaw(prop.tool.parameters))  # type: ignore[arg-type]
    test: Callable[[], None] = given(arguments=strategy)(property_test)
    return test


def _identifier(label: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in label)


def tool_property(
    tool: object,
    clause: str = "H4",
    *,
    registry: ToolRegistry | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> Callable[[], None]:
    """H4 (or H6) for one tool as a standalone Hypothesis test, e.g. a HypoFuzz target.

    ```python
    test_search_H4 = tool_property(search_spec)          # collected by pytest and HypoFuzz
    ```

    It uses whatever Hypothesis settings are active (profile, database), exactly the check
    `check_tool` runs, without the statistics or the hang budget.
    """
    if clause not in ("H4", "H6"):
        raise ValueError(f"tool_property checks H4 or H6, not {clause!r}")
    items, own = _as_items(tool)
    if len(items) != 1:
        raise ValueError(f"tool_property takes one tool, got {len(items)}")
    normalised = _normalise(items, registry or own)[0]
    # Generation needs a valid, satisfiable schema: say so now rather than fail at import.
    prerequisites = _check_one(normalised, frozenset({"H2", "H3", "H5"}), _NO_GENERATION, False)
    if not prerequisites.passed or "skipped" in prerequisites.statuses.values():
        raise ValueError(
            f"cannot generate calls for tool {normalised.label!r}: "
            + "; ".join(
                [str(finding) for finding in prerequisites.findings]
                + [f"{c}: {why}" for c, why in prerequisites.reasons.items()]
            )
        )
    return _given_property(_Property(normalised, clause, deadline))


# --- the checks ----------------------------------------------------------------------------------


def _is_async_callable(handler: object) -> bool:
    # The same rule as ToolSpec's (S5); kept here because this check must also judge objects
    # that never went through ToolSpec.
    while isinstance(handler, functools.partial):
        handler = handler.func
    if isinstance(handler, type):
        return False
    if inspect.iscoroutinefunction(handler):
        return True
    return inspect.iscoroutinefunction(getattr(handler, "__call__", None))  # noqa: B004


@dataclass
class _Outcome:
    """Statuses and findings as one tool's check accumulates them."""

    tool: _Tool
    statuses: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def skip(self, clause: str, reason: str) -> None:
        self.statuses[clause] = "skipped"
        self.reasons[clause] = reason

    def judge(self, clause: str, findings: Iterable[Finding]) -> None:
        found = list(findings)
        self.findings.extend(found)
        self.statuses[clause] = "fail" if found else "pass"

    def problems(self, clause: str, problems: Iterable[_schema.Problem], root: str) -> None:
        self.judge(
            clause,
            (
                Finding(
                    clause=clause,
                    tool=self.tool.label,
                    path=_schema.format_path(problem.path, root),
                    code=problem.code,
                    message=problem.message,
                    fix=problem.fix,
                )
                for problem in problems
            ),
        )


def _check_h1(outcome: _Outcome) -> None:
    handler = outcome.tool.handler
    if handler is None:
        outcome.skip("H1", "no handler: schema checks only")
        return
    if not callable(handler):
        code, message = "not-callable", f"the handler is a {type(handler).__name__}, not callable"
    elif not _is_async_callable(handler):
        code, message = "sync-handler", f"the handler {_shorten(repr(handler), 80)} is not async"
    else:
        outcome.judge("H1", ())
        return
    fix = "declare it with `async def` (ToolSpec refuses a sync handler, S5)"
    outcome.judge(
        "H1",
        [
            Finding(
                clause="H1",
                tool=outcome.tool.label,
                path="handler",
                code=code,
                message=message,
                fix=fix,
            )
        ],
    )


def _check_h5(outcome: _Outcome, data_problems: list[_schema.Problem]) -> None:
    tool = outcome.tool
    if data_problems:
        outcome.problems("H5", data_problems, "parameters")
        return
    problems = []
    for key in ("name", "description"):
        value = getattr(tool, key)
        if not isinstance(value, str):
            problems.append(
                _schema.Problem(
                    path=(key,),
                    code="not-json",
                    message=f"the tool's {key} is a {type(value).__name__}, not a str",
                    fix=f"give the tool a str {key}",
                )
            )
    if problems:
        outcome.problems("H5", problems, "tool")
        return
    if tool.has_model_entry:
        entry = tool.model_entry
        root = "schema_for_model()"
    else:
        entry = {
            "name": tool.name,
            "description": tool.description,
            "parameters": _schema.thaw(tool.parameters),
        }
        root = "model schema"
    outcome.problems("H5", _schema.round_trip_problems(entry), root)


def _unsatisfiable(schema: dict[str, Any]) -> bool | str:
    """True when the schema admits no instance; a reason str when that cannot be decided."""
    try:
        return bool(from_schema(schema).is_empty)
    except Exception as exc:
        return f"hypothesis-jsonschema cannot read the schema: {describe_exception(exc)}"


def _judge_h3(outcome: _Outcome, unsatisfiable: bool | str) -> None:
    if isinstance(unsatisfiable, str):
        outcome.skip("H3", unsatisfiable)
        return
    if not unsatisfiable:
        outcome.judge("H3", ())
        return
    outcome.judge(
        "H3",
        [
            Finding(
                clause="H3",
                tool=outcome.tool.label,
                path="parameters",
                code="unsatisfiable",
                message="no arguments can satisfy this schema, so every call is rejected",
                fix="look for contradicting keywords (minimum > maximum, a required key that "
                "additionalProperties: false forbids, an empty enum, disjoint types)",
            )
        ],
    )


@dataclass(frozen=True, kw_only=True)
class _RunSettings:
    examples: int
    deadline: float
    seed: int | None
    database: object
    parent: settings | None
    max_hangs: int | None


_INHERIT: Any = object()


def _hypothesis_settings(run: _RunSettings, examples: int) -> settings:
    extra: dict[str, Any] = {}
    if run.database is not _INHERIT:
        extra["database"] = run.database
    if run.seed is not None:
        extra["derandomize"] = False
    return settings(
        run.parent,
        max_examples=examples,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
        **extra,
    )


def _run_property(
    tool: _Tool, clause: str, run: _RunSettings, examples: int
) -> tuple[_Recorder, Finding | None, str | None]:
    """Run H4/H6 for one tool: (recorder, the smallest finding or None, why nothing was tried)."""
    recorder = _Recorder(max_hangs=run.max_hangs)
    prop = _Property(tool, clause, run.deadline, recorder)
    test = _hypothesis_settings(run, examples)(_given_property(prop))
    if run.seed is not None:
        test = hypothesis_seed(run.seed)(test)
    try:
        test()
    except _Violation as violation:
        return recorder, violation.finding, None
    except (_TooManyHangs, Flaky):
        return recorder, recorder.smallest_violation(), None
    except Unsatisfiable:
        return recorder, None, "no generated arguments were valid under jsonschema"
    if recorder.violations:  # e.g. a failure that did not reproduce when replayed
        return recorder, recorder.smallest_violation(), None
    if clause == "H4" and recorder.smallest is not None:
        _shrink_raising(prop, run, recorder)
    return recorder, None, None


def _shrink_raising(prop: _Property, run: _RunSettings, recorder: _Recorder) -> None:
    """Replace the smallest raising call seen by the smallest Hypothesis can find.

    Raising is allowed (it becomes an observation), so the H4 run never shrinks it; a second,
    short search does. Its calls do not count in the statistics.
    """
    observations: dict[str, str] = {}
    hangs = 0

    def raises(arguments: dict[str, Any]) -> bool:
        nonlocal hangs
        result = call_handler(
            prop.tool.handler, json.loads(json.dumps(arguments)), run.deadline, prop.tool.label
        )
        if result.kind == "hang":
            hangs += 1
            if run.max_hangs is not None and hangs >= run.max_hangs:
                raise _TooManyHangs
        if result.kind == "raised" and result.exception is not None:
            observations[json_text(arguments)] = describe_exception(result.exception)
            return True
        return False

    strategy = _arguments(_schema.thaw(prop.tool.parameters))  # type: ignore[arg-type]
    search = settings(
        _hypothesis_settings(run, max(run.examples, 10)), database=None, derandomize=True
    )
    try:
        smallest = find(strategy, raises, settings=search)
    except (NoSuchExample, Unsatisfiable, _TooManyHangs, Flaky):
        return
    observation = observations.get(json_text(smallest))
    seen = recorder.smallest
    if observation is not None and seen is not None and _size_key(smallest) <= seen[0]:
        recorder.smallest = (_size_key(smallest), smallest, observation)


def _check_one(tool: _Tool, only: frozenset[str], run: _RunSettings, replay: bool) -> ToolReport:
    start = time.monotonic()
    outcome = _Outcome(tool)
    if "H1" in only:
        _check_h1(outcome)
    data_problems = _schema.json_problems(tool.parameters)
    if "H5" in only:
        _check_h5(outcome, data_problems)
    # Each schema check needs the one before it: no metaschema check on non-JSON data, no
    # satisfiability on an invalid schema, no generation from an empty one.
    blocked: str | None = None
    schema: Any = None
    if data_problems:
        blocked = "parameters is not JSON data (see H5)"
    else:
        schema = _schema.thaw(tool.parameters)
        schema_problems = _schema.schema_problems(schema)
        if "H2" in only:
            outcome.problems("H2", schema_problems, "parameters")
        if schema_problems:
            blocked = "the schema is not valid (see H2)"
    if blocked is None and only & {"H3", "H4", "H6"}:
        unsatisfiable = _unsatisfiable(schema)
        if "H3" in only:
            _judge_h3(outcome, unsatisfiable)
        if unsatisfiable is True:
            blocked = "the schema is not satisfiable (see H3)"
        elif isinstance(unsatisfiable, str):
            blocked = unsatisfiable
    examples_tried = 0
    stats: HandlerStats | None = None
    for clause in ("H2", "H3", "H4", "H6"):
        if clause not in only or clause in outcome.statuses:
            continue
        reason = (
            blocked
            if clause in ("H2", "H3")
            else _generation_blocker(tool, clause, run, replay, blocked)
        )
        if reason is not None:
            outcome.skip(clause, reason)
            continue
        examples = run.examples if clause == "H4" else min(run.examples, 10)
        recorder, finding, why_not = _run_property(tool, clause, run, examples)
        if clause == "H4":
            examples_tried = recorder.tried
            stats = recorder.stats() if _calls_handler(tool) else None
        if finding is not None:
            outcome.judge(clause, [finding])
        elif why_not is not None:
            outcome.skip(clause, why_not)
        else:
            outcome.judge(clause, ())
    statuses = {
        clause: outcome.statuses[clause] for clause in CLAUSES if clause in outcome.statuses
    }
    return ToolReport(
        tool=tool.label,
        statuses=statuses,
        reasons=outcome.reasons,
        findings=tuple(outcome.findings),
        examples=examples_tried,
        handler_stats=stats,
        seconds=time.monotonic() - start,
    )


def _calls_handler(tool: _Tool) -> bool:
    return tool.handler is not None and _is_async_callable(tool.handler)


def _generation_blocker(
    tool: _Tool, clause: str, run: _RunSettings, replay: bool, blocked: str | None
) -> str | None:
    if blocked is not None:
        return blocked
    if run.examples <= 0:
        return "generation is off (examples=0)"
    if clause == "H6":
        if not replay:
            return "opt-in: replay=True (ToolContract: `replay = True`; CLI: --replay)"
        if tool.replay_policy is not ReplayPolicy.SAFE:
            return "the tool is not SAFE to replay"
        if not _calls_handler(tool):
            return "no async handler to replay"
        return None
    if tool.registry is None and not _calls_handler(tool):
        return tool.registry_error or "no validator and no async handler to call"
    return None


def _only(only: Iterable[str] | None) -> frozenset[str]:
    if only is None:
        return frozenset(CLAUSES)
    chosen = frozenset(clause.strip().upper() for clause in only)
    unknown = sorted(chosen - set(CLAUSES))
    if unknown:
        raise ValueError(f"unknown clause(s) {unknown}; the tool checks are {', '.join(CLAUSES)}")
    return chosen


def _run_settings(
    examples: int | None, deadline: float, seed: int | None, database: object, profile: str | None
) -> _RunSettings:
    parent: settings | None = None
    if profile is not None:
        from conformance.profiles import hypothesis_settings  # raises ValueError naming profiles

        parent = hypothesis_settings(profile)
    if examples is None:
        examples = parent.max_examples if parent is not None else DEFAULT_EXAMPLES
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 0:
        raise ValueError(f"examples must be an int >= 0, got {examples!r}")
    if not (isinstance(deadline, (int, float)) and math.isfinite(deadline) and deadline > 0):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    if (
        database is not _INHERIT
        and database is not None
        and not isinstance(database, ExampleDatabase)
    ):
        raise TypeError(
            f"database must be a hypothesis ExampleDatabase or None, got {type(database).__name__}"
        )
    return _RunSettings(
        examples=examples,
        deadline=float(deadline),
        seed=seed,
        database=database,
        parent=parent,
        max_hangs=MAX_HANGS,
    )


_NO_GENERATION = _RunSettings(
    examples=0, deadline=DEFAULT_DEADLINE, seed=None, database=_INHERIT, parent=None, max_hangs=0
)


def check_tool(
    tool: object,
    *,
    registry: ToolRegistry | None = None,
    examples: int | None = None,
    deadline: float = DEFAULT_DEADLINE,
    seed: int | None = None,
    replay: bool = False,
    only: Iterable[str] | None = None,
    profile: str | None = None,
    database: ExampleDatabase | None = _INHERIT,
    raise_on_failure: bool = False,
) -> ToolReport:
    """Check one tool against H1-H6 and return its report (raising only when asked to).

    `registry`: validate (V1) with this registry instead of a one-tool registry of its own.
    `examples`: valid argument sets to generate for H4 (0: schema checks only; default: the
    profile's `max_examples`, or 25). `deadline`: seconds one handler call may take.
    `seed`: reproduce a run. `replay`: run the opt-in H6. `only`: a subset of clause IDs.
    `profile`: a kit profile (`quick`, `ci`, `thorough`) to take Hypothesis settings from;
    default: the active Hypothesis profile. `database`: a Hypothesis example database (default:
    the profile's), so failing arguments found once are tried first next time.
    """
    chosen = _only(only)
    run = _run_settings(examples, deadline, seed, database, profile)
    items, own = _as_items(tool)
    if len(items) != 1:
        raise ValueError(f"check_tool takes one tool, got {len(items)}; use check_registry")
    normalised = _normalise(items, registry or own)[0]
    report = _check_one(normalised, chosen, run, replay)
    if raise_on_failure:
        report.raise_for_failures()
    return report


def check_registry(
    tools: object,
    *,
    examples: int | None = None,
    deadline: float = DEFAULT_DEADLINE,
    seed: int | None = None,
    replay: bool = False,
    only: Iterable[str] | None = None,
    profile: str | None = None,
    database: ExampleDatabase | None = _INHERIT,
    raise_on_failure: bool = True,
    target: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> ToolCheckReport:
    """Check every tool of a registry (or an iterable of tools) against H1-H6.

    Raises `ToolCheckFailed` (an `AssertionError`, so a plain `check_registry(reg)` line is a
    complete test) with a readable summary when any tool fails; `raise_on_failure=False`
    returns the report instead. A `ToolRegistry` is checked as a whole: its own `validate` and
    `schema_for_model()` are the ones exercised.
    """
    chosen = _only(only)
    run = _run_settings(examples, deadline, seed, database, profile)
    items, registry = _as_items(tools)
    normalised = _normalise(items, registry)
    start = time.monotonic()
    reports = []
    for i, tool in enumerate(normalised):
        if progress is not None:
            progress(f"[{i + 1}/{len(normalised)}] {tool.label}")
        reports.append(_check_one(tool, chosen, run, replay))
    report = ToolCheckReport(
        target=target or _describe_target(tools, len(normalised)),
        tools=tuple(reports),
        examples=run.examples,
        deadline=run.deadline,
        seed=seed,
        seconds=time.monotonic() - start,
    )
    if raise_on_failure:
        report.raise_for_failures()
    return report


def _describe_target(tools: object, count: int) -> str:
    if isinstance(tools, ToolRegistry):
        return f"ToolRegistry({count} tools)"
    return f"{type(tools).__name__} of {count} tools"


# --- CLI -----------------------------------------------------------------------------------------


class _UsageError(Exception):
    """A problem with the command line or the target: exit 2 with one line."""


def _load_target(target: str) -> tuple[object, str]:
    if target.endswith(".json") or Path(target).is_file():
        try:
            return load_tool_file(target), target
        except (OSError, ValueError) as exc:
            raise _UsageError(f"cannot read {target}: {exc}") from None
    module_name, colon, attr = target.partition(":")
    if not colon or not module_name or not attr:
        raise _UsageError(
            f"expected module:attr (a ToolRegistry, ToolSpec or iterable of specs) or a path to "
            f"a JSON file of tool schemas, got {target!r}"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the current project is importable
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise _UsageError(f"cannot import {module_name}: {describe_exception(exc)}") from None
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise _UsageError(f"{module_name} has no attribute {attr}") from None
    if callable(value) and not isinstance(value, (ToolRegistry, ToolSpec, type)):
        try:
            value = value()  # a zero-argument factory such as make_registry
        except Exception as exc:
            raise _UsageError(f"calling {target}() failed: {describe_exception(exc)}") from None
    return value, target


def _run_check_tools(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"polyloop-conformance check-tools: error: {message}", file=sys.stderr)
        return 2

    try:
        tools, target = _load_target(args.target)
        only = args.only.split(",") if args.only else None
        report = check_registry(
            tools,
            examples=args.examples,
            deadline=args.deadline,
            seed=args.seed,
            profile=args.profile,
            replay=args.replay,
            only=only,
            raise_on_failure=False,
            target=target,
            progress=None if args.quiet else lambda line: print(line, file=sys.stderr),
        )
    except _UsageError as exc:
        return fail(str(exc))
    except (TypeError, ValueError) as exc:
        return fail(describe_exception(exc))
    print(report.to_text(verbose=args.verbose))
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(report.to_json(), indent=1) + "\n")
        except OSError as exc:
            return fail(f"cannot write {args.json}: {exc}")
    return report.exit_status()


def add_check_tools_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `check-tools` on a `parser.add_subparsers()` object (used by conformance.cli)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check-tools",
        help="check tool definitions against H1-H6 (tool authors' checks)",
        description=(
            "Check tools against the contract's tool authors' clauses H1-H6. TARGET is "
            "module:attr naming a ToolRegistry, a ToolSpec, an iterable of specs or a "
            "zero-argument function returning one, or a JSON file of tool schemas in MCP "
            "(inputSchema) or OpenAI/BFCL (parameters) form. Exit 0: every tool passed; "
            "1: a finding; 2: usage or import error."
        ),
    )
    parser.add_argument("target", metavar="TARGET", help="module:attr or a .json file")
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        help=f"generated calls per tool for H4 (default {DEFAULT_EXAMPLES}; 0: schema checks only)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE,
        help=f"seconds one handler call may take (default {DEFAULT_DEADLINE:g})",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="Hypothesis seed, to reproduce a run"
    )
    parser.add_argument(
        "--profile",
        default=None,
        help="kit profile to take Hypothesis settings from: quick, ci or thorough",
    )
    parser.add_argument("--replay", action="store_true", help="also run the opt-in H6 replay check")
    parser.add_argument("--only", metavar="H1,H2", help="check only these clauses")
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH")
    parser.add_argument("--verbose", "-v", action="store_true", help="list passing tools too")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=_run_check_tools)
    return parser


# --- pytest base class ---------------------------------------------------------------------------


class ToolContract:
    """Subclass in a test module to check your tools: one test per H clause per tool.

    ```python
    class TestMyTools(ToolContract):
        replay = True                       # opt into H6 for SAFE tools

        def make_registry(self):
            return build_registry()         # or set `tools = [spec, ...]` instead
    ```

    The tests are parametrized over the tool names (`test_H4_...[search]`), run under
    pytest-xdist like any test, and read the plugin's `--conformance-profile`,
    `--conformance-seed` and `--conformance-db` options (class attributes otherwise).
    """

    tools: Any = None
    """The tools: a ToolRegistry, or an iterable of ToolSpecs/ToolDrafts/definitions."""
    replay: bool = False
    """Run H6 (replay a SAFE tool's calls and compare)."""
    deadline: float = DEFAULT_DEADLINE
    examples: int | None = None
    """Generated calls per tool for H4; None: the profile's `max_examples`."""
    profile: str = "ci"
    seed: int | None = None

    def make_registry(self) -> Any:
        """Return the tools to check; by default, the `tools` attribute."""
        if self.tools is None:
            raise NotImplementedError(
                f"{type(self).__name__} must set `tools` or override make_registry()"
            )
        return self.tools

    def _contract_tools(self) -> list[_Tool]:
        items, registry = _as_items(self.make_registry())
        return _normalise(items, registry)

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "tool_name" in metafunc.fixturenames:
            labels = [tool.label for tool in self._contract_tools()]
            metafunc.parametrize("tool_name", labels, ids=labels)

    def _check_clause(self, clause: str, tool_name: str, request: Any) -> None:
        import pytest

        config = request.config
        profile = config.getoption("conformance_profile", default=None) or self.profile
        seed = config.getoption("conformance_seed", default=None)
        db_path = config.getoption("conformance_db", default=None)
        database: Any = _INHERIT
        if db_path is not None:
            from hypothesis.database import DirectoryBasedExampleDatabase

            database = DirectoryBasedExampleDatabase(db_path)
        run = _run_settings(
            self.examples, self.deadline, self.seed if seed is None else seed, database, profile
        )
        tools = {tool.label: tool for tool in self._contract_tools()}
        report = _check_one(tools[tool_name], frozenset({clause}), run, self.replay)
        status = report.statuses[clause]
        if status == "skipped":
            pytest.skip(f"{clause}: {report.reasons[clause]}")
        if status == "fail":
            pytest.fail(report.summary(), pytrace=False)

    def test_H1_handler_is_async(self, tool_name: str, request: Any) -> None:
        """H1: the handler is an async callable."""
        self._check_clause("H1", tool_name, request)

    def test_H2_parameters_is_a_valid_object_schema(self, tool_name: str, request: Any) -> None:
        """H2: parameters passes its dialect's metaschema and has "type": "object" on top."""
        self._check_clause("H2", tool_name, request)

    def test_H3_schema_is_satisfiable(self, tool_name: str, request: Any) -> None:
        """H3: some arguments can satisfy the schema."""
        self._check_clause("H3", tool_name, request)

    def test_H4_generated_calls_validate_and_handler_behaves(
        self, tool_name: str, request: Any
    ) -> None:
        """H4: generated valid calls pass validation; the handler returns str or raises an
        Exception within the deadline."""
        self._check_clause("H4", tool_name, request)

    def test_H5_model_schema_survives_json_round_trip(self, tool_name: str, request: Any) -> None:
        """H5: the model-visible schema is unchanged by a JSON round trip."""
        self._check_clause("H5", tool_name, request)

    def test_H6_safe_tool_replays_to_same_observation(self, tool_name: str, request: Any) -> None:
        """H6 (opt-in with `replay = True`): a SAFE tool replays to the same observation."""
        self._check_clause("H6", tool_name, request)
