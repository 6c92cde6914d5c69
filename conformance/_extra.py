"""Imported first by ``conformance/__init__.py``: without the ``conformance`` extra, importing
the kit fails with one line naming the extra, not a traceback from deep inside the kit."""

from __future__ import annotations

from polyloop._launch import missing_extra_message, missing_requirements

_missing = missing_requirements()
if _missing:
    raise ModuleNotFoundError(missing_extra_message("the polyloop conformance kit", _missing))
