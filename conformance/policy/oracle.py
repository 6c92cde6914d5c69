"""The sequential oracle: what section 11 requires of one scripted stack, computed one step at
a time without asyncio. It fixes what the contract fixes (the decision, whether and how often
the handler runs, E3-E5 texts, post-processed texts, which listeners run) and names, without
wording it, what the contract leaves to the executor (its denial and refusal sentences)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from conformance.policy.harness import DENYING, Stack
from polyloop import ActionStatus

__all__ = ["Expected", "decision", "expect"]


@dataclass(frozen=True, kw_only=True)
class Expected:
    kind: str
    """``rejected``, ``halt`` (a decider's BaseException), ``denied`` (P6), ``decider-fault``
    (P4), ``refused`` (P5), ``executed`` (E3-E5 through the chain), ``withheld`` (P10),
    ``nonstr`` (E9: execute raises TypeError)."""
    decision: str = ""
    status: ActionStatus | None = None
    synthetic: bool | None = None
    observation: str | None = None
    """The observation the contract fixes (None: the executor's own words)."""
    deny_reasons: tuple[str, ...] = ()
    asks: tuple[str, ...] = ()
    refusal: str = ""
    """``false``, ``missing``, ``other`` or ``raise`` (P5)."""
    fault: int | None = None
    """The faulty decider's (P4) or post-processor's (P10) position."""
    fault_class: str | None = None
    entries: int = 0
    """How many times the handler is entered."""
    posts: int = 0
    """How many post-processors are called."""
    post_inputs: tuple[str, ...] = ()
    chain_ran: bool = False


def decision(stack: Stack) -> str:
    """P3's combination of the scripted answers (P4: garbage and exceptions count as DENY)."""
    kinds = stack.deciders
    if any(k in DENYING for k in kinds):
        return "DENY"
    if "ask" in kinds:
        return "ASK"
    if "allow" in kinds:
        return "ALLOW"
    return stack.default


_Result = tuple[str, object]


def _chain(stack: Stack) -> tuple[_Result, int]:
    entries = 0
    wrappers = stack.wrappers

    def handler() -> _Result:
        nonlocal entries
        entries += 1
        ident = stack.ident
        if stack.handler == "raise":
            return ("exc", ("ValueError", f"handler failed for {ident}"))
        if stack.handler == "env":
            return ("exc", ("ToolEnvironmentError", f"backend down for {ident}"))
        if stack.handler == "nonstr":
            return ("ok", 42)
        return ("ok", f"handler-out:{ident}")

    def at(position: int) -> _Result:
        if position == len(wrappers):
            return handler()
        kind = wrappers[position]
        if kind == "short":
            return ("ok", f"short-{position}")
        if kind == "shortnonstr":
            return ("ok", 7)
        if kind == "raise":
            return ("exc", ("WrapperFault", f"wrapper-fault-{position}"))
        first = at(position + 1)
        if kind == "retry" and first[0] == "exc":
            return at(position + 1)
        if kind == "twice" and first[0] == "ok":
            return at(position + 1)
        return first

    return at(0), entries


def _after_chain(stack: Stack, decided: str) -> Expected:
    (how, value), entries = _chain(stack)
    ran = Expected(kind="executed", decision=decided, entries=entries, chain_ran=True)
    if how == "ok" and not isinstance(value, str):
        return replace(ran, kind="nonstr")
    if how == "exc":
        assert isinstance(value, tuple)
        name, message = str(value[0]), str(value[1])
        if name == "ToolEnvironmentError":
            return replace(ran, status=ActionStatus.ENV_ERROR, synthetic=False, observation=message)
        value = f"{name}: {message}"
    observation = str(value)
    inputs: list[str] = []
    for position, kind in enumerate(stack.post):
        inputs.append(observation)
        if kind in ("raise", "nonstr"):
            return replace(
                ran,
                kind="withheld",
                status=ActionStatus.EXECUTED,
                synthetic=True,
                fault=position,
                fault_class="PostFault" if kind == "raise" else None,
                posts=position + 1,
                post_inputs=tuple(inputs),
            )
        observation = f"{observation}|p{position}"
    return replace(
        ran,
        status=ActionStatus.EXECUTED,
        synthetic=False,
        observation=observation,
        posts=len(stack.post),
        post_inputs=tuple(inputs),
    )


def _refused(stack: Stack, refusal: str, asks: tuple[str, ...]) -> Expected:
    return Expected(
        kind="refused",
        decision="ASK",
        status=ActionStatus.NOT_EXECUTED,
        synthetic=True,
        refusal=refusal,
        asks=asks,
        fault_class="ApproverFault" if refusal == "raise" else None,
    )


def expect(stack: Stack) -> Expected:
    """What section 11 requires of `stack` (one call, no cancellation)."""
    if stack.call != "valid":
        return Expected(kind="rejected", status=ActionStatus.NOT_EXECUTED, synthetic=True)
    kinds = stack.deciders
    if "halt" in kinds:
        return Expected(kind="halt")
    decided = decision(stack)
    if decided == "DENY":
        faults = [i for i, k in enumerate(kinds) if k in DENYING and k != "deny"]
        if faults:
            position = faults[0]
            return Expected(
                kind="decider-fault",
                decision=decided,
                status=ActionStatus.NOT_EXECUTED,
                synthetic=True,
                fault=position,
                fault_class="DeciderFault" if kinds[position] == "raise" else None,
            )
        return Expected(
            kind="denied",
            decision=decided,
            status=ActionStatus.NOT_EXECUTED,
            synthetic=True,
            deny_reasons=tuple(stack.reason(i) for i, k in enumerate(kinds) if k == "deny"),
        )
    if decided == "ASK":
        asks = tuple(stack.reason(i) for i, k in enumerate(kinds) if k == "ask")
        approver = stack.approver
        if approver != "true":
            refusal = approver if approver in ("false", "missing", "raise") else "other"
            return _refused(stack, refusal, asks)
        granted = _after_chain(stack, "ASK")
        return replace(granted, asks=asks)
    return _after_chain(stack, decided)
