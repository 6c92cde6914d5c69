"""Scripted tool handlers that record how the executor called them.

A `Behaviour` is a small frozen value saying what a handler does when called: return a text,
raise a `ToolEnvironmentError`, raise an ordinary exception, get suspended, return a non-str,
mutate its arguments, yield to the event loop first, ... The kit puts the handlers of a `Script`
into the registries it builds, so every call an executor makes is logged (`HandlerCall`) and the
expected outcome is known in advance (`conformance.executor.oracle`) without trusting the
executor under test: this call log is the kit's "backdoor".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance._core.data import arguments_key, fingerprint, is_plain_json, mutate_in_place
from conformance._core.data import thaw as plain_copy
from conformance._core.liars import (
    CLAIMS_STR,
    HOSTILE_ERROR_KINDS,
    HOSTILE_NON_STR_KINDS,
    HOSTILE_STR_RAISES_KINDS,
    NamelessError,
)
from conformance._core.text import type_name
from conformance.executor.error_kinds import (
    ENVIRONMENT_LIKE_ERROR_KINDS,
    ERROR_KINDS,
    BackendUnavailable,
    HandlerBug,
)
from polyloop import ToolEnvironmentError

__all__ = [
    "BASE_EXCEPTION_KINDS",
    "CANCEL_MESSAGE",
    "CLAIMS_STR",
    "ENVIRONMENT_LIKE_ERROR_KINDS",
    "ERROR_KINDS",
    "HANDLER_NAME",
    "HOSTILE_ERROR_KINDS",
    "HOSTILE_NON_STR_KINDS",
    "HOSTILE_STR_RAISES_KINDS",
    "NON_STR_KINDS",
    "OPAQUE_RESULT",
    "STR_RAISES_KINDS",
    "BackendUnavailable",
    "Behaviour",
    "ConformanceAbort",
    "EchoArguments",
    "HandlerBug",
    "HandlerCall",
    "MutateArguments",
    "NamelessError",
    "RaiseBaseException",
    "RaiseEnvironmentError",
    "RaiseError",
    "RaiseUnprintable",
    "ReturnNonStr",
    "ReturnText",
    "Script",
    "Sleep",
    "Suspend",
    "YieldFirst",
    "arguments_key",
    "fingerprint",
    "is_plain_json",
    "plain_copy",
]


CANCEL_MESSAGE = "cancelled by the conformance kit"
"""The message the kit cancels with, and gives the CancelledError its handlers raise (E6): an
executor that re-raises a fresh ``CancelledError()`` loses it."""


class ConformanceAbort(BaseException):
    """A BaseException that is not an Exception, raised by a handler (E6).

    The kit uses its own class rather than SystemExit so that a broken executor cannot stop the
    kit; real KeyboardInterrupt is also exercised, inside the kit's event-loop thread."""


STR_RAISES_KINDS: Mapping[str, Callable[[], BaseException]] = {
    "RuntimeError": lambda: RuntimeError("this exception cannot be printed"),
    "ValueError": lambda: ValueError("this exception cannot be printed"),
}
"""What an E12 exception's ``__str__`` raises at ``core``/``strict``: an ``Exception``."""


def _str_raises(kind: str) -> BaseException:
    factory = STR_RAISES_KINDS.get(kind) or HOSTILE_STR_RAISES_KINDS[kind]
    return factory()


class UnprintableError(Exception):
    """An exception whose ``str()`` raises (E12): what it raises is a `STR_RAISES_KINDS` key."""

    def __init__(self, message: str, raises: str = "RuntimeError") -> None:
        super().__init__(message)
        self.raises = raises

    def __str__(self) -> str:
        raise _str_raises(self.raises)


class UnprintableEnvironmentError(ToolEnvironmentError):
    """An environment error whose ``str()`` raises (E3 with E12)."""

    def __init__(self, message: str, raises: str = "RuntimeError") -> None:
        super().__init__(message)
        self.raises = raises

    def __str__(self) -> str:
        raise _str_raises(self.raises)


class NonStrMessageError(Exception):
    """An exception whose ``__str__`` returns a non-str, so ``str()`` raises TypeError (E12)."""

    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


BASE_EXCEPTION_KINDS: Mapping[str, Callable[[], BaseException]] = {
    "ConformanceAbort": lambda: ConformanceAbort("raised by a scripted handler"),
    "KeyboardInterrupt": KeyboardInterrupt,
    "SystemExit": lambda: SystemExit(2),
    "CancelledError": lambda: asyncio.CancelledError(CANCEL_MESSAGE),
}
"""BaseExceptions that are not Exceptions, for E6. ``SystemExit(2)`` is what a tool wrapping an
argparse command line raises on a usage error: it propagates like any other (an executor that
turns it into an observation breaks E6)."""


class _OpaqueResult:
    """A non-str, non-JSON handler result whose ``repr`` is the same on every call (a fresh
    ``object()`` would show another address each time, and an executor that puts the repr into
    its outcome would look nondeterministic to E11)."""

    def __repr__(self) -> str:
        return "<opaque handler result>"


