"""Scenarios, the `Property` row type, the scenario strategies, and helpers for the hand-picked
trap scenarios each clause's module keeps next to its check."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.executor import strategies as gen
from conformance.executor.behaviours import (
    Behaviour,
    MutateArguments,
    ReturnText,
    YieldFirst,
    arguments_key,
    plain_copy,
)
from conformance.executor.runner import Step, Trial
from conformance.executor.strategies import ToolDef
from conformance.executor.strategies.defaults import defaulted_tool_set_pool
from polyloop import Action, ReplayPolicy, ToolCall, ToolRegistry


class ActionKind(str, enum.Enum):
    """What kind of action a scenario step sends."""

    VALID = "valid"
    """A call full JSON Schema accepts (V1)."""
    INVALID = "invalid"
    """A call validation must reject (V2-V6)."""
    BEYOND = "beyond"
    """A call only full JSON Schema rejects (V7, E14)."""
    CODE = "code"
    """A code action, no tool call (E1)."""


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """Tools, and the actions sent to an executor serving them."""

    tools: tuple[ToolDef, ...]
    steps: tuple[Step, ...]
    elsewhere: bool = False
    """E11: also run the steps concurrently in a fresh event loop (`Trial.run_concurrently`)."""

    @property
    def schemas(self) -> dict[str, Mapping[str, Any]]:
        return {tool.name: tool.parameters for tool in self.tools}


class Violation(Exception):
    """The executor broke the clause being checked, on step `step` of the scenario."""

    def __init__(
        self,
        message: str,
        *,
        step: int = 0,
        expected: str = "",
        actual: str = "",
        stop: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.step = step
        self.expected = expected
        if actual and actual == expected:
            # Never "expected X, actual X": the check saw a difference this rendering hides.
            actual = (
                f"{actual} (renders as the expected does; they differ in types or object "
                "identity, which this rendering does not show)"
            )
        self.actual = actual
        self.stop = stop
        """No point in searching further (the executor hangs): report this example as is."""


@dataclass(frozen=True, kw_only=True)
class ScenarioSource:
    """Where scenarios get their tools: generated per example (white-box), or the fixed
    registry a black-box executor serves."""

    white_box: bool
    tools: st.SearchStrategy[tuple[ToolDef, ...]]
    fixed: tuple[ToolDef, ...] = ()
    pool: tuple[dict[str, Any], ...] = ()
    names: tuple[str, ...] = ()
    """White-box: the tool names `with_tool_where` names an added tool from."""
    pool_seed: int | None = None
    """White-box: the seed of the argument pools (`gen.pooled_arguments`)."""
    hardened: bool = False
    """Level ``hardened``: also try each clause's hostile-object traps (`Property.hostile`)."""
    defaulted_tools: st.SearchStrategy[tuple[ToolDef, ...]] | None = None
    """White-box: the same tool sets, every property with a ``default`` (`defaulted`)."""

    @classmethod
    def generated(cls, seed: int, pool_size: int) -> ScenarioSource:
        pool = gen.schema_pool(seed, pool_size)
        sets = gen.tool_set_pool(seed, pool_size)
        defaulted = defaulted_tool_set_pool(seed, pool_size)
        return cls(
            white_box=True,
            pool=pool,
            tools=st.integers(0, len(sets) - 1).map(sets.__getitem__),
            names=gen.tool_name_pool(seed, pool_size),
            pool_seed=seed,
            defaulted_tools=st.integers(0, len(defaulted) - 1).map(defaulted.__getitem__),
        )

    @classmethod
    def from_registry(cls, registry: ToolRegistry) -> ScenarioSource:
        tools = tuple(
            ToolDef(
                name=spec.name,
                description=spec.description,
                parameters=plain_copy(spec.parameters),
                replay_policy=spec.replay_policy,
                completes_run=spec.completes_run,
            )
            for spec in registry.specs
        )
        return cls(white_box=False, tools=st.just(tools), fixed=tools)

    def with_tool_where(
        self, fits: Callable[[Mapping[str, Any]], bool]
    ) -> st.SearchStrategy[tuple[ToolDef, ...]]:
        """White-box tool sets holding at least one tool whose ``parameters`` `fits` (one
        drawn from the pool is added when none does); black-box, the fixed registry."""
        if not self.white_box:
            return self.tools
        eligible = [schema for schema in self.pool if fits(schema)]
        return st.tuples(self.tools, st.sampled_from(eligible), st.sampled_from(self.names)).map(
            lambda parts: _with_tool(*parts, fits=fits)
        )

    def defaulted(self) -> st.SearchStrategy[tuple[ToolDef, ...]]:
        """White-box tool sets whose properties carry ``default`` values (E8, E13: the handler
        gets exactly the call's arguments, never the defaults of keys it omits); black-box, the
        fixed registry."""
        return self.tools if self.defaulted_tools is None else self.defaulted_tools

    def padded(self) -> st.SearchStrategy[tuple[ToolDef, ...]]:
        """Tool sets that now and then hold more than 20 tools (V2 names up to 20 of them;
        V8 keeps the message short anyway)."""
        if not self.white_box:
            return self.tools
        return st.tuples(self.tools, st.integers(0, 4)).map(
            lambda parts: parts[0] if parts[1] < 4 else _padded(parts[0])
        )


