"""The exceptions scripted handlers raise for E4 and E10: ordinary ones of every shape an
executor might word or classify wrongly (nested classes, causes, groups, look-alikes)."""

from __future__ import annotations

import asyncio
import builtins
import json
import socket
from collections.abc import Callable, Mapping
from typing import Any

from polyloop import ToolEnvironmentError, ToolValidationError

__all__ = ["ENVIRONMENT_LIKE_ERROR_KINDS", "ERROR_KINDS", "BackendUnavailable", "HandlerBug"]


class HandlerBug(Exception):
    """An ordinary exception a buggy tool raises (E4)."""


class BackendUnavailable(ToolEnvironmentError):
    """A `ToolEnvironmentError` subclass: still an environment error (E3, E10)."""


class _LookalikeEnvironmentError(Exception):
    """Named like polyloop's ToolEnvironmentError but unrelated to it: an ordinary exception."""


# An executor that compares class names instead of classes must fail E10, so the lookalike
# carries the very same name.
_LookalikeEnvironmentError.__name__ = "ToolEnvironmentError"
_LookalikeEnvironmentError.__qualname__ = "ToolEnvironmentError"


class _Client:
    """A namespace, so that its exception's ``__qualname__`` (``_Client.Timeout``) differs from
    its ``__name__`` (``Timeout``): E4 wants the ``__name__``."""

    class Timeout(Exception):
        """A nested exception class."""


def _with_cause(message: str) -> Exception:
    """A RuntimeError raised ``from`` an OSError: E4's text names neither the cause nor its
    message."""
    exc = RuntimeError(message)
    exc.__cause__ = OSError("the underlying cause")
    return exc


def _with_context(message: str) -> Exception:
    """A LookupError raised while handling a KeyError (implicit ``__context__``)."""
    exc = LookupError(message)
    exc.__context__ = KeyError("the earlier error")
    return exc


class _ExceptionGroupBefore311(Exception):
    """What task-group runtimes raise on 3.10 (the ``exceptiongroup`` backport's shape): a
    message and the ``exceptions`` inside."""

    def __init__(self, message: str, exceptions: list[Exception]) -> None:
        super().__init__(message, exceptions)
        self.message = message
        self.exceptions = tuple(exceptions)

    def __str__(self) -> str:
        count = len(self.exceptions)
        return f"{self.message} ({count} sub-exception{'s' if count != 1 else ''})"


_ExceptionGroupBefore311.__name__ = _ExceptionGroupBefore311.__qualname__ = "ExceptionGroup"


def _exception_group(message: str) -> Exception:
    """An ``ExceptionGroup`` is an ordinary exception: E4 reports the group itself, not the
    first exception inside (3.10: a stand-in of the same name and shape)."""
    group: Any = getattr(builtins, "ExceptionGroup", _ExceptionGroupBefore311)
    built: Exception = group(message or "two failures", [KeyError("a"), ValueError("b")])
    return built


def _task_group_class() -> Any:
    """The real ``ExceptionGroup`` (3.11+, or the ``exceptiongroup`` backport where it is
    installed), or None: the one-member groups below are drawn only where a task group really
    raises one."""
    found = getattr(builtins, "ExceptionGroup", None)
    if found is None:
        try:
            import exceptiongroup  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return None
        found = exceptiongroup.ExceptionGroup
    return found


def _one_member_group(inner: Callable[[str], Exception]) -> Callable[[str], Exception]:
    """What ``asyncio.TaskGroup`` raises when one child task failed: a group of exactly that
    exception. The group is an ordinary exception (E4), and a ToolEnvironmentError inside it
    does not make it one (E10): an executor that unwraps a one-member group reports the
    member instead."""

    def build(message: str) -> Exception:
        built: Exception = _task_group_class()(
            "unhandled errors in a TaskGroup", [inner(message or "failed")]
        )
        return built

    return build


def _json_decode_error(message: str) -> Exception:
    return json.JSONDecodeError(message or "Expecting value", "{", 1)


def _unicode_decode_error(message: str) -> Exception:
    return UnicodeDecodeError("utf-8", b"\xff", 0, 1, message or "invalid start byte")


ERROR_KINDS: Mapping[str, Callable[[str], Exception]] = {
    "RuntimeError": RuntimeError,
    "KeyError": KeyError,
    "TypeError": TypeError,
    "ZeroDivisionError": ZeroDivisionError,
    "AssertionError": AssertionError,
    "NotImplementedError": NotImplementedError,
    "LookupError": LookupError,
    "HandlerBug": HandlerBug,
    "Exception(two args)": lambda message: Exception(message, 42),
    "nested class _Client.Timeout": _Client.Timeout,
    "RuntimeError from OSError": _with_cause,
    "LookupError during KeyError": _with_context,
    "ExceptionGroup": _exception_group,
    **(
        {"ExceptionGroup(KeyError)": _one_member_group(KeyError)}
        if _task_group_class() is not None
        else {}
    ),
}
"""Ordinary exceptions for E4: kind -> constructor taking the message."""

ENVIRONMENT_LIKE_ERROR_KINDS: Mapping[str, Callable[[str], Exception]] = {
    "ValueError": ValueError,
    "ToolValidationError": ToolValidationError,
    "JSONDecodeError": _json_decode_error,
    "UnicodeDecodeError": _unicode_decode_error,
    "OSError": OSError,
    "ConnectionError": ConnectionError,
    "TimeoutError": TimeoutError,
    "asyncio.TimeoutError": asyncio.TimeoutError,
    "ConnectionRefusedError": ConnectionRefusedError,
    "ConnectionResetError": ConnectionResetError,
    "BrokenPipeError": BrokenPipeError,
    "socket.gaierror": lambda message: socket.gaierror(-2, message or "Name or service not known"),
    "FileNotFoundError": FileNotFoundError,
    "PermissionError": PermissionError,
    "lookalike ToolEnvironmentError": _LookalikeEnvironmentError,
    **(
        {"ExceptionGroup(ToolEnvironmentError)": _one_member_group(ToolEnvironmentError)}
        if _task_group_class() is not None
        else {}
    ),
}
"""Ordinary exceptions an executor might mistake for a validation or environment error (E10)."""
