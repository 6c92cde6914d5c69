"""The property engine of the tool checks (H4, H6): one check per generated call.

The same `ToolProperty` serves `check_tool`/`check_registry`, `ToolContract` and standalone
fuzzing targets (`tool_property`). Arguments come from the kit's one generator of valid
arguments (`conformance._core.arguments.valid_arguments`, the one `certify` uses), and every handler
call goes through the kit's one deadline runner.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Flaky, HypothesisWarning, NoSuchExample, Unsatisfiable

from conformance._core import hypo
from conformance._core.data import thaw
from conformance._core.deadline import DeadlineRunner, LoopThread
from conformance._core.limits import HANDLER_DEADLINE
from conformance._core.text import describe_exception, json_text, shorten
from conformance.tools.calls import (
    CallKind,
    CallResult,
    call_handler,
    call_problem,
    observation,
)
from conformance.tools.inputs import Tool
from conformance.tools.report import Finding, HandlerStats
from polyloop import ToolCall
from polyloop.tools import ToolValidationError

__all__ = [
    "DEFAULT_EXAMPLES",
    "INHERIT",
    "MAX_HANGS",
    "NO_GENERATION",
    "PropertyRun",
    "RunSettings",
    "ToolProperty",
    "given_property",
    "run_property",
    "run_settings",
]

DEFAULT_EXAMPLES = 25
MAX_HANGS = 8
"""Hanging calls tolerated in one H4/H6 run before it stops shrinking: each costs a full
deadline (and a thread, when the handler blocks its event loop)."""

INHERIT: Any = object()
"""`database` not given: use the profile's (or the active Hypothesis profile's) database."""


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How one check run generates and calls: validated once by `run_settings`."""

    examples: int
    deadline: float
    seed: int | None
    database: object
    parent: settings | None
    max_hangs: int | None
    fail_on_raise: bool = False
    """A handler raising an `Exception` on valid generated arguments fails H4 (by default it is
    an allowed observation, E4, that the report only counts)."""

    def hypothesis(self, examples: int) -> settings:
        extra: dict[str, Any] = {}
        if self.database is not INHERIT:
            extra["database"] = self.database
        elif _default_database_unusable(self.parent):
            extra["database"] = None
        if self.seed is not None:
            extra["derandomize"] = False
        return hypo.run_settings(
            self.parent,
            max_examples=examples,
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            **extra,
        )


def _default_database_unusable(parent: settings | None) -> bool:
    """Whether the inherited database is Hypothesis's unconfigured default in a folder it cannot
    write (a read-only checkout). Hypothesis then warns on every run and falls back to memory;
    under `-W error` that warning broke the run from inside Hypothesis (`assert None is not
    None`). The tool checks keep nothing then, silently, as with `database=None`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HypothesisWarning)
        (parent if parent is not None else settings()).database  # noqa: B018 (the lazy read warns)
    return any("database" in str(warning.message) for warning in caught)


def run_settings(
    examples: int | None,
    deadline: float,
    seed: int | None,
    database: object,
    profile: str | None,
    *,
    fail_on_raise: bool = False,
) -> RunSettings:
    """Check the caller's settings (ValueError/TypeError naming the bad one) and combine them."""
    parent = None if profile is None else hypo.profile_settings(profile)
    if examples is None:
        examples = parent.max_examples if parent is not None else DEFAULT_EXAMPLES
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 0:
        raise ValueError(f"examples must be an int >= 0, got {examples!r}")
    if not (isinstance(deadline, (int, float)) and math.isfinite(deadline) and deadline > 0):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    if (
        database is not INHERIT
        and database is not None
        and not isinstance(database, ExampleDatabase)
    ):
        raise TypeError(
            f"database must be a hypothesis ExampleDatabase or None, got {type(database).__name__}"
        )
    return RunSettings(
        examples=examples,
        deadline=float(deadline),
        seed=seed,
        database=database,
        parent=parent,
        max_hangs=MAX_HANGS,
        fail_on_raise=fail_on_raise,
    )


