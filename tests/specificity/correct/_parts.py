"""Small pieces several correct executors share: outcome constructors and the exception text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from polyloop import ActionOutcome, ActionStatus

CODE_REFUSED = "this executor runs tool calls only; code actions are not supported"
STR_FAILED = "<exception str() failed>"


def outcome(status: ActionStatus, observation: str, synthetic: bool) -> ActionOutcome:
    return ActionOutcome(
        status=status,
        observation=observation,
        observation_is_synthetic=synthetic,
        env_reported_completion=False,
        observation_truncated_chars=0,
    )


def refused(observation: str) -> ActionOutcome:
    return outcome(ActionStatus.NOT_EXECUTED, observation, True)


def executed(observation: str) -> ActionOutcome:
    return outcome(ActionStatus.EXECUTED, observation, False)


def env_error(observation: str) -> ActionOutcome:
    return outcome(ActionStatus.ENV_ERROR, observation, False)


def text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return STR_FAILED


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {text_of(exc)}"


def plain(value: Any) -> Any:
    """A private copy as plain dicts and lists, so the handler may mutate it freely (E13)."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def not_str(tool: str, result: object) -> TypeError:
    return TypeError(f"tool {tool!r} returned {type(result).__name__}, not str; return the text")
