"""Contract section 11 (P1–P12) on `RegistryExecutor`, by hand-picked examples.

The recorder's trace (`_policy_harness`) is the backdoor: which listener ran, for which call,
what it saw, in which order. Exact sentences are checked here; the input spaces are drawn in
`test_policy_properties.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _policy_harness import (
    SECRET,
    Recorder,
    Script,
    act,
    cancel_at_gate,
    oracle,
)

from polyloop import (
    Action,
    ActionStatus,
    Decision,
    RegistryExecutor,
    ToolCall,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)
from polyloop.tools import DENIED, WITHHELD


async def _allow(call: ToolCall) -> Verdict:
    return Verdict(decision=Decision.ALLOW)


def _sync_decider(call: ToolCall) -> Verdict:
    return Verdict(decision=Decision.ALLOW)


def _execute(executor: RegistryExecutor, action: Action) -> Any:
    return asyncio.run(executor.execute(action))


# --- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["deciders", "wrappers", "post"])
def test_P_names_a_sync_listener_by_field_and_position(field: str) -> None:
    with pytest.raises(TypeError, match=rf"ToolPolicy\.{field}\[1\] must be an async callable"):
        ToolPolicy(**{field: [_allow, _sync_decider]})  # type: ignore[arg-type]


def test_P_names_a_non_callable_listener_and_a_sync_approver() -> None:
    with pytest.raises(
        TypeError, match=r"ToolPolicy\.deciders\[0\] must be an async callable, got int"
    ):
        ToolPolicy(deciders=[3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"ToolPolicy\.approver must be an async callable"):
        ToolPolicy(approver=_sync_decider)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolPolicy\.post must be an iterable"):
        ToolPolicy(post=_allow)  # type: ignore[arg-type]


@pytest.mark.parametrize("default", ["ALLOW", None, True, "deny"])
def test_P_default_must_be_a_decision(default: object) -> None:
    with pytest.raises(TypeError, match=r"ToolPolicy\.default must be a Decision"):
        ToolPolicy(default=default)  # type: ignore[arg-type]


def test_P_any_iterable_is_stored_as_a_tuple_and_fields_are_keyword_only() -> None:
    policy = ToolPolicy(deciders=iter([_allow]), post=[])  # type: ignore[arg-type]
    assert policy.deciders == (_allow,)
    assert policy.post == ()
    with pytest.raises(TypeError):
        ToolPolicy((_allow,))  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"Verdict\.decision must be a Decision"):
        Verdict(decision="deny")  # type: ignore[arg-type]
    assert [d.name for d in Decision] == ["ALLOW", "ASK", "DENY"]


@pytest.mark.parametrize("policy", [ToolPolicy, "policy", 1])
def test_P_a_wrong_policy_type_is_refused_by_both_factories(policy: object) -> None:
    registry = Recorder().registry()
    with pytest.raises(TypeError, match="policy= takes a ToolPolicy or None"):
        registry.executor(policy=policy)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="policy= takes a ToolPolicy or None"):
        registry.batch_executor(policy=policy)  # type: ignore[arg-type]


def test_P_parameters_are_unchanged_by_a_policy() -> None:
    registry = Recorder().registry()
    policy = ToolPolicy(deciders=[_allow])
    assert registry.executor(policy=policy).parameters() == {"tools": "t"}
    assert registry.batch_executor(policy=policy).parameters() == {
        "tools": "t",
        "max_concurrency": "10",
    }


# --- P1, P2, P3 -----------------------------------------------------------------------------


def test_P1_a_rejected_call_reaches_no_listener() -> None:
    recorder = Recorder()
    script = Script(deciders=("ask",), approver=True, wrappers=("pass",), post=("replace",))
    executor = recorder.registry().executor(policy=recorder.policy(script))
    unknown = _execute(executor, Action(tool_call=ToolCall(name="nope", arguments={"id": 1})))
    invalid = _execute(executor, Action(tool_call=ToolCall(name="t", arguments={"id": "x"})))
    no_call = _execute(executor, Action(code="print(1)"))
    assert recorder.trace == []
    plain = recorder.registry().executor()
    assert unknown == _execute(plain, Action(tool_call=ToolCall(name="nope", arguments={"id": 1})))
    assert invalid == _execute(plain, Action(tool_call=ToolCall(name="t", arguments={"id": "x"})))
    assert no_call == _execute(plain, Action(code="print(1)"))


def test_P2_stage_order_deciders_approver_wrappers_handler_post() -> None:
    recorder = Recorder()
    script = Script(
        deciders=("allow", "ask", "abstain"),
        approver=True,
        wrappers=("pass", "pass"),
        post=("replace", "replace"),
    )
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(4))
    assert recorder.stages() == [
        ("decide", 0),
        ("decide", 1),
        ("decide", 2),
        ("approve", 0),
        ("wrap", 0),
        ("wrap", 1),
        ("handler", 0),
        ("post", 0),
        ("post", 1),
    ]
    assert outcome.observation == "out-4-[redacted]|p0|p1"
    assert outcome.status is ActionStatus.EXECUTED and not outcome.observation_is_synthetic


@pytest.mark.parametrize(
    "deciders",
    [("allow", "deny"), ("deny", "allow"), ("ask", "deny", "allow"), ("allow", "allow", "deny")],
)
def test_P3_deny_wins_in_any_order(deciders: tuple[str, ...]) -> None:
    recorder = Recorder()
    script = Script(deciders=deciders, approver=True)
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(1))
    assert outcome.status is ActionStatus.NOT_EXECUTED and outcome.observation_is_synthetic
    assert "handler" not in {stage for stage, _ in recorder.stages()}
    assert "approve" not in {stage for stage, _ in recorder.stages()}


@pytest.mark.parametrize("default", list(Decision))
def test_P3_an_explicit_allow_only_overrides_the_default(default: Decision) -> None:
    recorder = Recorder()
    allowed = _execute(
        recorder.registry().executor(
            policy=recorder.policy(Script(deciders=("abstain", "allow"), default=default))
        ),
        act(1),
    )
    assert allowed.status is ActionStatus.EXECUTED
    silent = _execute(
        recorder.registry().executor(
            policy=recorder.policy(Script(deciders=("abstain",), default=default))
        ),
        act(2),
    )
    expected = ActionStatus.EXECUTED if default is Decision.ALLOW else ActionStatus.NOT_EXECUTED
    assert silent.status is expected


# --- P4, P5, P6: fail-closed, fixed sentences, no secrets ------------------------------------


@pytest.mark.parametrize("answer", ["bool", "str", "bare", "raise"])
def test_P4_garbage_or_raising_decider_denies_naming_its_position(answer: str) -> None:
    recorder = Recorder()
    script = Script(deciders=("allow", answer))
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(1))
    assert outcome == oracle(script, 1).outcome
    assert outcome.observation.startswith(f"{DENIED}: decider 1 ")
    assert SECRET not in outcome.observation
    assert ("handler", 0) not in recorder.stages()


def test_P4_decider_base_exception_propagates_and_handler_not_entered() -> None:
    class Halt(BaseException):
        pass

    recorder = Recorder()

    async def halt(call: ToolCall) -> None:
        raise Halt()

    policy = ToolPolicy(deciders=[halt])
    with pytest.raises(Halt):
        _execute(recorder.registry().executor(policy=policy), act(1))
    assert recorder.trace == []


@pytest.mark.parametrize(
    ("answer", "sentence"),
    [
        (False, f"{DENIED}: the approver refused the call"),
        ("missing", f"{DENIED}: the call needs approval and no approver is configured"),
        (None, f"{DENIED}: the approver's answer was not True (only True approves)"),
        (1, f"{DENIED}: the approver's answer was not True (only True approves)"),
        ("yes", f"{DENIED}: the approver's answer was not True (only True approves)"),
        ("raise", f"{DENIED}: the approver raised ApproverBoom"),
    ],
)
def test_P5_every_refusal_has_its_fixed_sentence(answer: object, sentence: str) -> None:
    recorder = Recorder()
    script = Script(deciders=("ask", "allow"), approver=answer)
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(1))
    assert outcome.status is ActionStatus.NOT_EXECUTED and outcome.observation_is_synthetic
    assert outcome.observation == sentence
    assert ("handler", 0) not in recorder.stages()


def test_P5_approver_sees_ask_reasons_in_decider_order_and_is_asked_every_time() -> None:
    recorder = Recorder()
    script = Script(deciders=("ask", "allow", "ask"), approver=True)
    executor = recorder.registry().executor(policy=recorder.policy(script))

    async def twice() -> None:
        await executor.execute(act(1))
        await executor.execute(act(1))

    asyncio.run(twice())
    approvals = [seen for stage, _, _, seen in recorder.trace if stage == "approve"]
    assert approvals == [("ask-0", "ask-2"), ("ask-0", "ask-2")]
    assert [stage for stage, _ in recorder.stages()].count("handler") == 2


def test_P5_default_ask_asks_with_no_reasons() -> None:
    recorder = Recorder()
    script = Script(deciders=("abstain",), approver=True, default=Decision.ASK)
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(1))
    assert outcome.status is ActionStatus.EXECUTED
    assert [seen for stage, _, _, seen in recorder.trace if stage == "approve"] == [()]


def test_P6_denial_lists_deny_reasons_in_decider_order_and_stays_short() -> None:
    async def long_deny(call: ToolCall) -> Verdict:
        return Verdict(decision=Decision.DENY, reason="x" * 5000)

    async def short_deny(call: ToolCall) -> Verdict:
        return Verdict(decision=Decision.DENY, reason="second")

    registry = Recorder().registry()
    ordered = _execute(
        registry.executor(policy=ToolPolicy(deciders=[short_deny, _allow, short_deny])), act(1)
    )
    assert ordered.observation == f"{DENIED}: decider 0: second; decider 2: second"
    capped = _execute(registry.executor(policy=ToolPolicy(deciders=[long_deny])), act(1))
    assert len(capped.observation) < 2000
    assert capped.observation.startswith(f"{DENIED}: decider 0: xxx")


def test_P6_a_denial_is_no_stop_in_a_batch() -> None:
    recorder = Recorder()

    async def deny_odd(call: ToolCall) -> Verdict | None:
        await recorder.step("decide", 0, call.arguments["id"], None)
        if call.arguments["id"] % 2:
            return Verdict(decision=Decision.DENY, reason="odd")
        return None

    batch = recorder.registry().batch_executor(policy=ToolPolicy(deciders=[deny_odd]))
    outcomes = asyncio.run(batch.execute_batch([act(i) for i in range(5)]))
    assert [o.status for o in outcomes] == [
        ActionStatus.EXECUTED,
        ActionStatus.NOT_EXECUTED,
        ActionStatus.EXECUTED,
        ActionStatus.NOT_EXECUTED,
        ActionStatus.EXECUTED,
    ]
    assert outcomes[1].observation == f"{DENIED}: decider 0: odd"
    assert sorted(i for stage, _, i, _ in recorder.trace if stage == "handler") == [0, 2, 4]


# --- P7 -------------------------------------------------------------------------------------


def test_P7_every_listener_sees_the_actions_own_call_and_the_handler_a_copy() -> None:
    recorder = Recorder()
    script = Script(deciders=("ask",), approver=True, wrappers=("retry",), post=("replace",))
    action = act(3)
    _execute(recorder.registry().executor(policy=recorder.policy(script)), action)
    assert recorder.calls_seen and all(call is action.tool_call for call in recorder.calls_seen)
    handed = [seen for stage, _, _, seen in recorder.trace if stage == "handler"]
    assert handed == [{"id": 3}, {"id": 3}]


# --- P8 -------------------------------------------------------------------------------------


def test_P8_short_circuit_and_retry_and_non_str_chain() -> None:
    recorder = Recorder()
    short = _execute(
        recorder.registry().executor(policy=recorder.policy(Script(wrappers=("pass", "short")))),
        act(1),
    )
    assert short.observation == "short-1" and ("handler", 0) not in recorder.stages()

    async def nonstr(call: ToolCall, proceed: Any) -> Any:
        await proceed()
        return 42

    with pytest.raises(TypeError, match="tool 't' returned int, not str"):
        _execute(Recorder().registry().executor(policy=ToolPolicy(wrappers=[nonstr])), act(1))

    env = Recorder()
    outcome = _execute(
        env.registry("env").executor(policy=env.policy(Script(wrappers=("retry",)))), act(2)
    )
    assert outcome.status is ActionStatus.ENV_ERROR and outcome.observation == "backend down 2"
    assert env.stages().count(("handler", 0)) == 2


# --- P9 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("swallow", [False, True])
@pytest.mark.parametrize("where", ["decide", "approve", "wrap", "handler", "post"])
def test_P9_cancellation_reaches_through_every_stage(where: str, swallow: bool) -> None:
    recorder = Recorder()
    script = Script(
        deciders=("ask",),
        approver=True,
        wrappers=("swallow", "retry"),
        post=("replace", "replace"),
    )
    full = oracle(script).stages
    gate_at = full.index((where, 0))
    recorder.gates[gate_at] = asyncio.Event()
    if swallow:
        recorder.swallow_at.add(gate_at)
    executor = recorder.registry().executor(policy=recorder.policy(script))
    cancel_at_gate(recorder, gate_at, lambda: executor.execute(act(0)))


# --- P10 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["raise", "nonstr"])
def test_P10_failed_post_processor_withholds_the_observation(kind: str) -> None:
    recorder = Recorder()
    script = Script(post=("replace", kind, "replace"))
    outcome = _execute(recorder.registry().executor(policy=recorder.policy(script)), act(1))
    assert outcome == oracle(script, 1).outcome
    assert outcome.status is ActionStatus.EXECUTED and outcome.observation_is_synthetic
    assert outcome.observation.startswith(f"{WITHHELD}: post-processor 1 ")
    assert SECRET not in outcome.observation and "out-1" not in outcome.observation
    assert ("post", 2) not in recorder.stages()


@pytest.mark.parametrize("handler", ["env"])
def test_P10_env_error_and_denial_are_never_post_processed(handler: str) -> None:
    recorder = Recorder()
    outcome = _execute(
        recorder.registry(handler).executor(policy=recorder.policy(Script(post=("replace",)))),
        act(1),
    )
    assert outcome.status is ActionStatus.ENV_ERROR and ("post", 0) not in recorder.stages()
    denied = Recorder()
    _execute(
        denied.registry().executor(
            policy=denied.policy(Script(deciders=("deny",), post=("replace",)))
        ),
        act(1),
    )
    assert ("post", 0) not in denied.stages()


def test_P10_handler_exception_is_post_processed() -> None:
    recorder = Recorder()
    script = Script(post=("replace",))
    outcome = _execute(recorder.registry("raise").executor(policy=recorder.policy(script)), act(1))
    assert outcome.observation == "ValueError: bad 1|p0"


# --- no policy / ToolPolicy() is exactly no policy --------------------------------------------


def test_P_inert_policy_keeps_the_plain_path() -> None:
    registry = ToolRegistry(
        [ToolSpec(name="t", description="", parameters={}, handler=Recorder().handler("return"))]
    )
    for policy in (None, ToolPolicy()):
        executor = registry.executor(policy=policy)
        assert executor._policy is None
        assert _execute(executor, act(1)) == _execute(registry.executor(), act(1))


# --- the example ------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")
def test_example_policy_denies_asks_redacts_and_withholds() -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "examples" / "policy.py"
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    out = result.stdout
    lines = out.splitlines()
    # P10: neither the redacted output nor the failed redaction's message leaks the key.
    assert "sk-live-4f9a2c7e1b" not in out
    assert "     history: DEBUG=1 API_KEY=[redacted] REGION=eu-west-1" in lines
    assert (
        "     outcome: EXECUTED: the observation was withheld: post-processor 0 raised RuntimeError"
        in lines
    )
    # P3: the deny rule wins over the ASK, so the approver is asked about the two /tmp deletes
    # only (P5), in model order (P11), and only its True runs the handler.
    asked = [line for line in lines if "approver asked about" in line]
    assert len(asked) == 2 and "/tmp/cache.txt" in asked[0] and "/tmp/other.txt" in asked[1]
    assert (
        "     outcome: NOT_EXECUTED: denied by the tool policy: decider 0: deletes are limited "
        "to /tmp" in lines
    )
    assert "     outcome: EXECUTED: deleted /tmp/cache.txt" in lines
    assert (
        "     outcome: NOT_EXECUTED: denied by the tool policy: the approver refused the call"
        in lines
    )
    # N1: the model sees the one configured sentence for every NOT_EXECUTED call.
    refused = "The action was not executed: the call was invalid or the tool policy refused it."
    assert lines.count(f"     history: {refused}") == 3