NO_GENERATION = RunSettings(
    examples=0, deadline=HANDLER_DEADLINE, seed=None, database=INHERIT, parent=None, max_hangs=0
)


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

    def hang(self) -> None:
        self.hangs += 1

    def call(self, arguments: dict[str, Any], result: CallResult) -> None:
        if result.kind is CallKind.HANG:
            self.hang()
        if self.violations:
            return  # past the first failure Hypothesis is shrinking: keep the stats of the search
        self.calls += 1
        if result.kind is CallKind.RAISED and result.exception is not None:
            self.raised += 1
            self.exceptions[type(result.exception).__name__] += 1
            self.raised_smallest(arguments, result.exception)

    def raised_smallest(self, arguments: dict[str, Any], exception: BaseException) -> None:
        """Keep a raising call as the smallest seen, also while Hypothesis shrinks a
        `fail_on_raise` failure, so the statistics show the same arguments as the finding."""
        key = _size_key(arguments)
        if self.smallest is None or key < self.smallest[0]:
            self.smallest = (key, arguments, describe_exception(exception))

    def violation(self, finding: Finding) -> None:
        self.violations.append(finding)
        self.check_hangs()

    def check_hangs(self) -> None:
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


def arguments_strategy(tool: Tool) -> Any:
    """Valid arguments for the tool's schema, from the kit's one generator."""
    from conformance._core.arguments import valid_arguments

    return valid_arguments(thaw(tool.parameters))


