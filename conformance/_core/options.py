"""Reading the pytest plugin's ``--conformance-*`` options, for both contract base classes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ContractOptions", "contract_options"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ContractOptions:
    """The options of this pytest run; None where one was not given (or the plugin is absent)."""

    profile: str | None
    level: str | None
    seed: int | None
    database: str | None


def _option(config: Any, name: str) -> Any:
    try:
        return config.getoption(name)
    except ValueError:  # the plugin is not installed: no such option
        return None


def contract_options(request: Any) -> ContractOptions:
    """The ``--conformance-*`` options, read from a pytest ``request``."""
    config = request.config
    return ContractOptions(
        profile=_option(config, "conformance_profile"),
        level=_option(config, "conformance_level"),
        seed=_option(config, "conformance_seed"),
        database=_option(config, "conformance_db"),
    )
