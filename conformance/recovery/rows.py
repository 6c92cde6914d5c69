"""The recovery subject's catalog rows: contract section 12 (crash recovery, J)."""

from __future__ import annotations

from conformance._core.catalog import Clause, rows_from_text

__all__ = ["ROWS"]

# 12. Crash recovery, one row per clause: "ID level: title", then the indented summary.
_TEXT = """
J1 core: The header is durable before any started record; resume reads the batch from it
    Before any started record the journal durably holds the header: every call's action (tool
    name and arguments, or code) and its spec's replay_policy. Resuming never asks the model
    again and never takes the calls from anywhere but the journal (it checks the given ones
    against it, J9); a resume of a batch it journaled itself never fails for want of it.

J2 core: started(i) is durable before handler i is entered
    started(i) is durable before handler i is entered; if it cannot be made durable, call i is
    not entered and the batch stops as a journal fault (B16). So a call without a started
    record was never entered, and a call that was entered is, after a crash, committed or in
    doubt: never answered as not started.

J3 core: A committed call is never entered again; its recorded outcome is returned exactly
    Once committed(i) is durable, no lifetime enters call i again, and every resume returns its
    recorded outcome exactly: status, observation and every flag.

J4 core: An in-doubt SAFE call is entered again as a fresh start, else interrupted
    A call with started and no committed record whose policy (J6) is SAFE is entered again,
    after a new durable started record (J2), unless the batch stops first or J13's bound is
    reached: then it is committed interrupted (ENV_ERROR, synthetic, "interrupted while
    running; its effects are unknown" in the executor's words), never NOT_EXECUTED.

J5 core: An in-doubt NEVER call, or a recorded ENV_ERROR, makes the resume enter nothing
    If any in-doubt call's policy is NEVER, or the recorded prefix holds an ENV_ERROR, the
    resume enters nothing and commits every uncommitted call in model order: in-doubt calls
    interrupted, rejected calls their E1/E2 outcome, calls not started NOT_EXECUTED as B13
    says (naming the lowest-indexed ENV_ERROR call). An in-doubt NEVER call is never entered
    again in any lifetime; a crash between started(i) and the handler's entry lands here too.

J6 core: The stricter of the recorded and the current policy governs
    An in-doubt call's policy is NEVER if the header recorded NEVER or the registry's current
    spec says NEVER; a tool no longer registered counts as NEVER. A current SAFE never loosens
    a recorded NEVER.

J7 core: Otherwise the resume gives what a crash-free batch of the uncommitted calls gives
    When every in-doubt call is SAFE, the resume answers the uncommitted calls as a crash-free
    batch of them would under sections 10 and 11 (deciders and approver asked again), with
    J4's rule for in-doubt calls, after the recorded prefix; commits continue in model order
    and no index is committed twice.

J8 core: Every call is answered
    When the runtime returns, every index has exactly one committed outcome and the result has
    len(actions) ActionOutcome, one per call: no tool_use is left without its tool_result.

J9 core: A batch id resumes only the batch it recorded
    Resuming a batch id whose header records other calls (another count, tool name, arguments
    or code) raises ValueError naming the first differing index, enters nothing and writes
    nothing.

J10 core: A damaged journal is refused, never skipped or truncated
    A record is wholly there or absent after a crash and carries its own check (e.g. a CRC-32
    of its encoded content, verified on every read). An unreadable file or a record that fails
    its check raises an error naming the store and the batch and enters nothing; a file
    store's torn last record with nothing valid after it is a record never written.

J11 core: Resuming is idempotent, even when it crashes
    Each decision of a resume (J4's new started record, J5's interrupted commits) is durable
    before the resume acts on it: a crash at any point of a resume followed by another resume
    gives the outcomes and entry bounds of one uninterrupted resume, and resuming a batch
    whose calls are all committed enters nothing and returns the recorded outcomes.

J12 strict: Durable means fsynced
    The records of J1, J2, J5 and J11 are fsynced before the action they protect (SQLite: WAL
    with synchronous=FULL on every connection; a file store: fsync of the file, and of its
    directory when the file is created); a failed fsync is a journal fault (B16), never
    retried and ignored.

J13 strict: A crash-looping SAFE call is bounded by max_attempts
    A SAFE call that keeps killing its process is entered at most max_attempts times across
    lifetimes (an int >= 1, default 3, counted from its durable started records); then the
    resume commits it interrupted (an ENV_ERROR, so B13 stops the calls after it) instead of
    looping.
"""

ROWS: tuple[Clause, ...] = rows_from_text("recovery", _TEXT)
