"""Kit gaps found by mutation analysis (docs/detection.md), each as a zoo-style broken executor.

Every class is the zoo's correct `ZooExecutor` with one deliberate bug that reproduces what a
surviving mutant of `polyloop/tools.py` or `polyloop/_json.py` does to the observable
behaviour. `VIOLATES` names the clause the bug breaks; `KNOWN_MISS` says why `certify` does not
see it yet and what the kit's property must do instead. `tests/mutants/test_gaps.py` proves
each bug with a concrete call (the witness) and holds a strict xfail asserting that `certify`
fails the executor: when the kit learns to catch the bug, that xfail passes and fails the
suite, so the entry is removed (the list only shrinks).

The kit lives in `conformance/`; these executors do not change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from zoo.base import ZooExecutor, shorten

from polyloop import ActionOutcome, ActionStatus, ToolCall, ToolSpec, ToolValidationError

__all__ = ["GAPS"]


class StrSystemExitEscapes(ZooExecutor):
    """An exception whose `__str__` raises `SystemExit` (or any non-`Exception`) crashes
    `execute` instead of giving "<Name>: <exception str() failed>".

    Reproduces the mutants of `_exception_text` that narrow `except BaseException` back to
    `except Exception` (or drop the re-raise filter)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E12",)
    KNOWN_MISS: ClassVar[str | None] = (
        "E12's handler behaviours raise only exceptions whose __str__ raises an Exception; the "
        "strategy must also draw __str__ raising SystemExit, GeneratorExit and a bare "
        "BaseException subclass, and require the outcome '<Name>: <exception str() failed>'"
    )

    def exception_text(self, exc: Exception) -> str:
        try:
            text = str(exc)
        except Exception:  # the bug: a SystemExit from __str__ escapes execute
            text = "<exception str() failed>"
        return f"{type(exc).__name__}: {text}"


class ExceptionNameCrashes(ZooExecutor):
    """An exception class whose `__name__` raises (a metaclass property) crashes `execute`.

    Reproduces the mutants of `_exception_name` that read `type(exc).__name__` unguarded."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E4",)
    KNOWN_MISS: ClassVar[str | None] = (
        "E4/E12 draw exception classes with ordinary names only; the strategy must also raise "
        "an instance of a class whose metaclass makes __name__ raise, and accept only an "
        "EXECUTED outcome naming the class's real name (type.__dict__['__name__'])"
    )

    def exception_text(self, exc: Exception) -> str:
        try:
            text = str(exc)
        except BaseException:
            text = "<exception str() failed>"
        return f"{type(exc).__name__}: {text}"  # the bug: __name__ itself may raise


class ClaimedStrAccepted(ZooExecutor):
    """A handler result whose `__class__` claims `str` passes `isinstance` and then fails in
    `str.__str__` with a TypeError that does not name the tool.

    Reproduces the mutants of `RegistryExecutor.execute` that test the result with
    `isinstance` instead of `issubclass(type(result), str)`."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E9",)
    KNOWN_MISS: ClassVar[str | None] = (
        "E9's non-str return values are honest objects (int, None, bytes, list...); the "
        "strategy must also return an object whose __class__ property claims str, and require "
        "the TypeError to name the tool"
    )

    def result_outcome(self, spec: ToolSpec, result: object) -> ActionOutcome:
        if not isinstance(result, str):  # the bug: isinstance believes __class__
            raise TypeError(f"the handler of tool {spec.name!r} returned a non-str")
        return self.outcome(ActionStatus.EXECUTED, str.__str__(result), False)