class ToolProperty:
    """H4 or H6 for one tool: `check(arguments)` raises on a broken call."""

    def __init__(
        self,
        tool: Tool,
        clause: str,
        deadline: float,
        runner: DeadlineRunner,
        recorder: _Recorder | None = None,
        *,
        fail_on_raise: bool = False,
    ) -> None:
        self.tool = tool
        self.clause = clause
        self.deadline = deadline
        self.runner = runner
        self.recorder = recorder
        self.fail_on_raise = fail_on_raise

    def _fail(self, code: str, message: str, fix: str, arguments: dict[str, Any]) -> None:
        finding = Finding(
            clause=self.clause,
            tool=self.tool.label,
            path="parameters" if code.startswith("validator-") else "handler",
            code=code,
            message=message,
            fix=fix,
            example=arguments,
        )
        if self.recorder is not None:
            self.recorder.violation(finding)
        raise _Violation(finding)

    def call(self, arguments: dict[str, Any]) -> CallResult:
        # Each call gets its own plain copy: a handler mutating its input must not change the
        # arguments Hypothesis shrinks from (E13 gives a real executor the same guarantee).
        return call_handler(self.runner, self.tool.handler, thaw(arguments), self.deadline)

    def _recorded_call(self, arguments: dict[str, Any]) -> CallResult:
        result = self.call(arguments)
        if self.recorder is not None:
            self.recorder.call(arguments, result)
        return result

    def check(self, arguments: dict[str, Any]) -> None:
        if self.clause == "H6":
            self._check_replay(arguments)
        else:
            self._check_call(arguments)

    def _check_validation(self, arguments: dict[str, Any]) -> None:
        registry = self.tool.registry
        if registry is None:
            return
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

    def _check_call(self, arguments: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.attempt()
        self._check_validation(arguments)
        if not self.tool.calls_handler:
            return
        result = self._recorded_call(arguments)
        problem = call_problem(result, self.deadline)
        if problem is None and self.fail_on_raise:
            problem = _raised_problem(result)
            if problem is not None and self.recorder is not None and result.exception:
                self.recorder.raised_smallest(arguments, result.exception)
        if problem is not None:
            self._fail(*problem, arguments)

    def _check_replay(self, arguments: dict[str, Any]) -> None:
        first = observation(self._recorded_call(arguments))
        second = observation(self._recorded_call(arguments))
        if first is None or second is None:
            return  # broken calls and environment failures are H4's business, not replay's
        if first != second:
            self._fail(
                "replay-differs",
                f"replaying the same call gave {shorten(second)!r} after {shorten(first)!r}",
                "declare replay_policy=ReplayPolicy.NEVER, or make the handler deterministic "
                "for equal arguments",
                arguments,
            )


def _raised_problem(result: CallResult) -> tuple[str, str, str] | None:
    """(code, message, fix) for a handler that raised an `Exception` on valid arguments: a
    failure only under `fail_on_raise`, where raising on input the schema accepts means the
    schema promises more than the handler takes."""
    if result.kind is not CallKind.RAISED or result.exception is None:
        return None
    return (
        "handler-raised",
        f"the handler raised {describe_exception(result.exception)} on arguments its schema "
        "accepts",
        "narrow the schema to what the handler takes (an enum, a pattern, a minimum) or handle "
        "that input; raising is an allowed observation (E4) unless fail_on_raise / "
        "--fail-on-raise asks otherwise",
    )


def _digest(tool: Tool, clause: str) -> bytes:
    text = json_text(
        {"clause": clause, "name": str(tool.name), "parameters": thaw(tool.parameters)}
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _identifier(label: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in label)


def given_property(prop: ToolProperty) -> Callable[[], None]:
    """`prop` as a Hypothesis test with no parameters (settings come from the active profile)."""

    def property_test(arguments: dict[str, Any]) -> None:
        prop.check(arguments)

    hypo.add_digest(property_test, _digest(prop.tool, prop.clause))
    property_test.__name__ = f"test_{prop.clause}_{_identifier(prop.tool.label)}"
    property_test.__qualname__ = property_test.__name__
    test: Callable[[], None] = given(arguments=arguments_strategy(prop.tool))(property_test)
    return test


@dataclass(frozen=True, kw_only=True)
class PropertyRun:
    """What one H4/H6 run found."""

    tried: int
    stats: HandlerStats
    finding: Finding | None
    inconclusive: str | None
    """Why nothing could be tried (no valid arguments were generated), else None."""


def run_property(tool: Tool, clause: str, run: RunSettings, examples: int) -> PropertyRun:
    """Run H4/H6 for one tool on a runner of its own, closed afterwards."""
    runner = LoopThread(name=f"polyloop-toolcheck:{tool.label}")
    try:
        recorder = _Recorder(max_hangs=run.max_hangs)
        prop = ToolProperty(
            tool, clause, run.deadline, runner, recorder, fail_on_raise=run.fail_on_raise
        )
        finding, inconclusive = _search(prop, run, examples, recorder)
        if finding is None and inconclusive is None and clause == "H4" and recorder.smallest:
            _shrink_raising(prop, run, recorder)
    finally:
        runner.close()
    return PropertyRun(
        tried=recorder.tried, stats=recorder.stats(), finding=finding, inconclusive=inconclusive
    )


def _search(
    prop: ToolProperty, run: RunSettings, examples: int, recorder: _Recorder
) -> tuple[Finding | None, str | None]:
    test = run.hypothesis(examples)(given_property(prop))
    if run.seed is not None:
        test = hypothesis_seed(run.seed)(test)
    try:
        test()
    except _Violation as violation:
        return violation.finding, None
    except (_TooManyHangs, Flaky):
        return recorder.smallest_violation(), None
    except Unsatisfiable:
        return None, "no generated arguments were valid under jsonschema"
    # Violations without an exception: e.g. a failure that did not reproduce when replayed.
    return recorder.smallest_violation(), None


def _shrink_raising(prop: ToolProperty, run: RunSettings, recorder: _Recorder) -> None:
    """Replace the smallest raising call seen by the smallest Hypothesis can find.

    Raising is allowed (it becomes an observation), so the H4 run never shrinks it; a second,
    short search does. Its calls do not count in the statistics.
    """
    observations: dict[str, str] = {}
    hangs = _Recorder(max_hangs=run.max_hangs)

    def raises(arguments: dict[str, Any]) -> bool:
        result = prop.call(arguments)
        if result.kind is CallKind.HANG:
            hangs.hang()
            hangs.check_hangs()
        if result.kind is CallKind.RAISED and result.exception is not None:
            observations[json_text(arguments)] = describe_exception(result.exception)
            return True
        return False

    search = settings(run.hypothesis(max(run.examples, 10)), database=None, derandomize=True)
    try:
        smallest = find(arguments_strategy(prop.tool), raises, settings=search)
    except (NoSuchExample, Unsatisfiable, _TooManyHangs, Flaky):
        return
    found = observations.get(json_text(smallest))
    seen = recorder.smallest
    if found is not None and seen is not None and _size_key(smallest) <= seen[0]:
        recorder.smallest = (_size_key(smallest), smallest, found)
