"""The policy subject's catalog rows: contract section 11 (tool-call policy, P)."""

from __future__ import annotations

from conformance._core.catalog import Clause, rows_from_text

__all__ = ["ROWS"]

# 11. Tool-call policy, one row per clause: "ID level: title", then the indented summary.
# Written so that a runtime can be built from docs/contract.md alone: each summary says what
# the kit checks and which words are the executor's own.
_TEXT = """
P1 core: A rejected call never reaches the policy
    For a call rejected by E1 (no tool call) or E2 (validate rejects it) no decider, approver,
    wrapper or post-processor is called, nothing is offered for approval, and the outcome is
    exactly the one the same factory gives with ToolPolicy() (status, flags, observation).

P2 core: Stages run in order: deciders, approver, wrappers and handler, post-processors
    Per accepted call: every decider has answered before the approver is called; the approver
    is called only when the combined decision is ASK; no wrapper or handler starts before the
    call is allowed (every deciding stage ended); post-processors run only after the chain gave
    an EXECUTED outcome, each exactly once, in order, each starting after the previous one
    ended. No listener of a call is called after execute returned that call's outcome.

P3 core: Strictest wins, whatever the order of deciders
    DENY if any decider answers DENY, else ASK if any answers ASK, else ALLOW if any answers
    ALLOW, else the policy's default. Deciders are awaited one after another in some fixed
    order (which may stop right after the first DENY) or concurrently (then all are awaited to
    their answer: none is cancelled because another denied); otherwise each is called exactly
    once. Whether the handler runs, the status and the flags are the same for every order of
    deciders and every order in which they finish.

P4 core: A decider's garbage answer or exception denies, naming its position
    A decider answer that is neither a Verdict nor None (True, a str, a bare Decision), or a
    decider raising an Exception, counts as DENY: NOT_EXECUTED, synthetic, handler not entered;
    the observation contains the decider's position as a decimal number counted from 0 and,
    for an exception, the exception's class name, never its message. A BaseException that is
    not an Exception propagates from execute as the very same object; the handler is not
    entered.

P5 core: The approver is asked once per call; only True grants; four fixed refusals
    When the combined decision is ASK the approver is called exactly once, with the call and
    the ASK verdicts' reasons (a tuple, in decider order). Only a return value that is True
    allows the call. Refusals are NOT_EXECUTED, synthetic, handler not entered, each with its
    own fixed sentence (the same for every call and every reasons): False; no approver
    configured; any other value (None, 1, "yes" share one sentence); an Exception (the
    sentence names its class, never its message). The four sentences differ from each other.
    Approvals are never cached: the same call executed twice is asked twice.

P6 core: A denial is a fixed sentence plus the DENY reasons, and no stop
    A call not allowed because of DENY verdicts is NOT_EXECUTED, synthetic, its handler not
    entered and no wrapper or post-processor called; its observation is a fixed sentence of the
    executor's own followed by every DENY verdict's reason in the order of deciders, shortened
    so that it stays under 2,000 characters. A later allowed call on the same executor runs
    normally.

P7 core: One snapshot: listeners see the action's ToolCall, the handler a plain copy
    Every decider, the approver, every wrapper and every post-processor receives the very
    ToolCall object of the action (identity), and each handler entry receives its own plain
    dict equal to the call's arguments: what the handler mutates reaches neither the ToolCall
    nor a later entry. Only the handler of the call's own tool runs.

P8 core: Wrappers nest with wrappers[0] outermost and map like a handler
    wrappers[0] is called first and ends last; proceed() runs the next wrapper or, past the
    last, enters the handler once per proceed() (a retrying wrapper enters it again); a wrapper
    returning without proceed() answers for the handler. The chain's result maps as a
    handler's: a str -> EXECUTED with that text, ToolEnvironmentError -> ENV_ERROR str(exc),
    another Exception -> EXECUTED "<Class>: <message>", a non-str -> execute raises TypeError
    naming the tool.

P9 core: Nothing cuts cancellation
    Once the task awaiting execute is cancelled at any stage: the listener or handler then
    running is sent the cancellation and awaited until it ends; no handler is entered and no
    post-processor called afterwards; execute raises CancelledError even when a listener
    swallows the cancellation and answers (a decider's ALLOW, the approver's True, a wrapper's
    or post-processor's string) or turns it into an ordinary exception. (Whether a further
    wrapper may still be called is not judged: its proceed() must not enter the handler.)

P10 core: Post-processing reshapes, never forges, never leaks
    Post-processors run only on EXECUTED outcomes, in order, each getting the previous one's
    result; the outcome keeps its status and flags and takes the last result. A post-processor
    raising an Exception or returning a non-str gives EXECUTED, synthetic, with a fixed
    sentence of the executor's own containing the post-processor's position (counted from 0)
    and, for an exception, its class name, never its message nor the unprocessed observation;
    later post-processors are not called. ENV_ERROR and NOT_EXECUTED are never post-processed.

P11 core: In a batch, deciding is per call, in model order
    In a batch, the deciding stages (deciders and approver) of accepted calls never overlap and
    run in model order: those of call j start only after those of every earlier accepted call
    ended. A call's deciding ends before started(i); a call not allowed is NOT_EXECUTED,
    synthetic, never journalled as started and never entered, and is no stop: every allowed
    call after it runs. A rejected call reaches no listener. Checked on a batch policy factory
    factory(registry, max_concurrency=N, policy=...), which is also checked on P1-P10 and P12
    through one-call batches; for an action-executor factory P11 is reported skipped.

P12 core: Timing never decides
    Outcomes depend only on the call, the listeners' answers and what the handler did, never
    on how long a listener took or in which order concurrent listeners finished: the same
    stack gives the same outcome (observation included) under every release order.
"""

ROWS: tuple[Clause, ...] = rows_from_text("policy", _TEXT)
