"""In-process entry points stay in the caller's process (issue 13.4, issue 9 defects 4 and 5).

`certify()` runs the target on the kit's loop thread, in the caller's process: a `SystemExit`
or other `BaseException` escaping the target is that clause's ``error`` (never a pass, never
the caller's exit); a stuck call makes the runner move to a new event loop, which the report
says, and leaves no loop thread behind once `certify()` returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hostile import exit_in_factory, raises_in_execute
from hostile.blocks import Blocks, blocking_executor

from conformance import certify

QUICK: dict[str, Any] = {"profile": "quick", "seed": 1}


@pytest.mark.parametrize(
    "factory, name",
    [
        (exit_in_factory.sys_exit_0, "SystemExit"),
        (exit_in_factory.sys_exit_3, "SystemExit"),
        (exit_in_factory.generator_exit, "GeneratorExit"),
        (exit_in_factory.bare_base_exception, "BaseException"),
    ],
)
def test_E1_a_BaseException_from_the_factory_is_an_error_of_the_clause(
    factory: Callable[..., Any], name: str
) -> None:
    report = certify(factory, only=["E1"], **QUICK)
    result = report.result("E1")
    assert result.status == "error", result
    assert result.message is not None and name in result.message
    assert not report.passed and report.exit_status() == 1


def test_E4_SystemExit_inside_execute_never_passes_and_never_exits() -> None:
    report = certify(raises_in_execute.SysExit, only=["E4", "E5", "E8"], **QUICK)
    # No handler is ever reached, so E4/E5 have nothing to judge (skipped); E8 is the clause
    # the SystemExit breaks, and the run as a whole is never a pass.
    assert report.result("E8").status in ("fail", "error"), report.to_text()
    assert "pass" not in {r.status for r in report.results}, report.to_text()
    assert not report.passed and report.exit_status() != 0


def _loop_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("polyloop-conformance")}


def test_no_loop_thread_survives_certify_after_a_stuck_call() -> None:
    before = _loop_threads()
    report = certify(Blocks, only=["E1"], deadline=0.2, **QUICK)
    assert report.result("E1").status in ("fail", "error")
    assert _loop_threads() <= before, threading.enumerate()


def test_the_report_says_the_kit_moved_to_a_new_event_loop() -> None:
    report = certify(Blocks, only=["E1"], deadline=0.2, **QUICK)
    message = report.result("E1").message or ""
    assert "moved to a new one" in message and "fresh executor" in message


def test_black_box_clauses_after_a_stuck_call_are_not_charged_to_the_executor() -> None:
    report = certify(
        blocking_executor,
        registry=blocking_executor.registry,
        only=["E1", "E2"],
        deadline=0.2,
        **QUICK,
    )
    first, second = report.result("E1"), report.result("E2")
    assert first.status in ("fail", "error") and "moved to a new one" in (first.message or "")
    assert second.status == "error" and second.examples == 0
    assert "stuck since E1" in (second.message or "")
