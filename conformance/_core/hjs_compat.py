"""hypothesis-jsonschema on every Hypothesis the kit supports, old and new.

hypothesis-jsonschema 0.23.1 (the newest release) draws the keys of an object through a private
Hypothesis helper, ``hypothesis.internal.conjecture.utils.many``, with its old protocol::

    elements = cu.many(data, min_size=..., max_size=..., average_size=...)
    while elements.more():
        ...                      # draw one key and its value
        elements.reject()        # sometimes: that key does not count

Hypothesis 6.170.10 replaced that protocol with a context manager and an iterator
(``with many(...) as elements: for _ in elements: ...``) and removed ``more()``: every object
schema then fails with ``AttributeError: 'many' object has no attribute 'more'``.

This layer gives hypothesis-jsonschema's module, and nothing else, a ``cu`` whose ``many`` also
answers the old ``more()`` on top of the new protocol (`_LegacyMany`); every other name resolves
to Hypothesis's own module, and the new protocol passes straight through, so a later
hypothesis-jsonschema that uses it keeps working. On a Hypothesis whose ``many`` still has
``more()`` nothing is installed. The kit reaches hypothesis-jsonschema only through this module
(`from_schema`, `hjs_module`), so the layer is in place before the first schema is drawn.
``tests/test_dependency_smoke.py`` fails loudly when it stops working.
"""

from __future__ import annotations

import types
from typing import Any

import hypothesis_jsonschema._from_schema as hjs_module
from hypothesis.internal.conjecture import utils as _cu

__all__ = ["from_schema", "hjs_module", "needs_shim", "shim_installed"]

_DONE = object()


class _LegacyMany:
    """A Hypothesis ``many`` that also speaks the pre-6.170.10 ``while elements.more():``
    protocol, by driving the new ``with``/``for`` protocol one step per ``more()`` call."""

    def __init__(self, data: Any, *args: Any, **kwargs: Any) -> None:
        self._many: Any = _cu.many(data, *args, **kwargs)
        self._steps: Any = None  # the iterator of the new protocol, once `more()` has started it
        self._finished = False

    def more(self) -> bool:
        """Should another element be drawn (the old protocol)?"""
        if self._finished:
            return False
        if self._steps is None:
            self._many.__enter__()
            self._steps = iter(self._many)
        if next(self._steps, _DONE) is _DONE:
            self._finished = True
            self._many.__exit__(None, None, None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)

    # The new protocol, passed through untouched.
    def __enter__(self) -> Any:
        return self._many.__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        self._many.__exit__(*exc_info)

    def __iter__(self) -> Any:
        return iter(self._many)

    @property
    def count(self) -> int:
        return int(self._many.count)


class _UtilsWithLegacyMany(types.ModuleType):
    """Stands in for ``hypothesis.internal.conjecture.utils`` inside hypothesis-jsonschema only:
    ``many`` is `_LegacyMany`, every other name is Hypothesis's own."""

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__, real.__doc__)
        self.many = _LegacyMany
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def needs_shim() -> bool:
    """True when the installed Hypothesis's ``many`` lacks the ``more()`` hypothesis-jsonschema
    calls (Hypothesis 6.170.10 and later)."""
    return not hasattr(_cu.many, "more")


def shim_installed() -> bool:
    """True when hypothesis-jsonschema's module currently sees the compatible ``many``."""
    return isinstance(getattr(hjs_module, "cu", None), _UtilsWithLegacyMany)


def _install() -> None:
    if not needs_shim() or shim_installed():
        return
    if not (hasattr(_cu.many, "__enter__") and hasattr(_cu.many, "__iter__")):
        raise ImportError(
            "the installed Hypothesis's conjecture.utils.many has neither the old more() nor "
            "the new with/for protocol, so hypothesis-jsonschema cannot generate objects; "
            "install a Hypothesis version the kit supports (see the README, 'Supported versions')"
        )
    if not isinstance(getattr(hjs_module, "cu", None), types.ModuleType):
        raise ImportError(
            "hypothesis_jsonschema._from_schema no longer imports Hypothesis's conjecture utils "
            "as `cu`; conformance/_core/hjs_compat.py needs updating for this hypothesis-jsonschema"
        )
    hjs_module.cu = _UtilsWithLegacyMany(_cu)  # type: ignore[attr-defined]


# On import, so that `hjs_module` (hypothesis-jsonschema's internal builders, which the kit's
# strategies use directly) is compatible from the start too.
_install()


def from_schema(
    schema: Any,
    *,
    custom_formats: Any = None,
    allow_x00: bool = True,
    codec: str | None = "utf-8",
) -> Any:
    """`hypothesis_jsonschema.from_schema`, same signature, on any supported Hypothesis."""
    _install()
    return hjs_module.from_schema(
        schema, custom_formats=custom_formats, allow_x00=allow_x00, codec=codec
    )
