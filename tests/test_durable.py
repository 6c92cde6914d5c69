"""Section 12 in process: the store's guarantees, refusals and bad input (J1, J2, J9, J10, J12).

States a crash leaves behind are written straight into the store here (a header and `started`
records without commits); `tests/test_durable_crash.py` produces them with real SIGKILLs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polyloop import (
    Action,
    ActionOutcome,
    ActionStatus,
    BatchJournal,
    JournalDamagedError,
    JournalStoreError,
    ReplayPolicy,
    SqliteJournalStore,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
    run_durable,
)
from polyloop.durable import read_batch

INTERRUPTED = "interrupted while running; its effects are unknown"


class Tools:
    """A registry whose handlers log their entries; `check` runs inside each handler."""

    def __init__(self, *, safe_policy: ReplayPolicy = ReplayPolicy.SAFE) -> None:
        self.entered: list[int] = []
        self.check: Any = None

        async def handler(arguments: dict[str, Any]) -> str:
            self.entered.append(arguments["i"])
            if self.check is not None:
                self.check(arguments["i"])
            if arguments.get("env"):
                raise ToolEnvironmentError("backend down")
            return f"ok {arguments['i']}"

        self.registry = ToolRegistry(
            [
                ToolSpec(
                    name="safe",
                    description="",
                    parameters={"type": "object"},
                    replay_policy=safe_policy,
                    concurrency_safe=True,
                    handler=handler,
                ),
                ToolSpec(
                    name="never",
                    description="",
                    parameters={"type": "object"},
                    replay_policy=ReplayPolicy.NEVER,
                    handler=handler,
                ),
            ]
        )

    def run(
        self, actions: Sequence[Action], store: Any, batch_id: str = "b", **kwargs: Any
    ) -> tuple[ActionOutcome, ...]:
        return asyncio.run(
            run_durable(
                self.registry.batch_executor(), actions, store=store, batch_id=batch_id, **kwargs
            )
        )


def calls(*names: str, **extra: Any) -> list[Action]:
    return [
        Action(tool_call=ToolCall(name=name, arguments={"i": index, **extra}))
        for index, name in enumerate(names)
    ]


def header(store: SqliteJournalStore, actions: Sequence[Action], policies: Sequence[str]) -> None:
    body = []
    for action in actions:
        assert action.tool_call is not None
        body.append({"tool": action.tool_call.name, "arguments": dict(action.tool_call.arguments)})
    store.append("b", "header", -1, {"calls": body, "policies": list(policies)})


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with SqliteJournalStore(tmp_path / "j.db") as opened:
        yield opened


# -- J1, J2, J12: what is durable before a handler is entered ---------------------------------


def test_J1_J2_header_and_started_are_readable_by_another_connection_before_entry(
    tmp_path: Path,
) -> None:
    tools = Tools()
    path = tmp_path / "j.db"

    def check(index: int) -> None:
        with SqliteJournalStore(path, read_only=True) as other:
            state = read_batch(other, "b")
        assert state is not None  # J1: the header came first
        assert state.started_counts[index] == 1  # J2: started(i) is there before entry

    tools.check = check
    with SqliteJournalStore(path) as store:
        outcomes = tools.run(calls("safe", "never", "safe"), store)
    assert [o.observation for o in outcomes] == ["ok 0", "ok 1", "ok 2"]
    assert tools.entered == [0, 1, 2]


def test_J12_every_connection_is_wal_with_synchronous_full(store: SqliteJournalStore) -> None:
    connection = store._connection
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_J2_J12_a_started_that_cannot_be_made_durable_enters_nothing(tmp_path: Path) -> None:
    class FailingStore(SqliteJournalStore):
        def append(self, batch_id: str, kind: str, index: int, body: Any) -> None:
            if kind == "started":
                raise OSError("fsync failed")
            super().append(batch_id, kind, index, body)

    tools = Tools()
    with FailingStore(tmp_path / "j.db") as store, pytest.raises(OSError, match="fsync failed"):
        tools.run(calls("safe", "safe"), store)
    assert tools.entered == []


# -- J3, J4, J5, J13 from a crash state -------------------------------------------------------


def test_J3_J11_an_all_committed_batch_is_returned_without_entering_or_writing(
    store: SqliteJournalStore,
) -> None:
    tools = Tools()
    first = tools.run(calls("safe", "never"), store)
    before = store.records("b")
    assert tools.run(calls("safe", "never"), store) == first
    assert tools.entered == [0, 1]
    assert store.records("b") == before


def test_J4_J13_in_doubt_safe_call_reruns_until_max_attempts_then_is_interrupted(
    store: SqliteJournalStore,
) -> None:
    actions = calls("safe", "safe")
    header(store, actions, ["SAFE", "SAFE"])
    store.append("b", "started", 0, {})
    store.append("b", "started", 0, {})
    tools = Tools()
    outcomes = tools.run(actions, store, max_attempts=2)
    assert tools.entered == []
    assert outcomes[0].observation == INTERRUPTED
    assert outcomes[1].observation == "not run: call 0 reported an environment error"


def test_J4_in_doubt_safe_call_below_the_bound_is_entered_again(
    store: SqliteJournalStore,
) -> None:
    actions = calls("safe", "safe")
    header(store, actions, ["SAFE", "SAFE"])
    store.append("b", "started", 0, {})
    tools = Tools()
    outcomes = tools.run(actions, store, max_attempts=2)
    assert tools.entered == [0, 1]
    assert [o.observation for o in outcomes] == ["ok 0", "ok 1"]
    state = read_batch(store, "b")
    assert state is not None and state.started_counts == [2, 1]  # a new durable start first


def test_J4_an_in_doubt_safe_call_the_resume_stops_before_is_interrupted_not_not_run(
    store: SqliteJournalStore,
) -> None:
    """Both calls were in flight at the crash; on resume call 0 raises ToolEnvironmentError
    (B13 stops the batch) before call 1 is entered again. Call 1 may have run in the lifetime
    that crashed, so it is committed interrupted, in the store and in what resume returns."""
    actions = [
        Action(tool_call=ToolCall(name="safe", arguments={"i": 0, "env": True})),
        Action(tool_call=ToolCall(name="safe", arguments={"i": 1})),
    ]
    header(store, actions, ["SAFE", "SAFE"])
    store.append("b", "started", 0, {})
    store.append("b", "started", 1, {})
    tools = Tools()
    outcomes = asyncio.run(
        run_durable(
            tools.registry.batch_executor(max_concurrency=1), actions, store=store, batch_id="b"
        )
    )
    assert tools.entered == [0]
    assert outcomes[0].status is ActionStatus.ENV_ERROR
    assert outcomes[1].status is ActionStatus.ENV_ERROR
    assert outcomes[1].observation == INTERRUPTED and outcomes[1].observation_is_synthetic
    state = read_batch(store, "b")
    assert state is not None and list(state.committed) == list(outcomes)


def test_J4_an_in_doubt_safe_call_a_cancelled_resume_leaves_is_interrupted(
    store: SqliteJournalStore,
) -> None:
    actions = calls("safe", "safe")
    header(store, actions, ["SAFE", "SAFE"])
    store.append("b", "started", 0, {})
    store.append("b", "started", 1, {})
    tools = Tools()
    entered = asyncio.Event()

    async def handler(arguments: dict[str, Any]) -> str:
        entered.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    spec = tools.registry.spec_for("safe")
    assert spec is not None
    registry = ToolRegistry([dataclasses.replace(spec, handler=handler)])

    async def resume_then_cancel() -> None:
        task = asyncio.ensure_future(
            run_durable(
                registry.batch_executor(max_concurrency=1), actions, store=store, batch_id="b"
            )
        )
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(resume_then_cancel())
    state = read_batch(store, "b")
    assert state is not None and len(state.committed) == 2
    assert state.committed[0].observation == INTERRUPTED  # B14: entered, cut short
    assert state.committed[1].observation == INTERRUPTED  # J4: never "not run"
    assert state.committed[1].status is ActionStatus.ENV_ERROR


def test_J5_J6_recorded_never_in_doubt_commits_the_rest_in_model_order(
    store: SqliteJournalStore,
) -> None:
    actions = [*calls("safe", "never", "safe"), Action(code="print(1)")]
    header_calls = actions[:3]
    body = [
        {"tool": a.tool_call.name, "arguments": dict(a.tool_call.arguments)}
        for a in header_calls
        if a.tool_call
    ]
    body.append({"code": "print(1)"})
    store.append("b", "header", -1, {"calls": body, "policies": ["SAFE", "NEVER", "SAFE", "NEVER"]})
    store.append("b", "started", 0, {})
    store.append(
        "b",
        "committed",
        0,
        {
            "status": "EXECUTED",
            "observation": "ok 0",
            "synthetic": False,
            "completion": False,
            "truncated": 0,
        },
    )
    store.append("b", "started", 1, {})
    tools = Tools(safe_policy=ReplayPolicy.SAFE)
    outcomes = tools.run(actions, store)
    assert tools.entered == []
    assert [(o.status, o.observation) for o in outcomes] == [
        (ActionStatus.EXECUTED, "ok 0"),
        (ActionStatus.ENV_ERROR, INTERRUPTED),
        (ActionStatus.NOT_EXECUTED, "not run: call 1 reported an environment error"),
        (
            ActionStatus.NOT_EXECUTED,
            "The action has no tool call; a tool-call executor cannot run code.",
        ),
    ]
    assert [r.index for r in store.records("b") if r.kind == "committed"] == [0, 1, 2, 3]


# -- J9: a changed batch is refused ------------------------------------------------------------


@pytest.mark.parametrize(
    ("changed", "index"),
    [
        (calls("safe", "never", "safe", env=False), 0),  # an argument added
        (calls("safe", "never"), 2),  # a call dropped
        (calls("safe", "never", "safe", "safe"), 3),  # a call added
        (calls("safe", "safe", "safe"), 1),  # a tool name
        ([*calls("safe", "never"), Action(code="x")], 2),  # code for a call
    ],
)
def test_J9_a_changed_batch_names_the_first_differing_index_and_writes_nothing(
    store: SqliteJournalStore, changed: list[Action], index: int
) -> None:
    actions = calls("safe", "never", "safe")
    header(store, actions, ["SAFE", "NEVER", "SAFE"])
    store.append("b", "started", 0, {})
    before = store.records("b")
    tools = Tools()
    with pytest.raises(ValueError, match=rf"\bindex {index}\b"):
        tools.run(changed, store)
    assert tools.entered == []
    assert store.records("b") == before


def test_J9_argument_order_is_not_a_change(store: SqliteJournalStore) -> None:
    tools = Tools()
    first = [Action(tool_call=ToolCall(name="safe", arguments={"i": 0, "a": 1}))]
    again = [Action(tool_call=ToolCall(name="safe", arguments={"a": 1, "i": 0}))]
    assert tools.run(first, store) == tools.run(again, store)
    assert tools.entered == [0]


# -- J10: damage is refused, naming store and batch ----------------------------------------


def _finished_store(path: Path) -> Tools:
    tools = Tools()
    with SqliteJournalStore(path) as store:
        tools.run(calls("safe", "never"), store, batch_id="b")
        tools.run(calls("safe"), store, batch_id="other")
    return tools


def test_J10_a_flipped_byte_inside_a_value_is_refused_naming_store_and_batch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.db"
    _finished_store(path)
    data = bytearray(path.read_bytes())
    at = data.find(b"ok 1")
    assert at > 0
    data[at + 3] ^= 0x02  # "ok 1" -> "ok 3": valid SQLite, valid JSON, wrong record
    path.write_bytes(bytes(data))
    tools = Tools()
    with SqliteJournalStore(path) as store:
        with pytest.raises(JournalDamagedError, match=r"j\.db.*batch 'b'.*CRC-32"):
            tools.run(calls("safe", "never"), store)
        assert tools.run(calls("safe"), store, batch_id="other")[0].observation == "ok 0"
    assert tools.entered == []


def test_J10_a_record_changed_behind_the_store_is_refused(store: SqliteJournalStore) -> None:
    Tools().run(calls("safe"), store)
    store._connection.execute("UPDATE records SET idx = 5 WHERE kind = 'committed'")
    with pytest.raises(JournalDamagedError, match="batch 'b'"):
        Tools().run(calls("safe"), store)


def test_J10_a_truncated_store_file_is_refused_not_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    _finished_store(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    tools = Tools()
    with pytest.raises(JournalStoreError, match=r"j\.db"), SqliteJournalStore(path) as store:
        tools.run(calls("safe", "never"), store)
    assert tools.entered == []


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("batch_id", "error", "text"),
    [("", ValueError, "non-empty"), (7, TypeError, "got int"), (None, TypeError, "NoneType")],
)
def test_bad_batch_id_is_refused_clearly(
    store: SqliteJournalStore, batch_id: object, error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        Tools().run(calls("safe"), store, batch_id=batch_id)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "error"), [(0, ValueError), (1001, ValueError), (True, TypeError), ("3", TypeError)]
)
def test_J13_max_attempts_out_of_range_is_refused(
    store: SqliteJournalStore, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match="max_attempts"):
        Tools().run(calls("safe"), store, max_attempts=value)
    assert store.batch_ids() == []


def test_a_store_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        SqliteJournalStore(tmp_path / "missing" / "j.db")


def test_a_store_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    SqliteJournalStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(JournalStoreError, match="schema version 99, newer"):
        SqliteJournalStore(path)


@pytest.mark.parametrize("content", [b"hello, not a database\n" * 10, b"\x00" * 4096])
def test_a_file_that_is_not_a_store_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(JournalStoreError, match="not a polyloop journal store"):
        SqliteJournalStore(path)
    assert path.read_bytes() == content


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(JournalStoreError, match="not a polyloop journal store"):
        SqliteJournalStore(path)


def test_an_executor_without_registry_needs_registry(store: SqliteJournalStore) -> None:
    class Bare:
        async def execute_batch(
            self, actions: Sequence[Action], journal: BatchJournal | None = None
        ) -> tuple[ActionOutcome, ...]:
            raise AssertionError("not reached")

        def parameters(self) -> dict[str, str]:
            return {}

    with pytest.raises(TypeError, match="registry="):
        asyncio.run(run_durable(Bare(), calls("safe"), store=store, batch_id="b"))


def test_J7_an_executor_that_would_enter_a_committed_call_is_stopped(
    store: SqliteJournalStore,
) -> None:
    """The stand-in of a committed call must resolve without entering (B10, B17)."""
    tools = Tools()
    actions = calls("safe", "safe")
    header(store, actions, ["SAFE", "SAFE"])
    store.append(
        "b",
        "committed",
        0,
        {
            "status": "EXECUTED",
            "observation": "ok 0",
            "synthetic": False,
            "completion": False,
            "truncated": 0,
        },
    )

    class Eager:
        registry = tools.registry

        async def execute_batch(
            self, actions: Sequence[Action], journal: BatchJournal | None = None
        ) -> tuple[ActionOutcome, ...]:
            assert journal is not None
            await journal.started(0, actions[0])
            raise AssertionError("entered a committed call")

        def parameters(self) -> dict[str, str]:
            return {}

    with pytest.raises(RuntimeError, match="call 0, which is committed"):
        asyncio.run(run_durable(Eager(), actions, store=store, batch_id="b"))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
        min_size=1,
        max_size=4,
    )
)
def test_J3_J9_any_json_arguments_round_trip_and_resume_without_entering(
    arguments: list[dict[str, Any]],
) -> None:
    import tempfile

    tools = Tools()
    actions = [
        Action(tool_call=ToolCall(name="safe", arguments={**extra, "i": index}))
        for index, extra in enumerate(arguments)
    ]
    with (
        tempfile.TemporaryDirectory() as directory,
        SqliteJournalStore(Path(directory) / "j.db") as store,
    ):
        first = tools.run(actions, store)
        assert tools.run(actions, store) == first
    assert tools.entered == list(range(len(actions)))


ANY_TEXT = st.text(st.characters(blacklist_categories=()), max_size=12)
"""Any str, lone surrogates included (a file name decoded with surrogateescape)."""


@settings(max_examples=30, deadline=None)
@given(argument=ANY_TEXT, observation=ANY_TEXT)
def test_J3_any_str_in_arguments_and_observations_round_trips_through_the_store(
    tmp_path_factory: pytest.TempPathFactory, argument: str, observation: str
) -> None:
    async def handler(arguments: dict[str, Any]) -> str:
        return observation

    registry = ToolRegistry(
        [ToolSpec(name="t", description="", parameters={"type": "object"}, handler=handler)]
    )
    actions = [Action(tool_call=ToolCall(name="t", arguments={"s": argument}))]
    path = tmp_path_factory.mktemp("j") / "j.db"
    with SqliteJournalStore(path) as store:
        first = asyncio.run(
            run_durable(registry.batch_executor(), actions, store=store, batch_id="b")
        )
    with SqliteJournalStore(path) as store:  # a later lifetime reads what was recorded
        again = asyncio.run(
            run_durable(registry.batch_executor(), actions, store=store, batch_id="b")
        )
    assert first[0].observation == observation and again == first


def test_bad_input_a_batch_id_with_a_lone_surrogate_is_refused_with_one_line(
    store: SqliteJournalStore,
) -> None:
    with pytest.raises(ValueError, match="lone surrogate at position 1"):
        Tools().run(calls("safe"), store, batch_id="a\udcff")
