"""Subset validation plus `jsonschema_rs`, which knows every dialect from draft-04 to 2020-12.

The Rust validator picks the dialect from `$schema` itself; formats stay annotations. It cannot
take read-only mappings, so it sees a plain copy; a value it cannot convert gets no verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import jsonschema_rs

from polyloop import ToolRegistry

from ._full import FullCheck, FullSchemaExecutor


class RustSchemaExecutor(FullSchemaExecutor):
    def build(self, schema: Mapping[str, object]) -> FullCheck | None:
        validator = jsonschema_rs.validator_for(dict(schema), validate_formats=False)

        def check(arguments: object) -> Sequence[object] | None:
            for error in validator.iter_errors(arguments):
                return list(error.instance_path)
            return None

        return check


def make_executor(registry: ToolRegistry) -> RustSchemaExecutor:
    return RustSchemaExecutor(registry)