OPAQUE_RESULT = _OpaqueResult()
"""The one opaque result every ``ReturnNonStr("object")`` returns (it holds no state)."""


NON_STR_KINDS: Mapping[str, Callable[[], object]] = {
    "None": lambda: None,
    "int": lambda: 42,
    "float": lambda: 1.5,
    "bool": lambda: True,
    "bytes": lambda: b"bytes are not text",
    "list": lambda: ["a", "list"],
    "dict": lambda: {"content": "a dict"},
    "object": lambda: OPAQUE_RESULT,
}
"""Non-str return values of honest types for E9 (a str subclass is a str, so not here)."""


@dataclass(kw_only=True, eq=False)
class HandlerCall:
    """One call a scripted handler received, recorded when the handler starts running."""

    tool: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    snapshot: Any
    """A plain deep copy of the first positional argument, taken on entry."""
    picture: Any
    """Its `fingerprint`, taken on entry: it sees inside non-JSON leaves, which the snapshot
    shares with the argument."""
    plain: bool
    """Whether that argument was a plain dict with only dicts/lists/JSON scalars inside."""
    release: asyncio.Future[Any] | None = None  # `Suspend.finish`: resolved as the kit cancels
    state: str = "running"
    """``running``, ``suspended``, ``returned``, ``raised`` or ``cancelled``."""
    raised: BaseException | None = None

    @property
    def received(self) -> Any:
        return self.args[0] if self.args else None


class Behaviour:
    """What a scripted handler does. Subclasses are frozen dataclasses; `describe` is shown in
    reports, `run` is the handler's body."""

    def describe(self) -> str:
        raise NotImplementedError

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        raise NotImplementedError

    @property
    def final(self) -> Behaviour:
        """The behaviour that decides the result, through any wrappers."""
        return self


def _short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


@dataclass(frozen=True, kw_only=True)
class ReturnText(Behaviour):
    """Return this text (E5)."""

    text: str

    def describe(self) -> str:
        return f"returns the text {_short(self.text)}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        return self.text


@dataclass(frozen=True, kw_only=True)
class EchoArguments(Behaviour):
    """Yield to the event loop `times` times, then return the arguments it received as JSON
    text (E11: an executor that shares one argument buffer between concurrent calls shows)."""

    times: int = 2

    def describe(self) -> str:
        return f"yields {self.times}x, then returns its arguments as JSON text"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        for _ in range(self.times):
            await asyncio.sleep(0)
        return echo_text(arguments)


def echo_text(arguments: Any) -> str:
    """The text `EchoArguments` returns for these arguments (the oracle's expectation too)."""
    return json.dumps(plain_copy(arguments), sort_keys=True, default=repr)


@dataclass(frozen=True, kw_only=True)
class RaiseEnvironmentError(Behaviour):
    """Raise polyloop's `ToolEnvironmentError` (or the `BackendUnavailable` subclass) (E3)."""

    message: str
    subclass: bool = False

    def build(self) -> Exception:
        return (BackendUnavailable if self.subclass else ToolEnvironmentError)(self.message)

    def describe(self) -> str:
        name = (
            "BackendUnavailable(ToolEnvironmentError)" if self.subclass else "ToolEnvironmentError"
        )
        return f"raises {name}({_short(self.message)})"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        raise self.build()


@dataclass(frozen=True, kw_only=True)
class RaiseError(Behaviour):
    """Raise an ordinary exception of a kind named in `ERROR_KINDS` or
    `ENVIRONMENT_LIKE_ERROR_KINDS` (E4, E10)."""

    kind: str
    message: str

    def build(self) -> Exception:
        factory = (
            ERROR_KINDS.get(self.kind)
            or HOSTILE_ERROR_KINDS.get(self.kind)
            or ENVIRONMENT_LIKE_ERROR_KINDS[self.kind]
        )
        return factory(self.message)

    def describe(self) -> str:
        return f"raises {self.kind}({_short(self.message)})"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        raise self.build()


@dataclass(frozen=True, kw_only=True)
class RaiseUnprintable(Behaviour):
    """Raise an exception whose ``str()`` itself raises (E12)."""

    environment: bool = False
    non_str_message: bool = False
    raises: str = "RuntimeError"
    """What ``__str__`` raises: a `STR_RAISES_KINDS` key (not used with non_str_message)."""

    def build(self) -> Exception:
        if self.environment:
            return UnprintableEnvironmentError("unprintable", self.raises)
        if self.non_str_message:
            return NonStrMessageError()
        return UnprintableError("unprintable", self.raises)

    def describe(self) -> str:
        how = "returns a non-str" if self.non_str_message else f"raises {self.raises}"
        return f"raises {type_name(self.build())}, whose str() {how}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        raise self.build()


@dataclass(frozen=True, kw_only=True)
class RaiseBaseException(Behaviour):
    """Raise a BaseException that is not an Exception (E6); kind is a `BASE_EXCEPTION_KINDS` key."""

    kind: str

    def describe(self) -> str:
        return f"raises {self.kind}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        raise BASE_EXCEPTION_KINDS[self.kind]()


