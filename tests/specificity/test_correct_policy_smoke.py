"""Light smoke tests of the six independent policy executors (contract section 11).

These only show each executor does what it was written to do on a few examples per clause; the
conformance kit is what judges them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionExecutor,
    ActionStatus,
    Decision,
    ToolCall,
    ToolEnvironmentError,
    ToolPolicy,
    ToolRegistry,
    ToolSpec,
    Verdict,
)

from .correct_policy import FACTORIES

Factory = Callable[[ToolRegistry, ToolPolicy | None], ActionExecutor]
NAMES = sorted(FACTORIES)


class Tools:
    """A registry whose handlers record what they received."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.release = asyncio.Event()
        self.registry = ToolRegistry(
            [
                self._spec("echo", self._echo),
                self._spec("boom", self._boom),
                self._spec("env", self._env),
                self._spec("number", self._number),
                self._spec("slow", self._slow),
            ]
        )

    @staticmethod
    def _spec(name: str, handler: Callable[[dict[str, Any]], Awaitable[Any]]) -> ToolSpec:
        return ToolSpec(
            name=name,
            description=name,
            parameters={"type": "object", "properties": {"x": {"type": "string"}}},
            handler=handler,
        )

    async def _echo(self, args: dict[str, Any]) -> str:
        self.calls.append(("echo", args))
        return f"echo {args.get('x', '')}"

    async def _boom(self, args: dict[str, Any]) -> str:
        self.calls.append(("boom", args))
        raise RuntimeError("secret-in-message")

    async def _env(self, args: dict[str, Any]) -> str:
        self.calls.append(("env", args))
        raise ToolEnvironmentError("backend down")

    async def _number(self, args: dict[str, Any]) -> Any:
        self.calls.append(("number", args))
        return 42

    async def _slow(self, args: dict[str, Any]) -> str:
        self.calls.append(("slow", args))
        await self.release.wait()
        return "slow done"


def action(name: str = "echo", **arguments: Any) -> Action:
    return Action(tool_call=ToolCall(name=name, arguments=arguments))


def verdict(decision: Decision, reason: str = "") -> Callable[[ToolCall], Awaitable[Verdict]]:
    async def decide(call: ToolCall) -> Verdict:
        return Verdict(decision=decision, reason=reason)

    return decide


async def abstain(call: ToolCall) -> None:
    return None


def run(factory: Factory, policy: ToolPolicy | None, act: Action, tools: Tools) -> Any:
    return asyncio.run(factory(tools.registry, policy).execute(act))


@pytest.fixture(params=NAMES)
def factory(request: pytest.FixtureRequest) -> Factory:
    return FACTORIES[request.param]


def test_E5_E3_E4_E9_without_policy(factory: Factory) -> None:
    tools = Tools()
    ok = run(factory, None, action(x="hi"), tools)
    assert (ok.status, ok.observation, ok.observation_is_synthetic) == (
        ActionStatus.EXECUTED,
        "echo hi",
        False,
    )
    env = run(factory, ToolPolicy(), action("env"), tools)
    assert (env.status, env.observation) == (ActionStatus.ENV_ERROR, "backend down")
    boom = run(factory, None, action("boom"), tools)
    assert boom.observation == "RuntimeError: secret-in-message"
    with pytest.raises(TypeError, match="number"):
        run(factory, None, action("number"), tools)


