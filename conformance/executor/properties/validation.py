"""The checks of the validation clauses (V1-V8), each with its hand-picked scenarios."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance._core.data import ints_to_floats
from conformance._core.text import json_text
from conformance.executor import strategies as gen
from conformance.executor.behaviours import plain_copy
from conformance.executor.oracle import (
    CallVerdict,
    Expectation,
    Observed,
    json_types_of,
    mentions,
    must_reject,
    typed_properties,
)
from conformance.executor.properties import picked
from conformance.executor.properties.scenarios import (
    Scenario,
    ScenarioSource,
    Violation,
    call,
    object_tool,
    trap,
)
from conformance.executor.properties.shared import (
    reached_handler,
    rejected_outcome,
    result_of_dispatch,
    single_step,
    violation,
)
from conformance.executor.runner import Step, Trial
from conformance.executor.strategies import ToolDef
from polyloop import ActionOutcome

# ---------------------------------------------------------------------------------------------
# The checks, one per clause


def check_V1(trial: Trial, scenario: Scenario) -> None:
    """A call full JSON Schema accepts is never rejected."""
    _, expectation, observed = single_step(trial, scenario)
    if expectation.verdict is not CallVerdict.MUST_ACCEPT:
        return  # e.g. valid only under Python re's reading of a pattern (E14)
    if trial.white_box and not reached_handler(observed):
        raise violation(
            "a call that JSON Schema accepts never reached its handler", expectation, observed
        )
    if rejected_outcome(observed):
        raise violation(
            "a call that JSON Schema accepts was rejected (NOT_EXECUTED)", expectation, observed
        )
    _check_integral_floats(trial, scenario)


def _check_integral_floats(trial: Trial, scenario: Scenario) -> None:
    """V1 for integral floats: JSON (hence a model) may send ``3.0`` where the schema says
    ``integer``, so an accepted call holding integers is sent again with each as the equal
    float; when full JSON Schema still accepts it, it must not be rejected either."""
    tool_call = scenario.steps[-1].action.tool_call
    if tool_call is None or not isinstance(tool_call.arguments, Mapping):
        return
    arguments = plain_copy(tool_call.arguments)
    floated = ints_to_floats(arguments)
    if json_text(floated) == json_text(arguments):
        return  # no integer to send as a float
    partner = trap(call(tool_call.name, floated), scenario.steps[-1].behaviour, scenario.tools)
    _, expectation, observed = single_step(trial, partner)
    if expectation.verdict is not CallVerdict.MUST_ACCEPT:
        return
    if rejected_outcome(observed) or (trial.white_box and not reached_handler(observed)):
        raise violation(
            "the same valid call with its integers sent as equal floats (3 -> 3.0) was not "
            "handed to its handler",
            expectation,
            observed,
        )


def _rejected(
    trial: Trial, scenario: Scenario, clause: str, words: str
) -> tuple[Expectation, Observed]:
    """V2–V6: the call must be rejected (NOT_EXECUTED), and the rejection must name what
    `clause` says it names. Whether the handler ran anyway is E8's concern, so a handler run
    before a correct rejection fails E8 alone."""
    _, expectation, observed = single_step(trial, scenario)
    if not rejected_outcome(observed):
        reached = " (the call reached the handler)" if reached_handler(observed) else ""
        dispatched = _dispatched_to(scenario, observed) if clause == "V2" else None
        if dispatched is not None:
            raise violation(dispatched, expectation, observed)
        raise violation(
            f"{words}, but the outcome is not NOT_EXECUTED{reached}", expectation, observed
        )
    names = tuple(
        name for reason in expectation.reasons if reason.clause == clause for name in reason.names
    )
    outcome = observed.outcome
    if names and isinstance(outcome, ActionOutcome) and isinstance(outcome.observation, str):
        unnamed = [name for name in names if not mentions(outcome.observation, name)]
        # V8 keeps a rejection short, so a long list may be cut: the first MUST_NAME are owed.
        if len(names) - len(unnamed) < min(len(names), MUST_NAME):
            owed = f"; it must name at least {MUST_NAME}" if len(names) > MUST_NAME else ""
            raise violation(
                f"the rejection does not name {', '.join(map(repr, unnamed[:MUST_NAME]))}"
                + (f" and {len(unnamed) - MUST_NAME} more" if len(unnamed) > MUST_NAME else "")
                + owed,
                expectation,
                observed,
            )
    return expectation, observed


MUST_NAME = 10
"""How many of the keys (V4, V5, V6) a rejection must name at least
when there are more: the contract asks for them all, and V8 for a message under 2,000
characters, so a long list may end in "and N more" after the first ten."""


def _loose(name: str) -> str:
    return "".join(ch for ch in name if ch.isalnum()).casefold()


def _dispatched_to(scenario: Scenario, observed: Observed) -> str | None:
    """For an unknown name that was not rejected: which visible tool it ran as — the tool
    whose handler ran (white-box), else the visible tool it resembles (same letters and
    digits, or ending in them after a namespace) — as a V2 message; None when neither is
    known."""
    call = scenario.steps[-1].action.tool_call
    if call is None:
        return None
    ran = sorted({handled.tool for handled in observed.calls or ()})
    if not ran:
        loose = _loose(call.name)
        ran = [
            name
            for name in scenario.schemas
            if _loose(name) and (loose == _loose(name) or loose.endswith(_loose(name)))
        ]
        if len(ran) != 1:
            return None
        how = "resolved it (so it seems) to"
    else:
        how = "dispatched it to"
    return (
        f"the tool name {call.name!r} is unknown, but the executor {how} "
        f"{', '.join(map(repr, ran))} instead of rejecting it (NOT_EXECUTED)"
    )


def _must_reject(clause: str, words: str) -> Callable[[Trial, Scenario], None]:
    def check(trial: Trial, scenario: Scenario) -> None:
        _rejected(trial, scenario, clause, words)

    check.__doc__ = f"{words}: the call is rejected."
    return check


def _occurrences(text: str, part: str) -> list[int]:
    found, start = [], text.find(part)
    while start != -1:
        found.append(start)
        start = text.find(part, start + 1)
    return found


def _forms(name: str) -> set[str]:
    forms = {name, repr(name)[1:-1], json.dumps(name)[1:-1], ascii(name)[1:-1]}
    return {f for f in forms | {f[:16] for f in forms if len(f) > 32} if f}


def check_V2(trial: Trial, scenario: Scenario) -> None:
    """An unknown tool name is rejected, naming the tool and (up to 20 of) the visible tools."""
    expectation, observed = _rejected(trial, scenario, "V2", "the tool name is unknown")
    outcome = observed.outcome
    call = scenario.steps[-1].action.tool_call
    if (
        not isinstance(outcome, ActionOutcome)
        or not isinstance(outcome.observation, str)
        or call is None
    ):
        return
    text = outcome.observation
    # A near-miss name contains the real one ("read_file " and "read_file"): a visible name
    # counts only where it is not just part of the unknown name.
    quoted = {repr(call.name), json.dumps(call.name), ascii(call.name)}
    quoted |= {form[:16] for form in quoted if len(form) > 32}
    forms = quoted if any(form in text for form in quoted) else _forms(call.name)
    unknown = [(start, start + len(form)) for form in forms for start in _occurrences(text, form)]
    visible = list(scenario.schemas)
    named = [
        name
        for name in visible
        if any(
            not any(low <= start and start + len(form) <= high for low, high in unknown)
            for form in _forms(name)
            for start in _occurrences(text, form)
        )
    ]
    if len(named) < min(len(visible), 20):
        raise violation(
            f"the rejection names {len(named)} of the {len(visible)} visible tools; it must "
            + (
                f"name all {len(visible)}"
                if len(visible) <= 20
                else "name 20 of them (the first 20, then a count of the rest)"
            ),
            expectation,
            observed,
        )


check_V3 = _must_reject("V3", "the arguments are not a mapping")
check_V4 = _must_reject("V4", "required keys are missing")
check_V5 = _must_reject("V5", "keys outside a closed schema are present")


def check_V6(trial: Trial, scenario: Scenario) -> None:
    """A top-level property of the wrong JSON type is rejected; and a rejection never accuses
    a valid value: swapping a property's value for one of another of its declared types
    (``null`` for ``0`` under ``["integer", "null"]``) does not change whether the rejection
    names that key."""
    _, observed = _rejected(trial, scenario, "V6", "a top-level property has the wrong JSON type")
    step = scenario.steps[-1]
    tool_call = step.action.tool_call
    text = _rejection_text(observed)
    if tool_call is None or text is None:
        return
    for key, twin in _twins(scenario.schemas.get(tool_call.name), tool_call.arguments):
        twin_arguments = {**tool_call.arguments, key: twin}
        if not must_reject(scenario.schemas, tool_call.name, twin_arguments):
            continue
        action = call(tool_call.name, twin_arguments)
        other = trial.run(scenario.tools, (Step(action=action, behaviour=step.behaviour),))[0]
        other_text = _rejection_text(other)
        if other_text is None or _names_key(text, key) == _names_key(other_text, key):
            continue
        value, swapped = tool_call.arguments[key], twin
        accused, innocent = (value, swapped) if _names_key(text, key) else (swapped, value)
        raise Violation(
            f"the rejection names {key!r} when its value is {_type_words(accused)} but not when "
            f"it is {_type_words(innocent)}, and both are of a type {key!r} declares: it "
            "accuses a valid value",
            expected=f"the same mention of {key!r} either way",
            actual=f"with {key!r} = {swapped!r}: {other_text!r}; as sent: {text!r}",
        )


_ANNOTATIONS = frozenset(
    {"type", "description", "title", "default", "examples", "$comment", "deprecated"}
)
_VALUE_DEPENDENT_ROOT = (
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "patternProperties",
)
"""Root keywords through which a property's value could decide other errors: with any of them
present, a swapped value may fairly change the message, so V6 swaps nothing."""
_TWINS: dict[str, Any] = {
    "null": None,
    "boolean": False,
    "integer": 0,
    "number": 0.5,
    "string": "",
    "array": [],
    "object": {},
}


def _twins(schema: Any, arguments: Any) -> list[tuple[str, Any]]:
    """Up to two (key, other value): a present key whose schema is only a list of types and
    whose value is valid, with a value of another listed type, equally valid."""
    if not isinstance(schema, dict) or not isinstance(arguments, Mapping):
        return []
    if any(word in schema for word in _VALUE_DEPENDENT_ROOT):
        return []
    properties = schema.get("properties")
    found: list[tuple[str, Any]] = []
    for key, types in typed_properties(schema).items():
        subschema = properties.get(key) if isinstance(properties, Mapping) else None
        if len(types) < 2 or key not in arguments or not isinstance(subschema, Mapping):
            continue
        if not set(subschema) <= _ANNOTATIONS or not isinstance(subschema["type"], list):
            continue
        actual = json_types_of(arguments[key])
        if not actual & types:
            continue  # mistyped: naming it is V6's very job
        others = [
            name
            for name in subschema["type"]
            if json_types_of(_TWINS[name]) & types and json_types_of(_TWINS[name]) != actual
        ]
        if others:
            found.append((key, _TWINS[others[0]]))
        if len(found) == 2:
            break
    return found


def _rejection_text(observed: Observed) -> str | None:
    outcome = observed.outcome
    if not rejected_outcome(observed) or not isinstance(outcome, ActionOutcome):
        return None
    return outcome.observation if isinstance(outcome.observation, str) else None


def _names_key(text: str, key: str) -> bool:
    """Whether `text` names `key` quoted (a bare one-letter key is in every sentence)."""
    forms = {repr(key), json.dumps(key), ascii(key)}
    forms |= {form[:16] for form in forms if len(form) > 32}
    return any(form in text for form in forms)


def _type_words(value: Any) -> str:
    return " or ".join(sorted(json_types_of(value))) or "not JSON"


# What an invalid call aimed at V3-V6 needs from the tools (V2's unknown name needs none): a
# tool at all, and for V4-V6 one whose schema has something to break. White-box tool sets are
# drawn to hold one; a black-box registry without one skips the clause.
_NOTHING_TO_BREAK = {
    "V4": "no tool in the registry has required keys",
    "V5": "no tool in the registry has additionalProperties: false",
    "V6": "no tool in the registry declares a top-level property type",
}


def aimed_tools(clause: str) -> Callable[[ScenarioSource], st.SearchStrategy[tuple[ToolDef, ...]]]:
    """Tool sets with a tool an invalid call aimed at `clause` can target."""
    return lambda source: source.with_tool_where(lambda schema: gen.aim_possible(clause, schema))


def nothing_to_aim_at(clause: str) -> Callable[[ScenarioSource], str | None]:
    """Why a black-box registry offers an invalid call aimed at `clause` no target, or None."""

    def why(source: ScenarioSource) -> str | None:
        if source.white_box:
            return None
        if not source.fixed:
            return "the registry has no tools"
        if any(gen.aim_possible(clause, tool.parameters) for tool in source.fixed):
            return None
        return _NOTHING_TO_BREAK[clause]

    return why


def check_V7(trial: Trial, scenario: Scenario) -> None:
    """A call that breaks only constraints the subset never checks (nested schemas, enum,
    ranges, ...) is rejected, or reaches the handler. Only that is judged here: what comes back
    from a dispatched call is E14's, how often the handler ran E8's."""
    _, expectation, observed = single_step(trial, scenario)
    if rejected_outcome(observed):
        return
    reached = (
        reached_handler(observed) if trial.white_box else result_of_dispatch(expectation, observed)
    )
    if not reached:
        raise violation(
            "a call only full JSON Schema rejects was neither rejected nor handed to its handler",
            expectation,
            observed,
        )


def check_V8(trial: Trial, scenario: Scenario) -> None:
    """A rejection stays under 2,000 characters and echoes no argument value."""
    _, expectation, observed = single_step(trial, scenario)
    if not rejected_outcome(observed):
        return
    assert isinstance(observed.outcome, ActionOutcome)
    text = observed.outcome.observation
    if not isinstance(text, str):
        return
    if len(text) >= 2000:
        raise violation(
            f"the rejection message is {len(text)} characters long", expectation, observed
        )
    if gen.has_sentinel(text):
        raise violation(
            "the rejection message echoes an argument value (it contains "
            f"{gen.SENTINEL_MARK!r} or a number near {gen.SENTINEL_NUMBER_BASE})",
            expectation,
            observed,
        )
    _check_literals_not_echoed(trial, scenario, text, (expectation, observed))


def _check_literals_not_echoed(
    trial: Trial, scenario: Scenario, text: str, seen: tuple[Expectation, Observed]
) -> None:
    """V8 for booleans and nulls, which cannot be made distinctive as strings and numbers are:
    the same call with every boolean flipped and every null made ``false`` is sent too, and
    the two rejection messages may not differ in just those values (`gen.echoes_literals`
    says why this cannot accuse a message that names ``null`` or ``false`` for other
    reasons)."""
    tool_call = scenario.steps[-1].action.tool_call
    if tool_call is None or not gen.has_literals(tool_call.arguments):
        return
    partner_arguments = gen.flipped_literals(tool_call.arguments)
    partner = trap(
        call(tool_call.name, partner_arguments), scenario.steps[-1].behaviour, scenario.tools
    )
    _, _, observed = single_step(trial, partner)
    if not rejected_outcome(observed):
        return  # the flip made the call valid (an enum, a const): nothing to compare
    assert isinstance(observed.outcome, ActionOutcome)
    partner_text = observed.outcome.observation
    if isinstance(partner_text, str) and gen.echoes_literals(text, partner_text):
        shown = json.dumps(partner_text[:300], ensure_ascii=False)
        raise violation(
            "the rejection message echoes a boolean or null argument value: for the same call "
            f"with every boolean flipped and every null made false it reads {shown}",
            *seen,
        )


# ---------------------------------------------------------------------------------------------
# Hand-picked scenarios every run tries first, whatever the profile


_LEGACY_URIS = (
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
)
"""Old-dialect spellings jsonschema accepts beside draft-07's usual one: in each, ``$ref``
silences its siblings."""
_MODERN_URIS = (
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2019-09/schema#",
)
"""Modern spellings: the sibling of ``$ref`` applies."""


def _read_file_under(uri: str) -> tuple[ToolDef, ...]:
    schema = {**gen.REF_SIBLING_PROPERTY, "$schema": uri}
    return (ToolDef(name="read_file", description="Read a file.", parameters=schema),)


def _one_tool(name: str, properties: dict[str, Any], **schema: Any) -> tuple[ToolDef, ...]:
    return (object_tool(name, properties, **schema),)


_NULLABLE = _one_tool(
    "nullable",
    {
        "q": {"type": "string"},
        "n": {"type": ["integer", "null"]},
        "r": {"type": ["number", "string"]},
    },
    required=["q"],
)
_ACCUSABLE: tuple[dict[str, Any], ...] = ({"n": None}, {"r": "s"}, {"n": 1, "r": 2.5})
_OPEN_EXTRAS: tuple[Any, ...] = ({}, True, {"type": "string"})
_NEAR_MISSES = (
    "read-file",
    "functions.read_file",
    "github/read_file",
    "mcp:read_file",
    "server__read_file",
    "default_api.read_file",
    "readfile",
    "READ_FILE",
    "read_file\u200b",
)
SENTINEL_NUMBERS: tuple[int | float, ...] = (
    gen.SENTINEL_NUMBER_BASE + 417,
    gen.SENTINEL_NUMBER_BASE + 923.5,
)
"""Non-string values of the V8 traps, with digits no key, type name or count contains."""


def _v1_traps() -> list[Scenario]:
    """Valid calls a careless validator rejects (V1)."""
    return [
        trap(call("read_file", {"path": ["a.txt", "b.txt"]})),
        trap(call("search", {"q": "x", "unlisted": 1})),
        trap(call("count", {"n": 3.0})),
        trap(call("count", {"n": 1, "tag": None})),
        trap(call("count", {"n": 1, "ratio": "0.5"})),
        trap(call("count", {"n": 1, "x-trace": "abc"})),
        *(
            trap(call("read_file", {"path": ["a.txt"]}), among=_read_file_under(uri))
            for uri in _LEGACY_URIS
        ),
        *(
            trap(
                call("search", {"q": "x", "extra": "y"}),
                among=_one_tool("search", {"q": {"type": "string"}}, additionalProperties=extra),
            )
            for extra in _OPEN_EXTRAS
        ),
        trap(
            call("search", {"q": "x", "user_id": 3}),
            among=_one_tool(
                "search",
                {"q": {"type": "string"}},
                additionalProperties=False,
                patternProperties={"_id$": {"type": "integer"}},
            ),
        ),
        *(trap(call("count", {"n": value})) for value in picked.BIG_NUMBERS),
        *(trap(call("count", {"x": value}), among=picked.NUMBERS) for value in picked.BIG_NUMBERS),
        *(trap(call("edges", value), among=picked.EDGES) for value in picked.EDGE_VALUES),
        trap(call("edges", {"x": 2.5}), among=picked.D4_EXCLUSIVE),
        trap(
            call("special", {name: "v" for name in gen.SPECIAL_PROPERTY_NAMES}),
            among=(gen.SPECIAL_NAMES_TOOL,),
        ),
        # Beyond the subset, what full JSON Schema accepts that a stricter hand check rejects:
        # a string not in its format (an annotation), array- and object-valued enum/const
        # members, a pattern found inside the string (matched by search, not fullmatch).
        *(trap(call("annotated", arguments), among=picked.ANNOTATED) for arguments in picked.LAX),
    ]


def traps() -> dict[str, list[Scenario]]:
    """Clause ID -> the validation traps: valid calls a careless validator rejects (V1),
    near-miss names (V2), arguments as a JSON string (V3), type edge cases (V6), and inputs that
    make a rejection message long or echo a value (V8)."""
    mark = gen.SENTINEL_MARK
    return {
        "V1": _v1_traps(),
        "V2": [
            trap(call("Read_File", {"path": "a.txt"})),
            trap(call("read_file ", {"path": "a"})),
            trap(call("search_v2", {"q": "x"})),
            *(trap(call(name, {"path": "a.txt"})) for name in _NEAR_MISSES),
        ],
        "V3": [trap(call("read_file", json.dumps({"path": f"{mark}1"})))],
        "V4": [
            trap(call("wide", {}), among=picked.WIDE),
            trap(picked.VAST_CALL, among=picked.VAST),
            trap(call("unlisted", {"a": "x"}), among=picked.UNLISTED_REQUIRED),
        ],
        "V5": [
            trap(
                call(
                    "wide", {**{f"k{index:02d}_req": "v" for index in range(12)}, **picked.EXTRAS}
                ),
                among=picked.WIDE,
            ),
            trap(call("closed", {"x": 1}), among=picked.CLOSED_BARE),
            trap(call("closed_empty", {"x": 1}), among=picked.CLOSED_BARE),
        ],
        "V6": [
            # Rejected for a missing key, with valid values of a later-listed type beside it:
            # a message that judged them by their first listed type would accuse them.
            *(trap(call("nullable", arguments), among=_NULLABLE) for arguments in _ACCUSABLE),
            trap(call("wide", dict.fromkeys(picked.WIDE_KEYS, 0)), among=picked.WIDE),
            trap(call("count", {"n": True})),
            trap(call("count", {"n": 2.5})),
            trap(call("count", {"n": "7"})),
            trap(call("count", {"n": 1, "tag": 0})),
            # Neither a number nor a bool: a check that only rules out bools lets it through.
            *(trap(call("count", {k: v}), among=picked.NUMBERS) for k in "xn" for v in ("7", None)),
            *(
                trap(call("read_file", {"path": ["a.txt"]}), among=_read_file_under(uri))
                for uri in _MODERN_URIS
            ),
        ],
        "V8": [
            trap(call("t" * 5000, {"q": f"{mark}1"})),
            trap(call("count", {f"key_{i}_" + "k" * 300: f"{mark}{i}" for i in range(30)})),
            trap(call("nope", {"q": f"{mark}1"}), among=picked.CROWDED),
            trap(picked.VAST_CALL, among=picked.VAST),
            trap(call("count", {"n": f"{mark}1" + "v" * 5000})),
            trap(call("count", {"n": f"{mark}1", "tag": SENTINEL_NUMBERS[0]})),
            trap(call("count", {"n": SENTINEL_NUMBERS[1], "tag": SENTINEL_NUMBERS[0]})),
            trap(call("count", {"n": SENTINEL_NUMBERS[1]})),
            # booleans and nulls: checked against the same call with the values flipped
            trap(call("count", {"n": True})),
            trap(call("count", {"n": None})),
            trap(call("count", {"n": [False, None]})),
        ],
    }