@dataclass(frozen=True, kw_only=True)
class Suspend(Behaviour):
    """Suspend forever, until cancelled (E6). With `finish`, the kit also releases the handler
    in the very loop iteration in which it cancels the call, so the handler's result and the
    cancellation arrive together: ``asyncio.wait_for`` on 3.10/3.11 then returns the result
    and swallows the cancellation (found black-box by timing luck; here deterministic)."""

    finish: bool = False

    def describe(self) -> str:
        if self.finish:
            return "suspends, and returns 'late' in the loop iteration the kit cancels the call"
        return "suspends until cancelled"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        call.state = "suspended"
        release: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.finish:
            call.release = release
        return await release


@dataclass(frozen=True, kw_only=True)
class ReturnNonStr(Behaviour):
    """Return a value that is not a str (E9); kind is a `NON_STR_KINDS` key."""

    kind: str

    def describe(self) -> str:
        return f"returns a {self.kind} instead of a str"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        return (NON_STR_KINDS.get(self.kind) or HOSTILE_NON_STR_KINDS[self.kind])()


@dataclass(frozen=True, kw_only=True)
class MutateArguments(Behaviour):
    """Mutate the received arguments at every depth, then behave like `then` (E13)."""

    then: Behaviour

    @property
    def final(self) -> Behaviour:
        return self.then.final

    def describe(self) -> str:
        return f"mutates its arguments, then {self.then.describe()}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        mutate_in_place(arguments)
        return await self.then.run(arguments, call)


@dataclass(frozen=True, kw_only=True)
class YieldFirst(Behaviour):
    """Yield to the event loop `times` times, then behave like `then` (E11 interleavings)."""

    times: int
    then: Behaviour

    @property
    def final(self) -> Behaviour:
        return self.then.final

    def describe(self) -> str:
        return f"yields to the event loop {self.times}x, then {self.then.describe()}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        for _ in range(self.times):
            await asyncio.sleep(0)
        return await self.then.run(arguments, call)


@dataclass(frozen=True, kw_only=True)
class Sleep(Behaviour):
    """Sleep `seconds` of wall time, then behave like `then`."""

    seconds: float
    then: Behaviour

    @property
    def final(self) -> Behaviour:
        return self.then.final

    def describe(self) -> str:
        return f"sleeps {self.seconds:g}s, then {self.then.describe()}"

    async def run(self, arguments: Any, call: HandlerCall) -> Any:
        await asyncio.sleep(self.seconds)
        return await self.then.run(arguments, call)


ToolHandlerFunction = Callable[..., Awaitable[Any]]

HANDLER_NAME = "kit_handler"
"""The ``__name__`` of every scripted handler."""


@dataclass(kw_only=True, eq=False)
class Script:
    """The behaviours scripted for one registry, and the log of every call its handlers got.

    A behaviour is looked up by ``(tool, arguments_key(arguments))`` first, then by tool name
    alone, so concurrent calls to one tool can each get their own behaviour."""

    by_call: dict[tuple[str, Hashable], Behaviour] = field(default_factory=dict)
    by_tool: dict[str, Behaviour] = field(default_factory=dict)
    default: Behaviour = field(default_factory=lambda: ReturnText(text="ok"))
    calls: list[HandlerCall] = field(default_factory=list)

    def set(
        self, tool: str, behaviour: Behaviour, arguments: Any = None, *, per_call: bool = False
    ) -> None:
        """Script `behaviour` for the tool (or, with per_call, for these exact arguments)."""
        if per_call:
            self.by_call[(tool, arguments_key(arguments))] = behaviour
        else:
            self.by_tool[tool] = behaviour

    def behaviour_for(self, tool: str, arguments: Any) -> Behaviour:
        found = self.by_call.get((tool, arguments_key(arguments)))
        return found or self.by_tool.get(tool) or self.default

    def handler_for(self, tool: str) -> ToolHandlerFunction:
        """An ``async def`` handler for `tool` that logs each call and runs the scripted
        behaviour. It accepts any signature, so a wrongly-called handler is logged, not lost."""

        async def scripted_handler(*args: Any, **kwargs: Any) -> Any:
            received = args[0] if args else None
            call = HandlerCall(
                tool=tool,
                args=args,
                kwargs=dict(kwargs),
                snapshot=plain_copy(received),
                picture=fingerprint(received),
                plain=is_plain_json(received),
            )
            self.calls.append(call)
            behaviour = self.behaviour_for(tool, received)
            try:
                result = await behaviour.run(received, call)
            except asyncio.CancelledError as exc:
                call.state, call.raised = "cancelled", exc
                raise
            except BaseException as exc:
                call.state, call.raised = "raised", exc
                raise
            call.state = "returned"
            return result

        # Not named after the tool: a TypeError naming the handler instead of the tool must not
        # pass E9 because the handler's name contains the tool's.
        scripted_handler.__name__ = scripted_handler.__qualname__ = HANDLER_NAME
        return scripted_handler
