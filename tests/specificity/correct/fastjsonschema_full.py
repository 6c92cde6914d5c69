"""Subset validation plus `fastjsonschema`, used only for schemas declaring draft-04, -06 or -07.

Those are the dialects it implements; it fills in no defaults (E8), treats formats as
annotations and refuses remote `$ref`s; an error of its own means no verdict, never a rejection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import fastjsonschema

from polyloop import ToolRegistry

from ._full import FullCheck, FullSchemaExecutor

_DRAFTS = frozenset(f"json-schema.org/draft-0{n}/schema" for n in (4, 6, 7))


def _no_remote(uri: str) -> Any:
    raise ValueError(f"remote $ref {uri!r} is not fetched")


class FastJsonSchemaExecutor(FullSchemaExecutor):
    def build(self, schema: Mapping[str, object]) -> FullCheck | None:
        uri = schema.get("$schema")
        if not isinstance(uri, str) or uri.split("://", 1)[-1].rstrip("#") not in _DRAFTS:
            return None
        validate = fastjsonschema.compile(
            dict(schema),
            handlers={"http": _no_remote, "https": _no_remote},
            use_default=False,
            use_formats=False,
        )

        def check(arguments: object) -> Sequence[object] | None:
            try:
                validate(arguments)
            except fastjsonschema.JsonSchemaValueException as exc:
                return list(exc.path or [])[1:]
            return None

        return check


def make_executor(registry: ToolRegistry) -> FastJsonSchemaExecutor:
    return FastJsonSchemaExecutor(registry)
