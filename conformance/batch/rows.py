"""The batch subject's catalog rows: contract section 10 (batch dispatch, B)."""

from __future__ import annotations

from conformance._core.catalog import Clause, rows_from_text

__all__ = ["ROWS"]

# 10. Batch dispatch, one row per clause: "ID level: title", then the indented summary. Kept as
# text so the eighteen rows fit the kit's module-size limit.
_TEXT = """
B1 core: One outcome per call, in model order; an empty batch does nothing
    execute_batch returns a tuple of exactly len(actions) outcomes and out[i] answers call i. An
    empty batch returns () and calls no handler, classifier or journal method.

B2 core: Commits in model order, each as soon as its prefix is known
    With a journal, committed(i, out[i]) is called exactly once per call, in model order, as
    soon as outcomes 0..i are known; execute_batch never returns or raises CancelledError before
    every call is committed, and the committed outcome is the one returned.

B3 core: Calls are entered in model order
    When call j is entered, every accepted call i < j has been entered or resolved without
    entering.

B4 core: Each call's outcome is execute's
    A batch of one gives the same outcome (or raises the same exception: the same class for a
    batch cancelled from outside) with the same handler calls as execute(action); in every batch
    each call's outcome follows the E table unless B13-B16 stop the batch first. E1's sentence
    and E2's message (within V2-V8) are the executor's own, not polyloop's.

B5 core: Outcomes never depend on timing
    Outcomes, synthetic texts included, depend only on the batch, what each handler did and
    which calls had been entered when the batch stopped; no synthetic observation holds a time
    or duration.

B6 core: Only concurrency-safe calls overlap; exclusive calls run alone
    Two handlers overlap only if both calls are concurrency-safe. A call is concurrency-safe
    when its spec's concurrency_safe is exactly True, or a callable that returns exactly True
    for its arguments; any other answer, a callable that raises, or completes_run=True makes
    it exclusive. An exclusive call is entered only after every earlier call settled, and no
    later call is entered before it settles.

B7 core: At most max_concurrency handlers run
    At no moment do more than max_concurrency handlers of one batch run; with max_concurrency=1
    the batch is strictly sequential.

B8 core: Work-conserving: a freed slot is filled at once
    Unless the batch is stopping, at the start and whenever a running call settles, every next
    call that B3, B6 and B7 allow is entered: no fixed windows, no waiting for an unrelated
    call.

B9 core: Fail-closed classification, asked at most once, never for rejected calls
    The classifier is called at most once per accepted call, before that call is entered, with a
    read-only view of its arguments, and never for a rejected call; only an exact True makes a
    call concurrency-safe, and whatever it returns or raises changes scheduling only.

B10 core: Rejected calls take no slot and are no barrier
    A rejected call (E1, E2) is resolved NOT_EXECUTED in its position without entering a
    handler, taking a concurrency slot or acting as a barrier.

B11 core: Each handler gets its own copy of its arguments
    Each handler gets its own plain copy of its arguments (E13): what one handler mutates
    reaches neither a sibling nor any recorded call.

B12 core: An ordinary failure changes only its own outcome
    An ordinary handler exception (E4) or a rejection changes only that call's outcome: siblings
    run and end as if it had returned a string, and later calls are entered as usual.

B13 core: ENV_ERROR stops the batch; running calls finish
    An ENV_ERROR outcome stops the batch: nothing is entered afterwards, running handlers finish
    and keep their outcomes, and every accepted call not entered gets a synthetic NOT_EXECUTED
    sentence of the executor's own naming call k, the lowest-indexed call whose outcome is
    ENV_ERROR (as its number, counted from 0; polyloop's choice: "not run: call k reported an
    environment error").

B14 core: Cancellation drains started calls and commits every call
    On cancellation nothing is entered afterwards; running handlers are cancelled and awaited
    however often the batch is cancelled; calls not entered get a synthetic NOT_EXECUTED "not
    run" sentence; a call that ends by returning or by an ordinary exception keeps its own
    E3-E5 outcome, even when the cancellation had reached it (a handler may catch it and
    return); a call ended by the cancellation gets a synthetic ENV_ERROR "interrupted" sentence
    that differs from the "not run" one (the executor's own words;
    polyloop's choice: "not run: the batch was cancelled", "interrupted while running; its
    effects are unknown"); then a CancelledError (any) is raised, never swallowed, and no task
    the batch created outlives it.

B15 core: A handler's BaseException stops the batch and is re-raised
    A handler raising a BaseException that is not an Exception stops the batch like B14 (its own
    outcome is the "interrupted" one; calls not entered get a "not run" sentence naming call k
    and the exception class; polyloop's choice: "not run: call k raised <Class>"), and
    execute_batch re-raises that same exception object.

B16 core: A journal fault or a non-str result stops the batch without invented outcomes
    If the journal raises or a handler returns a non-str (E9), nothing is entered afterwards,
    running handlers are cancelled and awaited, and execute_batch raises that exception; no
    outcome is invented for an entered call and nothing more is committed.

B17 core: started(i) comes immediately before the handler is entered
    started(i, action) is called after call i is accepted and classified and immediately before
    its handler is entered, never for a rejected call; a call stopped while started(i) is
    awaited is entered and ends by the stop, or is committed as not run.

B18 strict: Concurrent batches are independent
    Concurrent execute_batch calls on one executor neither order nor limit each other
    (exclusivity and max_concurrency are per batch), and their outcomes equal those of the same
    batches run one after the other.
"""

ROWS: tuple[Clause, ...] = rows_from_text("batch", _TEXT)