def test_P1_rejected_call_never_reaches_policy(factory: Factory) -> None:
    tools = Tools()
    seen: list[str] = []

    async def decider(call: ToolCall) -> None:
        seen.append(call.name)

    policy = ToolPolicy(deciders=(decider,))
    out = run(factory, policy, action("nope"), tools)
    code = asyncio.run(factory(tools.registry, policy).execute(Action(code="print(1)")))
    assert out.status is code.status is ActionStatus.NOT_EXECUTED
    assert out.observation_is_synthetic and code.observation_is_synthetic
    assert seen == [] and tools.calls == []


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_P3_deny_wins_in_any_order(factory: Factory, order: tuple[int, ...]) -> None:
    tools = Tools()
    deciders = [
        verdict(Decision.ALLOW, "fine"),
        verdict(Decision.DENY, "too risky"),
        verdict(Decision.ASK, "check"),
        abstain,
    ]

    async def approve(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        return True

    policy = ToolPolicy(deciders=tuple(deciders[i] for i in order), approver=approve)
    out = run(factory, policy, action(x="a"), tools)
    assert out.status is ActionStatus.NOT_EXECUTED and out.observation_is_synthetic
    assert "too risky" in out.observation
    assert tools.calls == []


@given(st.lists(st.sampled_from([None, *Decision]), max_size=5), st.sampled_from(list(Decision)))
@settings(max_examples=60, deadline=None)
def test_P3_strictest_wins_over_any_answers(
    answers: list[Decision | None], default: Decision
) -> None:
    combined = (
        Decision.DENY
        if Decision.DENY in answers
        else Decision.ASK
        if Decision.ASK in answers
        else Decision.ALLOW
        if Decision.ALLOW in answers
        else default
    )
    deciders = [abstain if a is None else verdict(a, "r") for a in answers]

    async def approve(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        return True

    for name in NAMES:
        tools = Tools()
        policy = ToolPolicy(deciders=tuple(deciders), approver=approve, default=default)
        out = run(FACTORIES[name], policy, action(x="z"), tools)
        runs = combined is not Decision.DENY
        assert (out.status is ActionStatus.EXECUTED) is runs, name
        assert len(tools.calls) == int(runs), name


@pytest.mark.parametrize("answer", [None, 1, "yes", False])
def test_P5_approver_that_does_not_return_True_denies(factory: Factory, answer: Any) -> None:
    tools = Tools()
    asked: list[tuple[str, ...]] = []

    async def approver(call: ToolCall, reasons: tuple[str, ...]) -> Any:
        asked.append(reasons)
        return answer

    deciders = [verdict(Decision.ASK, "first"), abstain, verdict(Decision.ASK, "second")]
    out = run(factory, ToolPolicy(deciders=tuple(deciders), approver=approver), action(), tools)
    assert out.status is ActionStatus.NOT_EXECUTED and out.observation_is_synthetic
    assert asked == [("first", "second")] and tools.calls == []


def test_P5_no_approver_denies_and_True_grants(factory: Factory) -> None:
    tools = Tools()
    ask = (verdict(Decision.ASK, "why"),)
    denied = run(factory, ToolPolicy(deciders=ask), action(), tools)
    assert denied.status is ActionStatus.NOT_EXECUTED and tools.calls == []

    async def approver(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        raise ValueError("approver-secret")

    failed = run(factory, ToolPolicy(deciders=ask, approver=approver), action(), tools)
    assert failed.status is ActionStatus.NOT_EXECUTED
    assert "ValueError" in failed.observation and "approver-secret" not in failed.observation

    async def yes(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        return True

    out = run(
        factory, ToolPolicy(deciders=ask, approver=yes, default=Decision.DENY), action(), tools
    )
    assert out.status is ActionStatus.EXECUTED and len(tools.calls) == 1


@pytest.mark.parametrize("bad", ["raise", "bool", "decision"])
def test_P4_failing_decider_denies_without_its_message(factory: Factory, bad: str) -> None:
    tools = Tools()

    async def decider(call: ToolCall) -> Any:
        if bad == "raise":
            raise KeyError("decider-secret")
        return True if bad == "bool" else Decision.ALLOW

    policy = ToolPolicy(deciders=(abstain, decider, verdict(Decision.ALLOW)))
    out = run(factory, policy, action(), tools)
    assert out.status is ActionStatus.NOT_EXECUTED and tools.calls == []
    assert "1" in out.observation and "decider-secret" not in out.observation
    if bad == "raise":
        assert "KeyError" in out.observation


def test_P7_P8_wrappers_nest_outermost_first_and_see_the_call(factory: Factory) -> None:
    tools = Tools()
    act = action(x="v")
    log: list[str] = []

    def wrapper(tag: str, times: int) -> Any:
        async def wrap(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
            assert call is act.tool_call
            log.append(f"{tag}>")
            result = ""
            for _ in range(times):
                result = await proceed()
            log.append(f"<{tag}")
            return f"{tag}({result})"

        return wrap

    policy = ToolPolicy(wrappers=(wrapper("a", 1), wrapper("b", 2)))
    out = run(factory, policy, act, tools)
    assert out.observation == "a(b(echo v))" and not out.observation_is_synthetic
    assert log == ["a>", "b>", "<b", "<a"]
    assert tools.calls == [("echo", {"x": "v"}), ("echo", {"x": "v"})]


def test_P9_wrapper_swallowing_cancellation_still_cancels(factory: Factory) -> None:
    tools = Tools()
    post_calls: list[str] = []

    async def swallow(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        try:
            return await proceed()
        except asyncio.CancelledError:
            return "pretend success"

    async def post(call: ToolCall, text: str) -> str:
        post_calls.append(text)
        return text

    async def scenario() -> None:
        executor = factory(tools.registry, ToolPolicy(wrappers=(swallow,), post=(post,)))
        task = asyncio.ensure_future(executor.execute(action("slow")))
        while not tools.calls:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert post_calls == [] and len(tools.calls) == 1


def test_P9_cancel_during_decider_that_swallows_never_enters(factory: Factory) -> None:
    tools = Tools()
    started = asyncio.Event()

    async def stubborn(call: ToolCall) -> Verdict:
        started.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)
        return Verdict(decision=Decision.ALLOW)

    async def scenario() -> None:
        executor = factory(tools.registry, ToolPolicy(deciders=(stubborn,)))
        task = asyncio.ensure_future(executor.execute(action()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert tools.calls == []


def test_P10_failing_post_processor_withholds_the_observation(factory: Factory) -> None:
    tools = Tools()
    later: list[str] = []

    async def redact(call: ToolCall, text: str) -> str:
        return text.replace("hi", "**")

    async def broken(call: ToolCall, text: str) -> str:
        raise ValueError(text)

    async def after(call: ToolCall, text: str) -> str:
        later.append(text)
        return text

    out = run(factory, ToolPolicy(post=(redact, broken, after)), action(x="hi"), tools)
    assert out.status is ActionStatus.EXECUTED and out.observation_is_synthetic
    assert "1" in out.observation and "ValueError" in out.observation
    assert "echo" not in out.observation and later == []
    redacted = run(factory, ToolPolicy(post=(redact, after)), action(x="hi"), tools)
    assert (redacted.observation, redacted.observation_is_synthetic) == ("echo **", False)


def test_P10_env_error_and_denied_calls_are_never_post_processed(factory: Factory) -> None:
    tools = Tools()
    seen: list[str] = []

    async def post(call: ToolCall, text: str) -> str:
        seen.append(text)
        return "forged"

    env = run(factory, ToolPolicy(post=(post,)), action("env"), tools)
    assert (env.status, env.observation) == (ActionStatus.ENV_ERROR, "backend down")
    boom = run(factory, ToolPolicy(post=(post,)), action("boom"), tools)
    assert (boom.status, boom.observation) == (ActionStatus.EXECUTED, "forged")
    assert seen == ["RuntimeError: secret-in-message"]


class Halt(BaseException):
    """A BaseException that is not an Exception and not one asyncio treats specially."""


@pytest.mark.parametrize("where", ["decider", "approver", "wrapper", "post"])
def test_P4_E6_base_exception_of_a_listener_propagates_as_the_same_object(
    factory: Factory, where: str
) -> None:
    tools = Tools()
    halt = Halt()

    async def decider(call: ToolCall) -> Verdict:
        if where == "decider":
            raise halt
        return Verdict(decision=Decision.ASK, reason="r")

    async def approver(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        if where == "approver":
            raise halt
        return True

    async def wrapper(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        if where == "wrapper":
            raise halt
        return await proceed()

    async def post(call: ToolCall, text: str) -> str:
        raise halt

    policy = ToolPolicy(deciders=(decider,), approver=approver, wrappers=(wrapper,), post=(post,))
    with pytest.raises(Halt) as caught:
        run(factory, policy, action(), tools)
    assert caught.value is halt
    assert len(tools.calls) == int(where == "post")


def test_P5_approval_is_asked_once_per_call_never_cached(factory: Factory) -> None:
    tools = Tools()
    asked: list[ToolCall] = []

    async def approver(call: ToolCall, reasons: tuple[str, ...]) -> bool:
        asked.append(call)
        return True

    executor = factory(tools.registry, ToolPolicy(default=Decision.ASK, approver=approver))
    first, second = action(x="same"), action(x="same")

    async def both() -> None:
        await executor.execute(first)
        await executor.execute(second)

    asyncio.run(both())
    assert asked == [first.tool_call, second.tool_call] and len(tools.calls) == 2
    assert asked[0] is first.tool_call and asked[1] is second.tool_call


def test_P6_denial_lists_deny_reasons_in_decider_order(factory: Factory) -> None:
    tools = Tools()
    deciders = (verdict(Decision.DENY, "alpha-reason"), verdict(Decision.DENY, "beta-reason"))
    out = run(factory, ToolPolicy(deciders=deciders), action(), tools)
    assert out.status is ActionStatus.NOT_EXECUTED and out.observation_is_synthetic
    # P3 lets a sequential executor stop at the first DENY in its own fixed order.
    assert "alpha-reason" in out.observation or "beta-reason" in out.observation
    if "alpha-reason" in out.observation and "beta-reason" in out.observation:
        assert out.observation.index("alpha-reason") < out.observation.index("beta-reason")
    long = run(factory, ToolPolicy(deciders=(verdict(Decision.DENY, "x" * 5000),)), action(), tools)
    assert len(long.observation) < 2000 and tools.calls == []


def test_P7_E13_each_proceed_gets_a_fresh_plain_copy(factory: Factory) -> None:
    received: list[Any] = []

    async def mutate(args: dict[str, Any]) -> str:
        received.append(args)
        args["x"] = "changed"
        args["extra"] = 1
        return "ok"

    async def twice(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        await proceed()
        return await proceed()

    registry = ToolRegistry([ToolSpec(name="m", description="m", parameters={}, handler=mutate)])
    act = action("m", x="orig")
    out = asyncio.run(factory(registry, ToolPolicy(wrappers=(twice,))).execute(act))
    assert out.observation == "ok" and len(received) == 2
    assert received[0] is not received[1] and type(received[1]) is dict
    assert act.tool_call is not None and dict(act.tool_call.arguments) == {"x": "orig"}


def test_P9_stubborn_handler_is_awaited_through_repeated_cancels(factory: Factory) -> None:
    tools = Tools()
    finished: list[str] = []

    async def stubborn(args: dict[str, Any]) -> str:
        tools.calls.append(("stubborn", args))
        for _ in range(3):
            with contextlib.suppress(asyncio.CancelledError):
                await tools.release.wait()
        finished.append("done")
        return "late"

    registry = ToolRegistry([ToolSpec(name="s", description="s", parameters={}, handler=stubborn)])

    async def scenario() -> None:
        task = asyncio.ensure_future(factory(registry, ToolPolicy()).execute(action("s")))
        while not tools.calls:
            await asyncio.sleep(0)
        for _ in range(2):
            task.cancel()
            for _ in range(5):
                await asyncio.sleep(0)
            assert not task.done()
        tools.release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished == ["done"]

    asyncio.run(scenario())


def test_P9_proceed_called_after_cancellation_does_not_enter(factory: Factory) -> None:
    entries: list[int] = []
    refused: list[str] = []

    async def first_hangs(args: dict[str, Any]) -> str:
        entries.append(len(entries))
        if len(entries) == 1:
            await asyncio.Event().wait()
        return "a wrongly re-entered handler returns at once instead of hanging the test"

    registry = ToolRegistry(
        [ToolSpec(name="h", description="h", parameters={}, handler=first_hangs)]
    )

    async def retry_on_cancel(call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        try:
            return await proceed()
        except asyncio.CancelledError:
            try:
                return await proceed()
            except asyncio.CancelledError:
                refused.append("again")
                return "made up"

    async def scenario() -> None:
        executor = factory(registry, ToolPolicy(wrappers=(retry_on_cancel,)))
        task = asyncio.ensure_future(executor.execute(action("h")))
        while not entries:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert refused == ["again"] and entries == [0]


DECIDER_KINDS = ["abstain", "allow", "ask", "deny", "raise", "bad"]
APPROVER_KINDS = ["none", "true", "false", "one", "raise"]
WRAPPER_KINDS = ["pass", "twice", "answer", "raise_env"]
POST_KINDS = ["upper", "raise", "not_str"]


def build_policy(
    deciders: list[str], approver: str, wrappers: list[str], post: list[str], default: Decision
) -> ToolPolicy:
    async def decider_of(kind: str, call: ToolCall) -> Any:
        if kind == "raise":
            raise LookupError("msg-7 from decider")
        table: dict[str, Any] = {
            "abstain": None,
            "bad": "yes",
            "allow": Verdict(decision=Decision.ALLOW, reason="ok"),
            "ask": Verdict(decision=Decision.ASK, reason="asking"),
            "deny": Verdict(decision=Decision.DENY, reason="denying"),
        }
        return table[kind]

    async def approve(call: ToolCall, reasons: tuple[str, ...]) -> Any:
        if approver == "raise":
            raise OSError("msg-7 from approver")
        return {"true": True, "false": False, "one": 1}[approver]

    async def wrapper_of(kind: str, call: ToolCall, proceed: Callable[[], Awaitable[str]]) -> str:
        if kind == "answer":
            return "cached"
        if kind == "raise_env":
            raise ToolEnvironmentError("wrapper env")
        first = await proceed()
        return await proceed() if kind == "twice" else first

    async def post_of(kind: str, call: ToolCall, text: str) -> Any:
        if kind == "raise":
            raise ValueError(text)
        return text.upper() if kind == "upper" else 7

    return ToolPolicy(
        deciders=tuple(functools.partial(decider_of, k) for k in deciders),
        approver=None if approver == "none" else approve,
        wrappers=tuple(functools.partial(wrapper_of, k) for k in wrappers),
        post=tuple(functools.partial(post_of, k) for k in post),
        default=default,
    )


@given(
    st.lists(st.sampled_from(DECIDER_KINDS), max_size=4),
    st.sampled_from(APPROVER_KINDS),
    st.lists(st.sampled_from(WRAPPER_KINDS), max_size=2),
    st.lists(st.sampled_from(POST_KINDS), max_size=2),
    st.sampled_from(list(Decision)),
    st.sampled_from(["echo", "boom", "env"]),
)
@settings(max_examples=150, deadline=None)
def test_P1_P12_the_six_agree_on_everything_the_contract_fixes(
    deciders: list[str],
    approver: str,
    wrappers: list[str],
    post: list[str],
    default: Decision,
    tool: str,
) -> None:
    """Differential: statuses, flags, handler entries and non-synthetic texts are not a choice."""
    seen: dict[str, tuple[Any, ...]] = {}
    for name in NAMES:
        tools = Tools()
        policy = build_policy(deciders, approver, wrappers, post, default)
        out = run(FACTORIES[name], policy, action(tool, x="zqx-arg"), tools)
        text = out.observation if not out.observation_is_synthetic else None
        seen[name] = (out.status, out.observation_is_synthetic, len(tools.calls), text)
        assert len(out.observation) < 2000 or not out.observation_is_synthetic
        if out.observation_is_synthetic:  # P4, P5, P10: never a listener's message or the text
            assert "msg-7" not in out.observation and "zqx" not in out.observation.lower()
    assert len(set(seen.values())) == 1, seen


def test_P3_no_decider_is_cancelled_because_another_denied(factory: Factory) -> None:
    tools = Tools()
    called: list[int] = []
    finished: list[int] = []

    def slow(position: int, decision: Decision) -> Callable[[ToolCall], Awaitable[Verdict]]:
        async def decide(call: ToolCall) -> Verdict:
            called.append(position)
            for _ in range(position * 3):
                await asyncio.sleep(0)
            finished.append(position)
            return Verdict(decision=decision, reason=f"r{position}")

        return decide

    deciders = (slow(0, Decision.DENY), slow(1, Decision.ALLOW), slow(2, Decision.ASK))
    out = run(factory, ToolPolicy(deciders=deciders), action(), tools)
    assert out.status is ActionStatus.NOT_EXECUTED and "r0" in out.observation
    assert called and sorted(called) == sorted(finished) and tools.calls == []
