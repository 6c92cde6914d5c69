"""E15's look at the executor itself: is it an ActionExecutor, and is ``parameters()`` stable."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from conformance._core.text import clip, json_text
from polyloop import RegistryExecutor, ToolRegistry

__all__ = ["executor_problem", "parameters_of"]


def _clip(value: Any, limit: int = 300) -> str:
    return clip(json_text(value, sort_keys=False), limit)


def executor_problem(executor: Any, names: tuple[str, ...] | None) -> str | None:
    """Why `executor` is not an ActionExecutor (E15), or None. `names` are the tools of the
    registry a RegistryExecutor must report, None when unknown."""
    kind = type(executor).__name__
    execute = getattr(executor, "execute", None)
    if not inspect.iscoroutinefunction(execute):
        return f"{kind}.execute is not a coroutine function (async def)"
    parameters = getattr(executor, "parameters", None)
    if parameters is None:
        return f"{kind} has no parameters() method"
    if not callable(parameters):
        return f"{kind}.parameters is a {type(parameters).__name__}, not a method"
    seen = []
    for _ in range(2):
        try:
            value = parameters()
        except Exception as exc:
            return f"{kind}.parameters() raised {type(exc).__name__}: {exc}"
        if not isinstance(value, Mapping):
            return f"{kind}.parameters() returned a {type(value).__name__}, not a mapping"
        for key, item in value.items():
            if not isinstance(key, str) or not isinstance(item, str):
                return (
                    f"{kind}.parameters() maps {_clip(key, 60)} (a {type(key).__name__}) to "
                    f"{_clip(item, 60)} (a {type(item).__name__}): keys and values must be str"
                )
        seen.append(dict(value))
    if seen[0] != seen[1]:
        return (
            f"{kind}.parameters() returned {_clip(seen[0], 120)}, then {_clip(seen[1], 120)}: "
            "it must be the same on every call"
        )
    if isinstance(executor, RegistryExecutor):
        registry = getattr(executor, "registry", None)
        if not isinstance(registry, ToolRegistry):
            return (
                f"the RegistryExecutor's .registry is a {type(registry).__name__}, not the "
                "ToolRegistry it dispatches to"
            )
        if names is not None and tuple(registry.names()) != names:
            return (
                f"the RegistryExecutor's .registry holds {_clip(list(registry.names()), 120)}, "
                f"not the tools it serves, {_clip(list(names), 120)}"
            )
        order = names if names is not None else tuple(registry.names())
        wanted = {"tools": ",".join(order)}
        if seen[0] != wanted:
            return (
                f"the RegistryExecutor {kind}.parameters() returned {_clip(seen[0], 160)}, not "
                f"{_clip(wanted, 160)} (the tool names in registry order, joined by ',')"
            )
    return None


def parameters_of(executor: Any) -> dict[str, str] | None:
    """``parameters()`` as a plain dict of exact strs, or None when it is not one (the
    other E15 checks report that)."""
    try:
        value = executor.parameters()
        return {str.__str__(k): str.__str__(v) for k, v in dict(value).items()}
    except Exception:
        return None
