"""What the hostile executors share: polyloop's own executor, with one hostile act added."""

from __future__ import annotations

from collections.abc import Mapping

from polyloop import Action, ActionOutcome, RegistryExecutor, ToolRegistry, ToolSpec


class Wrapped:
    """A correct executor (`RegistryExecutor`) that subclasses make hostile in `hostile()`."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._inner = RegistryExecutor(registry)
        self.registry = registry

    def parameters(self) -> Mapping[str, str]:
        return self._inner.parameters()

    def hostile(self) -> None:
        """The hostile act, done at the start of every ``execute``."""

    async def execute(self, action: Action) -> ActionOutcome:
        self.hostile()
        return await self._inner.execute(action)


async def _echo(text: str) -> str:
    return text


REGISTRY = ToolRegistry(
    specs=[
        ToolSpec(
            name="echo",
            description="echo the text",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            handler=_echo,
        )
    ]
)
"""A small registry for black-box runs of the hostile executors."""
