"""Six policy executors written from the contract alone (sections 5, 6, 11), each its own style.

`FACTORIES` maps a module name to its `factory(registry, policy)`; see README.md.
"""

from __future__ import annotations

from collections.abc import Callable

from polyloop import ActionExecutor, BatchExecutor, ToolPolicy, ToolRegistry

from . import composed, gathered, sequential, sequential_batch, staged, state_machine, worded

__all__ = ["BATCH_FACTORIES", "FACTORIES"]

FACTORIES: dict[str, Callable[[ToolRegistry, ToolPolicy | None], ActionExecutor]] = {
    "sequential": sequential.factory,
    "gathered": gathered.factory,
    "state_machine": state_machine.factory,
    "composed": composed.factory,
    "staged": staged.factory,
    "worded": worded.factory,
}

BATCH_FACTORIES: dict[str, Callable[..., BatchExecutor]] = {
    "sequential_batch": sequential_batch.batch_factory,
}
