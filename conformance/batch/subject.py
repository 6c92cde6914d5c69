"""Telling a batch executor from an action executor, and checking V/E through one-call batches.

A white-box target is a batch factory when the object it builds has ``execute_batch``. The kit
calls it ``factory(registry, max_concurrency=N)``: a class is recognised by its attribute, any
other callable by building one executor over a one-tool registry. A factory whose executor has
``execute_batch`` but that cannot take the ``max_concurrency`` keyword is a set-up error
naming the keyword (the kit must choose the cap each schedule is played with, B7/B8).

B4 makes a batch of one equivalent to ``execute``: same outcome (or the same exception), same
handler calls. So the V and E clauses are certified on `OneCallBatch`, whose ``execute(a)`` is
``(await executor.execute_batch([a]))[0]``, and the report says so.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from polyloop import Action, ToolRegistry, ToolSpec

__all__ = [
    "CAP_FOR_ONE_CALL",
    "OneCallBatch",
    "check_batch_factory",
    "executes",
    "is_batch_target",
    "one_call_factory",
    "only_for_subject",
    "subject_of",
]

CAP_FOR_ONE_CALL = 4
"""The max_concurrency a factory is given for the V/E clauses (one call: it changes nothing)."""

KEYWORD = "max_concurrency"


async def _probe_handler(arguments: Any) -> str:
    return "ok"


def _probe_registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolSpec(
                name="probe",
                description="Answers ok.",
                parameters={"type": "object"},
                handler=_probe_handler,
            )
        ]
    )


def executes(found: object) -> bool:
    """An executor instance: it has ``execute`` (or, a batch executor, ``execute_batch``)."""
    return callable(getattr(found, "execute", None)) or callable(
        getattr(found, "execute_batch", None)
    )


def takes_cap(factory: Callable[..., Any]) -> bool | None:
    """Whether ``factory(registry, max_concurrency=N)`` binds (None: no signature to read)."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(None, **{KEYWORD: 1})
    except TypeError:
        return False
    return True


def is_batch_target(target: Any, registry: ToolRegistry | None) -> bool:
    """Whether `target` is certified as a batch executor: an instance (black-box) or a
    factory's product (white-box) with ``execute_batch``. A factory that fails here is left to
    the V/E path, which reports its failure."""
    if registry is not None:
        return callable(getattr(target, "execute_batch", None))
    if isinstance(target, type):
        return callable(getattr(target, "execute_batch", None))
    if not callable(target):
        return False
    cap = takes_cap(target)
    try:
        built = target(_probe_registry(), **{KEYWORD: 1}) if cap else target(_probe_registry())
    except KeyboardInterrupt:
        raise
    except BaseException:  # SystemExit too: the V/E path reports it, clause by clause
        if cap is not None:
            return False
        try:
            built = target(_probe_registry())
        except KeyboardInterrupt:
            raise
        except BaseException:
            return False
    return callable(getattr(built, "execute_batch", None))


def check_batch_factory(target: Any) -> str | None:
    """Why a batch factory cannot be certified (it does not take ``max_concurrency=``)."""
    if takes_cap(target) is False:
        name = getattr(target, "__qualname__", type(target).__name__)
        return (
            f"{name} builds a batch executor but cannot be called as "
            f"factory(registry, {KEYWORD}=N); the kit gives every batch the cap it checks "
            f"(B7, B8): add a {KEYWORD} keyword parameter"
        )
    return None


def subject_of(target: Any, registry: ToolRegistry | None) -> tuple[str, str | None]:
    """``("batch" | "executor", why it cannot be certified or None)``."""
    if not is_batch_target(target, registry):
        return "executor", None
    return "batch", check_batch_factory(target) if registry is None else None


def only_for_subject(only: Iterable[str] | None, subject: str, given: bool) -> list[str] | None:
    """The command line selects for any subject before it knows the target's kind: for an
    action executor the B clauses drop out (unless the user named them: then the selection
    reports that they do not apply)."""
    if only is None or (subject == "batch" and not given):
        return None  # everything the subject's level selects
    if subject == "batch":
        return list(only)
    wanted = list(only)
    kept = [c for c in wanted if not c.startswith("B")]
    return wanted if given and len(kept) != len(wanted) else kept


class OneCallBatch:
    """An action executor over a batch executor: each call is a batch of one (B4)."""

    cancelled_by_class = True
    """B4/B14: a batch cancelled from outside raises a CancelledError, not necessarily the
    handler's object or the kit's (E6 then judges the class; a handler's own BaseException
    must still come back as that object, B15)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def execute(self, action: Action) -> Any:
        answer = await self.inner.execute_batch([action])
        if isinstance(answer, tuple) and len(answer) == 1:
            return answer[0]
        return answer  # not one outcome: judged as what execute returned (E15)

    def parameters(self) -> Mapping[str, str]:
        parameters = getattr(self.inner, "parameters", None)
        if not callable(parameters):
            return {}
        found: Mapping[str, str] = parameters()
        return found

    def __repr__(self) -> str:
        return f"OneCallBatch({self.inner!r})"


def one_call_factory(factory: Callable[..., Any]) -> Callable[[ToolRegistry], Any]:
    """The action-executor factory the V/E clauses certify."""

    def make(registry: ToolRegistry) -> Any:
        built = factory(registry, **{KEYWORD: CAP_FOR_ONE_CALL})
        if not callable(getattr(built, "execute_batch", None)):
            return built  # judged by the V/E path as it is
        return OneCallBatch(built)

    make.cancelled_by_class = True  # type: ignore[attr-defined]  # as OneCallBatch's
    make.__qualname__ = getattr(factory, "__qualname__", "factory")
    make.__module__ = getattr(factory, "__module__", __name__)
    return make
