"""Correct but unusual executors for the edges of issue 9: the kit must certify each of them.

Two validate with full JSON Schema engines other than the oracle's (``fastjsonschema`` and
``jsonschema-rs``), both stricter than the contract's subset (E14) and ECMA-262-regex aware
where they are; the others differ in how they run the handler (an anyio task group,
``asyncio.shield``, a concurrency-1 semaphore) or when they compile validation (lazily, per
tool, per executor). The third-party packages are imported lazily, so this module imports
without them; ``tests/kit/test_zoo_independent.py`` skips what is not installed.

`TWIST_CLAUSES` names the clauses each twist touches. `KNOWN_FALSE_VERDICTS` maps a clause the
kit wrongly fails today to why (that clause's test is then a strict xfail; the others must
pass).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from polyloop import ToolCall, ToolRegistry, ToolSpec, ToolValidationError

from .base import ZooExecutor, dialect_of, shorten, thaw

_VALIDATION = ("V1", "V2", "V4", "V5", "V6", "V7", "V8", "E2", "E14")
_HANDLER = ("E3", "E4", "E5", "E6", "E9", "E10", "E11", "E12", "E13")


class _StricterValidation(ZooExecutor):
    """The subset first (so V2–V6 keep their precise messages), then a full engine.

    An engine's rejection names only the tool (its messages quote values, V8). A schema the
    engine cannot compile, or an instance it cannot take, rejects nothing (V1).
    """

    TWIST_CLAUSES: ClassVar[tuple[str, ...]] = _VALIDATION
    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._compiled: dict[str, Callable[[Any], bool] | None] = {}

    def compile(self, schema: dict[str, Any]) -> Callable[[Any], bool] | None:
        """A predicate "the engine accepts this instance", or None when it cannot be built."""
        raise NotImplementedError

    def validate(self, call: ToolCall) -> None:
        super().validate(call)
        if call.name not in self._compiled:
            spec = self.registry.spec_for(call.name)
            assert spec is not None
            try:
                self._compiled[call.name] = self.compile(thaw(spec.parameters))
            except Exception:
                self._compiled[call.name] = None
        accepts = self._compiled[call.name]
        if accepts is None:
            return
        try:
            valid = accepts(thaw(call.arguments))
        except Exception:
            return  # e.g. an integer the engine cannot represent: not a verdict
        if not valid:
            raise ToolValidationError(
                f"arguments for tool {shorten(repr(call.name))} do not match its schema"
            )


class FastJsonSchemaValidation(_StricterValidation):
    """``fastjsonschema`` after the subset. It knows draft-04/06/07 (a 2019-09/2020-12 schema
    is compiled as draft-07, which only ignores more); ``format`` stays an annotation, as JSON
    Schema says (``use_formats=False``). Its ``pattern`` is Python ``re`` with ``$`` made
    strict (so ``"...\\n"`` fails ``^...$``, as in ECMA-262)."""

    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    def compile(self, schema: dict[str, Any]) -> Callable[[Any], bool] | None:
        import fastjsonschema

        if dialect_of(schema) == "modern" and "$schema" in schema:
            schema = {**schema, "$schema": "http://json-schema.org/draft-07/schema#"}
        check = fastjsonschema.compile(schema, use_formats=False)

        def accepts(instance: Any) -> bool:
            try:
                check(instance)
            except fastjsonschema.JsonSchemaValueException:
                return False
            return True

        return accepts


class JsonSchemaRsValidation(_StricterValidation):
    """``jsonschema-rs`` after the subset: every dialect, ECMA-262 regular expressions
    (``\\d`` is ASCII only, ``$`` is the end), ``format`` not asserted
    (``validate_formats=False``)."""

    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    def compile(self, schema: dict[str, Any]) -> Callable[[Any], bool] | None:
        import jsonschema_rs

        validator = jsonschema_rs.validator_for(schema, validate_formats=False)
        return lambda instance: bool(validator.is_valid(instance))


class LazilyCompiledValidation(ZooExecutor):
    """Compiles each tool's (subset) checks on the first call to it and keeps them for this
    executor only: its registry never changes, so the cache can never go stale."""

    TWIST_CLAUSES: ClassVar[tuple[str, ...]] = ("V1", "V4", "V5", "V6", "E2", "E11")
    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._plans: dict[str, tuple[tuple[str, ...], frozenset[str] | None]] = {}

    def _plan(
        self, name: str, schema: Mapping[str, Any]
    ) -> tuple[tuple[str, ...], frozenset[str] | None]:
        if name not in self._plans:
            required = schema.get("required")
            keys = (
                tuple(k for k in required if isinstance(k, str))
                if isinstance(required, list)
                else ()
            )
            properties = schema.get("properties")
            closed = (
                frozenset(properties if isinstance(properties, Mapping) else ())
                if self.additional_applies(schema)
                else None
            )
            self._plans[name] = (keys, closed)
        return self._plans[name]

    def check_name(self, call: ToolCall) -> ToolSpec:
        spec = super().check_name(call)
        self._plan(call.name, spec.parameters)
        return spec


class AnyioTaskGroupExecutor(ZooExecutor):
    """Runs each handler call in an anyio task group. The group would wrap whatever the
    handler raises in an ExceptionGroup (and would swallow a CancelledError the handler raises
    on its own), so the child boxes its result or exception, whatever it is, and the executor
    raises the handler's own object. Cancelling ``execute`` cancels the group, and so the
    handler; the group then re-raises the cancellation of the task that runs ``execute``."""

    TWIST_CLAUSES: ClassVar[tuple[str, ...]] = _HANDLER
    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        import anyio

        box: list[tuple[bool, object]] = []

        async def child() -> None:
            try:
                box.append((True, await ZooExecutor.invoke(self, spec, arguments)))
            except BaseException as exc:  # the handler's own, boxed past the group
                box.append((False, exc))

        async with anyio.create_task_group() as group:
            group.start_soon(child)
        ok, value = box[0]
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value


class ShieldedHandler(ZooExecutor):
    """Runs the handler as a task behind ``asyncio.shield`` (so a caller's timeout does not
    tear it down half-way); when ``execute`` itself is cancelled it cancels the handler,
    waits for it, and lets the cancellation propagate."""

    TWIST_CLAUSES: ClassVar[tuple[str, ...]] = _HANDLER
    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        task = asyncio.ensure_future(ZooExecutor.invoke(self, spec, arguments))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait({task})
            raise


class ConcurrencyOneSemaphore(ZooExecutor):
    """At most one handler runs at a time (``asyncio.Semaphore(1)``): validation stays
    concurrent, and E11 only asks that concurrent outcomes equal sequential ones."""

    TWIST_CLAUSES: ClassVar[tuple[str, ...]] = ("E5", "E6", "E8", "E11", "E13")
    KNOWN_FALSE_VERDICTS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self._slots = asyncio.Semaphore(1)

    async def invoke(self, spec: ToolSpec, arguments: object) -> object:
        async with self._slots:
            return await super().invoke(spec, arguments)


INDEPENDENT_UNUSUAL: tuple[Any, ...] = (
    FastJsonSchemaValidation,
    JsonSchemaRsValidation,
    LazilyCompiledValidation,
    AnyioTaskGroupExecutor,
    ShieldedHandler,
    ConcurrencyOneSemaphore,
)
"""Unusual but correct factories; each must certify on its `TWIST_CLAUSES`."""

REQUIRES: Mapping[str, str] = {
    FastJsonSchemaValidation.__name__: "fastjsonschema",
    JsonSchemaRsValidation.__name__: "jsonschema_rs",
    AnyioTaskGroupExecutor.__name__: "anyio",
}
"""Entry name -> the module it needs (the test skips the entry without it)."""
