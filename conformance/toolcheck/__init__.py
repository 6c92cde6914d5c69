"""The public name of the kit's checks for tool authors (contract clauses H1-H6).

```python
from conformance.toolcheck import check_registry, check_tool, ToolContract
```

Everything `conformance.tools` (the tools subject) exports is here, plus
`add_check_tools_command`, which registers the ``check-tools`` command of the command line on
an argparse ``add_subparsers()`` object. This façade sits above the subject and the command
line: nothing in the kit imports it.
"""

from __future__ import annotations

import argparse
from typing import Any

from conformance.tools import *  # noqa: F403 - the subject's names are the façade's
from conformance.tools import __all__ as _TOOLS_ALL

__all__ = [*_TOOLS_ALL, "add_check_tools_command"]


def add_check_tools_command(subparsers: Any) -> argparse.ArgumentParser:
    """Register `check-tools` on a `parser.add_subparsers()` object (the command is defined in
    `conformance.cli` with the other commands)."""
    from conformance.cli import add_check_tools_command as register

    return register(subparsers)