def _padded(tools: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
    taken = {tool.name for tool in tools}
    extra = [
        ToolDef(name=f"extra_tool_{index:02d}", description="", parameters={"type": "object"})
        for index in range(24)
    ]
    return (*tools, *(tool for tool in extra if tool.name not in taken))


def _with_tool(
    tools: tuple[ToolDef, ...],
    schema: dict[str, Any],
    name: str,
    *,
    fits: Callable[[Mapping[str, Any]], bool],
) -> tuple[ToolDef, ...]:
    if any(fits(tool.parameters) for tool in tools):
        return tools
    taken = {tool.name for tool in tools}
    while name in taken:
        name += "_"
    return (*tools, ToolDef(name=name, description="", parameters=schema))


@dataclass(frozen=True, kw_only=True)
class Property:
    """How one clause is checked: scenarios to try, and the check for one scenario."""

    clause: str
    scenarios: Callable[[ScenarioSource], st.SearchStrategy[Scenario]]
    check: Callable[[Trial, Scenario], None]
    black_box: bool
    """Whether the check needs nothing from the handlers (so it also runs black-box)."""
    inapplicable: Callable[[ScenarioSource], str | None] = field(default=lambda _source: None)
    """Before a run: why these tools offer the clause nothing to check (the clause is then
    reported skipped), or None."""
    examples: Callable[[], Sequence[Scenario]] = field(default=lambda: ())
    """Hand-picked white-box scenarios tried before the generated ones."""
    hostile: Callable[[], Sequence[Scenario]] = field(default=lambda: ())
    """Hand-picked scenarios built from objects that lie about themselves; tried only at level
    ``hardened`` (certification at ``core``/``strict`` judges realistic input only)."""
    inconclusive: Callable[[Trial], str | None] = field(default=lambda _trial: None)
    """After a run in which every check passed: why that pass proves nothing (the clause is then
    reported skipped), or None."""


# ---------------------------------------------------------------------------------------------
# Scenario strategies


def _calls(
    kind: ActionKind,
    aims: Sequence[str] = gen.INVALID_AIMS,
    *,
    upstream: bool = False,
    pool_seed: int | None = None,
) -> Callable[[tuple[ToolDef, ...]], st.SearchStrategy[Action]]:
    # `upstream`: valid arguments, and the valid calls that calls beyond the subset vary, are
    # searched with hypothesis-jsonschema too, where their variety is the check (V1, V7, E14);
    # otherwise, with a `pool_seed` (white-box), they are drawn in one choice from a pool per
    # schema (`pooled_arguments`): the call only has to reach its handler or validation.
    pooled = None if upstream else pool_seed

    def actions(tools: tuple[ToolDef, ...]) -> st.SearchStrategy[Action]:
        if kind is ActionKind.CODE:
            return gen.code_actions()
        calls: st.SearchStrategy[ToolCall] = {
            ActionKind.VALID: lambda: gen.valid_calls(tools, upstream=upstream, pool_seed=pooled),
            ActionKind.INVALID: lambda: gen.invalid_calls(
                tools, aims, upstream=False, pool_seed=pool_seed
            ),
            ActionKind.BEYOND: lambda: gen.beyond_subset_calls(
                tools, upstream=upstream, pool_seed=pooled
            ),
        }[kind]()
        return calls.map(lambda call: Action(tool_call=call))

    return actions


def single(
    kinds: Sequence[ActionKind],
    behaviours: Sequence[str] = ("text",),
    *,
    aims: Sequence[str] = gen.INVALID_AIMS,
    tools: Callable[[ScenarioSource], st.SearchStrategy[tuple[ToolDef, ...]]] | None = None,
    upstream: bool = False,
    primed: bool = False,
) -> Callable[[ScenarioSource], st.SearchStrategy[Scenario]]:
    """Scenarios of one action of one of `kinds` (valid, invalid, beyond, code), over the
    tool sets `tools` draws from a source (default: the source's own); `upstream`: valid
    arguments from hypothesis-jsonschema as well as from the kit's generator (V1); `primed`:
    now and then the same executor first gets a call of the same tool with the opposite
    validity (`_primer`), and the check judges the last step."""

    def scenarios(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
        tools_strategy = source.tools if tools is None else tools(source)
        handler = gen.handler_behaviours(behaviours)
        seed = source.pool_seed

        @st.composite
        def build(draw: st.DrawFn) -> Scenario:
            drawn = draw(tools_strategy)
            kind = draw(st.sampled_from(list(kinds)))
            action = draw(_calls(kind, aims, upstream=upstream, pool_seed=seed)(drawn))
            behaviour = draw(handler) if source.white_box else None
            step = Step(action=action, behaviour=behaviour)
            first = draw(_primer(kind, action, drawn, source)) if primed else None
            return Scenario(tools=drawn, steps=(step,) if first is None else (first, step))

        return build()

    return scenarios


_PRIMING_AIMS = ("V3", "V4", "V5", "V6")


def _primer(
    kind: ActionKind, action: Action, tools: tuple[ToolDef, ...], source: ScenarioSource
) -> st.SearchStrategy[Step | None]:
    """Nothing (most often, and where shrinking goes), or a step calling the judged call's
    tool with the opposite validity: an invalid call before a valid one, a valid call before
    an invalid one. An executor that keeps the first verdict per tool name (state carried
    between calls) then fails the V clause of the judged call."""
    call = action.tool_call
    same = tuple(tool for tool in tools if call is not None and tool.name == call.name)
    if not same or kind not in (ActionKind.VALID, ActionKind.INVALID):
        return st.none()
    opposite = ActionKind.INVALID if kind is ActionKind.VALID else ActionKind.VALID
    calls = _calls(opposite, _PRIMING_AIMS, pool_seed=source.pool_seed)(same)
    behaviour = ReturnText(text="primed") if source.white_box else None
    steps = calls.map(lambda first: Step(action=first, behaviour=behaviour))
    return st.one_of(st.none(), st.none(), steps)


def many(
    kinds: Sequence[ActionKind], behaviours: Sequence[str], *, low: int = 2, high: int = 5
) -> Callable[[ScenarioSource], st.SearchStrategy[Scenario]]:
    """Scenarios of several actions, each with its own (yielding) behaviour."""

    def scenarios(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
        handler = gen.handler_behaviours(behaviours)

        @st.composite
        def build(draw: st.DrawFn) -> Scenario:
            tools = draw(source.tools)
            steps = []
            # Steps with equal calls share one behaviour: the kit scripts handlers per call
            # (tool and arguments), so two behaviours for one call could not both run.
            scripted: dict[tuple[str, Any], Behaviour] = {}
            for _ in range(draw(st.integers(low, high))):
                kind = draw(st.sampled_from(list(kinds)))
                action = draw(_calls(kind, pool_seed=source.pool_seed)(tools))
                behaviour: Behaviour = YieldFirst(times=draw(st.integers(0, 4)), then=draw(handler))
                if action.tool_call is not None:
                    key = (action.tool_call.name, arguments_key(action.tool_call.arguments))
                    behaviour = scripted.setdefault(key, behaviour)
                steps.append(Step(action=action, behaviour=behaviour))
            # Half the scenarios also run in a fresh event loop (E11); the other half keep
            # the check's time down.
            elsewhere = draw(st.booleans())
            return Scenario(tools=tools, steps=tuple(steps), elsewhere=elsewhere)

        return build()

    return scenarios


def repeated(source: ScenarioSource) -> st.SearchStrategy[Scenario]:
    """One valid call sent twice to a handler that mutates what it receives (E13), over
    tools whose properties carry defaults."""

    @st.composite
    def build(draw: st.DrawFn) -> Scenario:
        tools = draw(source.defaulted())
        call = gen.valid_calls(tools, upstream=False, pool_seed=source.pool_seed)
        action = Action(tool_call=draw(call))
        behaviour = MutateArguments(then=ReturnText(text=draw(st.text(max_size=10))))
        step = Step(action=action, behaviour=behaviour)
        return Scenario(tools=tools, steps=(step, step))

    return build()


# ---------------------------------------------------------------------------------------------
# Helpers for hand-picked scenarios (each clause's module keeps its own next to its check)

COUNT_SCHEMA = {
    "type": "object",
    "required": ["n"],
    "additionalProperties": False,
    "properties": {
        "n": {"type": "integer"},
        "tag": {"type": ["string", "null"]},
        "ratio": {"type": "float"},
    },
    "patternProperties": {"^x-": {"type": "string"}},
}

TRAP_TOOLS = (
    ToolDef(name="read_file", description="Read a file.", parameters=gen.REF_SIBLING_PROPERTY),
    ToolDef(name="search", description="Search.", parameters=gen.REF_SIBLING_ROOT),
    ToolDef(name="count", description="Count.", parameters=COUNT_SCHEMA),
)
"""The tools of the trap scenarios: the draft-07 ``$ref`` sibling trap at property and at root
level, and a closed object with non-standard type names and ``patternProperties``."""


def object_tool(
    name: str,
    properties: dict[str, Any],
    *,
    description: str = "",
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER,
    **schema: Any,
) -> ToolDef:
    """A trap tool whose ``parameters`` is an object with these ``properties`` (and any other
    keywords `schema` names, e.g. ``required`` or ``$schema``)."""
    parameters = {"type": "object", "properties": properties, **schema}
    return ToolDef(
        name=name, description=description, parameters=parameters, replay_policy=replay_policy
    )


def trap(
    action: Action, behaviour: Behaviour | None = None, among: tuple[ToolDef, ...] = TRAP_TOOLS
) -> Scenario:
    """A one-step scenario over `among` whose handler returns "ok" unless told otherwise."""
    return Scenario(
        tools=among, steps=(Step(action=action, behaviour=behaviour or ReturnText(text="ok")),)
    )


def sequence(*steps: tuple[Action, Behaviour], among: tuple[ToolDef, ...] = TRAP_TOOLS) -> Scenario:
    """A scenario over `among` sending these actions in turn, each with its behaviour."""
    return Scenario(
        tools=among, steps=tuple(Step(action=action, behaviour=then) for action, then in steps)
    )


def twice(tool: ToolDef, arguments: Any, behaviour: Behaviour) -> Scenario:
    """A two-step scenario over `tool` sending the same call twice."""
    step = (call(tool.name, arguments), behaviour)
    return sequence(step, step, among=(tool,))


def call(name: str, arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))
