"""The policy subject of the kit: certify a runtime's tool-call policy against P1-P12.

The same inner shape as the batch subject: the catalog rows (`rows`) -> one property per
clause (`properties`) -> its check (`checks_decide`, `checks_run`) -> the harness (`harness`:
scripted, recorded and gated listeners and handlers; `oracle`: the sequential oracle;
`strategies`), run on the kit's deadline runner and searched by Hypothesis (`search`).

The factory contract: a policy factory is called ``factory(registry, policy=ToolPolicy(...))``
and returns an `ActionExecutor` that runs every accepted call through that policy; the kit
builds a fresh executor for every example, with listeners that record what they saw and
answer what the example drew.
"""

from __future__ import annotations

POLICY_CLAUSES: tuple[str, ...] = tuple(f"P{n}" for n in range(1, 13))
"""The clauses a policy certification checks, in contract order."""

__all__ = ["POLICY_CLAUSES"]
