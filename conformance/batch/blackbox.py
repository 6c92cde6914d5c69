"""Black-box batch checks: what outcomes and the journal alone show (B1, B2).

A black-box executor serves real handlers, so the kit sends it only calls that must reach
none: code actions and calls to tools the registry does not have (E1, E2). Each unknown name
is distinct, so an answer placed at the wrong position shows. The recording journal sees every
``started`` and ``committed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.batch.judge import BatchViolation, show
from polyloop import Action, ActionOutcome, ToolCall

__all__ = ["Plain", "PlainCase", "Recorder", "check_plain_B1", "check_plain_B2", "plain_cases"]


@dataclass(frozen=True)
class PlainCase:
    kinds: tuple[str, ...]
    """``code`` or ``unknown`` per call."""
    journal: bool = True

    def actions(self) -> list[Action]:
        return [
            Action(code=f"print({i})")
            if kind == "code"
            else Action(tool_call=ToolCall(name=f"polyloop_kit_no_such_tool_{i}", arguments={}))
            for i, kind in enumerate(self.kinds)
        ]

    def describe(self) -> str:
        journal = "a recording journal" if self.journal else "no journal"
        return (
            f"black-box; {journal}; calls ["
            + ", ".join(f"{i}: {kind}" for i, kind in enumerate(self.kinds))
            + "]"
        )


def plain_cases() -> st.SearchStrategy[PlainCase]:
    return st.builds(
        PlainCase,
        st.lists(st.sampled_from(("unknown", "code")), max_size=6).map(tuple),
        st.booleans(),
    )


class Recorder:
    """A BatchJournal that records every call."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.commits: list[tuple[int, ActionOutcome]] = []

    async def started(self, index: int, action: Action) -> None:
        self.starts.append(index)

    async def committed(self, index: int, outcome: ActionOutcome) -> None:
        self.commits.append((index, outcome))


@dataclass(kw_only=True)
class Plain:
    returned: Any = None
    raised: BaseException | None = None
    commits: list[tuple[int, ActionOutcome]] = field(default_factory=list)
    started: list[int] = field(default_factory=list)


def _names(case: PlainCase) -> list[str | None]:
    return [
        f"polyloop_kit_no_such_tool_{i}" if kind == "unknown" else None
        for i, kind in enumerate(case.kinds)
    ]


def check_plain_B1(trial: Any, case: PlainCase) -> None:
    plain = trial.run_plain(case.actions(), case.journal)
    count = len(case.kinds)
    if plain.raised is not None:
        raise BatchViolation(
            f"execute_batch raised {plain.raised!r} for a batch of rejected calls",
            expected=f"a tuple of {count} outcomes",
            actual=repr(plain.raised),
        )
    out = plain.returned
    if type(out) is not tuple or len(out) != count:
        raise BatchViolation(
            f"execute_batch returned {show(out)} for {count} calls",
            expected=f"a tuple of {count} outcomes",
            actual=show(out),
        )
    if not all(isinstance(o, ActionOutcome) for o in out):
        raise BatchViolation(
            "execute_batch returned something that is not an ActionOutcome",
            expected="an ActionOutcome per call",
            actual=show(out),
        )
    if count == 0 and (plain.started or plain.commits):
        raise BatchViolation(
            "an empty batch called the journal",
            expected="() and no journal call",
            actual=f"started {plain.started}, committed {[i for i, _ in plain.commits]}",
        )
    names = _names(case)
    for index, outcome in enumerate(out):
        others = [n for j, n in enumerate(names) if n is not None and j != index]
        mine = names[index]
        wrong = [n for n in others if n in outcome.observation]
        if wrong and (mine is None or mine not in outcome.observation):
            raise BatchViolation(
                f"out[{index}] names {wrong[0]}, another call's tool: the outcomes are not in "
                "model order",
                expected=f"out[{index}] answering call {index}",
                actual=show(outcome),
            )


def check_plain_B2(trial: Any, case: PlainCase) -> None:
    if not case.journal:
        return
    plain = trial.run_plain(case.actions(), True)
    indices = [i for i, _ in plain.commits]
    if indices != list(range(len(indices))):
        raise BatchViolation(
            f"commits came in the order {indices}",
            expected="each call committed once, in model order",
            actual=f"commits {indices}",
        )
    if plain.raised is None and len(indices) != len(case.kinds):
        raise BatchViolation(
            f"execute_batch returned with {len(indices)} of {len(case.kinds)} calls committed",
            expected="every call committed before execute_batch returns",
            actual=f"committed {indices}",
        )
    out = plain.returned
    if isinstance(out, tuple):
        for index, outcome in plain.commits:
            if index < len(out) and outcome != out[index]:
                raise BatchViolation(
                    f"call {index} was committed as {show(outcome)} but returned as "
                    f"{show(out[index])}",
                    expected="the committed outcome is the one returned",
                    actual=f"committed {show(outcome)}",
                )


PLAIN_CHECKS: dict[str, Any] = {"B1": check_plain_B1, "B2": check_plain_B2}


def plain_traps() -> Sequence[PlainCase]:
    return (PlainCase(()), PlainCase(("unknown", "unknown", "code")))
