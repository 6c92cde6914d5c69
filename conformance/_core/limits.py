"""The kit's time limits, each defined once."""

from __future__ import annotations

__all__ = ["EXECUTE_DEADLINE", "GRACE", "HANDLER_DEADLINE", "TOOL_TIMEOUT"]

EXECUTE_DEADLINE = 5.0
"""Default seconds one ``execute`` call may take under `certify` (``--deadline``)."""

HANDLER_DEADLINE = 2.0
"""Default seconds one handler call may take under the tool checks (``check-tools --deadline``):
a handler does less than an executor dispatching to it."""

GRACE = 0.5
"""Seconds the runner waits past a deadline for cancellation to finish before it declares the
call's event loop stuck (blocked, or ignoring cancellation)."""

TOOL_TIMEOUT = 60.0
"""Default seconds the command line's watchdog gives one tool's checks (``check-tools
--tool-timeout``): generation, satisfiability and validation of a hostile schema (a pattern
with nested quantifiers, an enum of a million items) can otherwise run for hours."""
