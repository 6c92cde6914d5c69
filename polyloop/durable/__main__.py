"""`python -m polyloop.durable show PATH [BATCH_ID]`: what a crash left in a journal store.

Lists each batch and, per call, its state: committed (with its status), in doubt (with the
replay policy recorded for it, which resume will apply unless the current registry is
stricter, J6) or not started. Opens the store read-only and writes nothing.

Exit status: 0 shown; 1 the store cannot be read (missing, not a store, newer schema, damaged)
or has no such batch; 2 a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from polyloop.durable._run import BatchState
from polyloop.durable._store import JournalStoreError, SqliteJournalStore

_LIMIT = 60


def _short(text: str) -> str:
    text = json.dumps(text, ensure_ascii=False)
    return text if len(text) <= _LIMIT else text[: _LIMIT - 4] + '..."'


def _call_name(call: object) -> str:
    if isinstance(call, dict) and isinstance(call.get("tool"), str):
        return str(call["tool"])
    return "(code)"


def _describe(batch_id: str, state: BatchState) -> list[str]:
    count = len(state.calls)
    states = [state.state_of(index) for index in range(count)]
    lines = [
        f"batch {batch_id!r}: {count} calls: {states.count('committed')} committed, "
        f"{states.count('in doubt')} in doubt, {states.count('not started')} not started"
    ]
    for index in range(count):
        name = _call_name(state.calls[index])
        starts = state.started_counts[index]
        if states[index] == "committed":
            outcome = state.committed[index]
            detail = f"committed    {outcome.status.name:<12} {_short(outcome.observation)}"
        elif states[index] == "in doubt":
            policy = state.policies[index].name
            detail = f"in doubt     replay {policy:<6} started {starts}x"
        else:
            detail = "not started"
        lines.append(f"  {index:>3}  {name:<20} {detail}")
    return lines


def _show(path: str, batch_id: str | None) -> int:
    try:
        with SqliteJournalStore(path, read_only=True) as store:
            ids = store.batch_ids() if batch_id is None else [batch_id]
            if batch_id is not None and not store.records(batch_id):
                print(f"journal store {path!r} has no batch {batch_id!r}", file=sys.stderr)
                return 1
            if not ids:
                print(f"journal store {path!r}: no batches")
                return 0
            for one in ids:
                state = BatchState(repr(path), one, store.records(one))
                print("\n".join(_describe(one, state)))
    except (JournalStoreError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m polyloop.durable",
        description="Inspect a polyloop journal store after a crash (read-only).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser(
        "show",
        help="list batches and each call's state: committed, in doubt, not started",
        description="List each batch (or one) and, per call, its state: committed with its "
        "status, in doubt with its recorded replay policy, or not started. Exit 0 when shown, "
        "1 when the store cannot be read or has no such batch, 2 on a usage error.",
    )
    show.add_argument("path", help="the store file (SqliteJournalStore)")
    show.add_argument("batch_id", nargs="?", help="show only this batch")
    arguments = parser.parse_args(argv)
    return _show(arguments.path, arguments.batch_id)


if __name__ == "__main__":
    sys.exit(main())
