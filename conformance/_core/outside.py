"""State a target keeps outside its executor, fingerprinted between clauses (issue 9, defect 11).

Shared by every certified subject (action executors and batch executors)."""

from __future__ import annotations

import collections
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from conformance._core.report import ClauseResult, ClauseStatus

__all__ = ["needs_earlier", "state_outside"]

_MUTABLE = (dict, list, set, bytearray, collections.deque)


def state_outside(target: Any, white_box: bool) -> dict[str, str]:
    """Fingerprints of the mutable containers an executor could keep state in outside itself:
    its classes' attributes, its module's globals and (white-box) the factory object's own
    attributes. A change between clauses means state one clause left can decide another's
    verdict, so a failure may not reproduce with ``--only`` (issue 9, defect 11)."""
    kind = target if isinstance(target, type) else type(target)
    namespaces: list[tuple[str, Mapping[str, Any]]] = [
        (klass.__qualname__, vars(klass))
        for klass in kind.__mro__
        if klass.__module__ not in ("builtins", "abc", "typing")
    ]
    if white_box and not isinstance(target, type) and hasattr(target, "__dict__"):
        namespaces.append((f"the factory {kind.__qualname__}", vars(target)))
    module = sys.modules.get(getattr(target, "__module__", None) or kind.__module__)
    if module is not None and module.__name__ != "builtins":
        namespaces.append((module.__name__, vars(module)))
    found: dict[str, str] = {}
    for owner, namespace in namespaces:
        for name, value in list(namespace.items()):
            if name.startswith("__") or not isinstance(value, _MUTABLE):
                continue
            try:
                size = len(value)
                shown = repr(value) if size <= 1000 else ""
            except Exception:
                continue
            found[f"{owner}.{name}"] = f"{size}:{hash(shown)}"
    return found


def needs_earlier(result: ClauseResult, changed: list[str], ran: list[str]) -> ClauseResult:
    """A failing clause that ran after the target's outside state changed: say so, and name
    the clauses that ran before it (its reproduce line stays ``--only`` the clause)."""
    if result.status != ClauseStatus.FAIL.value or not changed or len(ran) < 2:
        return result
    names = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    note = (
        f" (this failure may need the clauses run before it: state outside the executor "
        f"changed while earlier clauses ran — {names}; reproduce with --only {','.join(ran)})"
    )
    return replace(result, message=(result.message or "") + note)
