"""Checks for tool authors: contract clauses H1-H6 for one tool, a registry or a schema file.

```python
from conformance.toolcheck import check_registry, check_tool

report = check_tool(my_spec)          # -> ToolReport; never raises for a finding
check_registry(my_registry)           # raises ToolCheckFailed (an AssertionError) on a finding
report = check_registry(my_registry, raise_on_failure=False)   # the non-raising variant
```

What each clause checks:

- **H1** the handler is async (an `async def` function, an object with `async def __call__`, or a
  `functools.partial` of either).
- **H2** `parameters` is a valid schema under the dialect its `$schema` names (2020-12 when
  absent), by jsonschema's metaschema check, with `"type": "object"` on top. A type name that
  is not JSON Schema's (`dict`, `float`, `tuple`, `any`, `strng`) gets a did-you-mean fix.
- **H3** the schema is satisfiable: no contradiction among its keywords (named by JSON path),
  hypothesis-jsonschema does not prove it empty, and the kit's generator finds an instance
  jsonschema accepts.
- **H4** for arguments generated from the schema (the generator `certify` uses: `$ref` inlined,
  every instance filtered through jsonschema under the schema's dialect, ints sometimes turned
  into floats): the
  registry's validator accepts them (V1), and the handler returns a `str` or raises an
  `Exception` within the deadline. Besides pass/fail, the report counts how often the handler
  raised on valid input and keeps the smallest such input.
- **H5** the model-visible schema survives `json.loads(json.dumps(...))` unchanged.
- **H6** (opt in with `replay=True`) a `SAFE` tool gives the same observation when the same call
  is replayed.

Accepted input: a `ToolSpec`; a `ToolDraft` (the same fields, unchecked, so a tool that
`ToolSpec` itself would refuse, e.g. with a sync handler or a set in its schema, can still be
diagnosed); a mapping in MCP (`inputSchema`), OpenAI/BFCL (`parameters`), OpenAI
`{"type": "function", "function": {...}}` or Anthropic (`input_schema`) form; or any object
with `name` and `parameters` attributes. Tools without a handler get the schema checks and the
V1 half of H4.

This is the kit's tools subject; its public name is `conformance.toolcheck`, which re-exports
everything here (and the `check-tools` command's parser). The package: `rows` (the H catalog
rows), `inputs` (drafts, JSON tool files, normalisation), `schema` (H2/H5 schema checks),
`satisfiable` (H3), `calls` (a handler call under the deadline), `engine` (the H4/H6 property),
`clauses` (one function per clause and the `CHECKS` table), `api`, `report`, `contract`.
"""

from __future__ import annotations

from conformance.tools import report
from conformance.tools.api import check_registry, check_tool, tool_property
from conformance.tools.contract import ToolContract
from conformance.tools.inputs import ToolDraft, load_tool_file
from conformance.tools.report import *  # noqa: F403 - the report's names are the package's

__all__ = [
    "ToolContract",
    "ToolDraft",
    "check_registry",
    "check_tool",
    "load_tool_file",
    "tool_property",
]
__all__ += report.__all__