class NonJsonLeavesShared(ZooExecutor):
    """Leaves that are not JSON scalars (a set of mutable objects, a `str` subclass carrying
    attributes) reach the handler by reference, so its mutation reaches the recorded call and
    every later call.

    Reproduces the mutants of `thaw`/`thaw_arguments`/`_copy_leaf` that skip the deep copy of
    such leaves."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E13",)
    KNOWN_MISS: ClassVar[str | None] = (
        "E13 draws JSON arguments only; the strategy must also put non-JSON leaves in the "
        "arguments (a set of objects hashed by identity with a mutable attribute, a str "
        "subclass with a list attribute, a bytearray, a non-str key object), have the vandal "
        "handler mutate them through every reference, and compare a fingerprint of the "
        "recorded call and of the next call's arguments"
    )

    def handler_arguments(self, call: ToolCall) -> object:
        return _thaw_sharing_leaves(call.arguments)


def _thaw_sharing_leaves(value: object) -> Any:
    if isinstance(value, Mapping):
        return {key: _thaw_sharing_leaves(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw_sharing_leaves(item) for item in value]
    if isinstance(value, frozenset):
        return set(value)  # the bug: a new set, but the same mutable items
    return value  # the bug: any other leaf is shared


class HostileKeyCrashesValidation(ZooExecutor):
    """A mapping key whose `__eq__` raises (hashed like a declared property) makes validation
    raise that error out of `execute` instead of rejecting the call.

    Reproduces the mutants of `_CompiledTool.problem` that drop the guard around the checks
    and of `_plain_key` that compare keys with their own `__eq__`."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("E2",)
    KNOWN_MISS: ClassVar[str | None] = (
        "the V and E2 strategies build arguments from JSON only; E2 must also draw arguments "
        "with a key object whose __hash__ equals a required or declared key's and whose "
        "__eq__ raises, a str subclass key with a raising __eq__, and a value whose class "
        "__name__ raises, and require a NOT_EXECUTED outcome (validate raises only "
        "ToolValidationError)"
    )

    def check_required(
        self, schema: Mapping[str, object], arguments: Mapping[str, object]
    ) -> str | None:
        required = schema.get("required")
        if not isinstance(required, (list, tuple)):
            return None
        # the bug: `in` runs the hostile key's own __eq__, and its error escapes
        missing = [key for key in required if isinstance(key, str) and key not in arguments]
        return f"missing required argument(s) {', '.join(map(repr, missing))}" if missing else None


class FalseTypeComplaint(ZooExecutor):
    """When a call is rejected for another reason, a property whose `type` is a list is judged
    by the first listed type only, so a valid value of a later type (null for
    ``["integer", "null"]``) is named as wrong in the message.

    Reproduces the `_type_rule` mutant `if len(names) == 1` → `if not len(names) == 1`: the
    subset's fast path still accepts every valid call, only the rejection message lies."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)
    KNOWN_MISS: ClassVar[str | None] = (
        "V4/V5/V6 check that the right keys are named, never that no other key is accused; "
        "the V6 property (or V8) must check that every key a rejection names as mistyped has "
        "a value of none of its declared types, drawing V4/V5-aimed calls whose other "
        "properties hold values of a later-listed type (null for ['integer', 'null'], a "
        "string for ['number', 'string'])"
    )

    def validate(self, call: ToolCall) -> None:
        try:
            super().validate(call)
        except ToolValidationError as exc:
            spec = self.registry.spec_for(call.name)
            arguments = call.arguments
            if spec is None or not isinstance(arguments, Mapping):
                raise
            properties = spec.parameters.get("properties")
            extra = []
            if isinstance(properties, Mapping):
                for key, value in arguments.items():
                    declared = getattr(properties.get(key), "get", lambda _k: None)("type")
                    if isinstance(declared, (list, tuple)) and len(declared) > 1:
                        first = declared[0]
                        if isinstance(first, str) and not self.type_matches(value, first):
                            extra.append(
                                f"{shorten(repr(key), 40)} must be {first!r}, "
                                f"got {self.json_type_name(value)}"
                            )
            if not extra or "must be" in str(exc):
                raise
            raise ToolValidationError(f"{exc}; " + "; ".join(extra)) from None


GAPS: tuple[type[ZooExecutor], ...] = (
    StrSystemExitEscapes,
    ExceptionNameCrashes,
    ClaimedStrAccepted,
    NonJsonLeavesShared,
    HostileKeyCrashesValidation,
    FalseTypeComplaint,
)
