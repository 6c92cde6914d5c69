"""Cheap checks on the specificity executors; the kit's own verdicts are in broken/README.md.

Running the kit on every module takes minutes, so `certify_all.py` does that by hand; this file
keeps the modules well-formed and checks a few exact outcomes without the kit.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

from polyloop import (
    Action,
    ActionExecutor,
    ActionOutcome,
    ActionStatus,
    ToolCall,
    ToolEnvironmentError,
    ToolRegistry,
    ToolSpec,
)

HERE = Path(__file__).parent
PACKAGE = __name__.rsplit(".", 1)[0]  # "tests.specificity" or "specificity", by rootdir
CLAUSES = {f"V{n}" for n in range(1, 9)} | {f"E{n}" for n in range(1, 16)}


def _modules(kind: str) -> list[ModuleType]:
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE / kind)]))
    return [
        importlib.import_module(f"{PACKAGE}.{kind}.{n}") for n in names if not n.startswith("_")
    ]


CORRECT = _modules("correct")
BROKEN = _modules("broken")


async def _echo(arguments: dict[str, object]) -> str:
    return f"q={arguments['q']}"


async def _boom(arguments: dict[str, object]) -> str:
    raise ToolEnvironmentError("backend down")


def _registry() -> ToolRegistry:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
        "additionalProperties": False,
    }
    return ToolRegistry(
        [
            ToolSpec(name="echo", description="echo q", parameters=schema, handler=_echo),
            ToolSpec(name="down", description="always down", parameters={}, handler=_boom),
        ]
    )


def _run(module: ModuleType, action: Action) -> ActionOutcome:
    executor = module.make_executor(_registry())
    return asyncio.run(executor.execute(action))


def test_the_sets_are_large_enough() -> None:
    assert len(CORRECT) >= 17
    assert len(BROKEN) >= 25


@pytest.mark.parametrize("module", CORRECT + BROKEN, ids=lambda m: m.__name__.rsplit(".", 2)[-2:])
def test_E15_every_module_has_a_factory_and_a_short_docstring(module: ModuleType) -> None:
    doc = inspect.getdoc(module) or ""
    assert 1 <= len(doc.strip().splitlines()) <= 4, module.__name__
    executor = module.make_executor(_registry())
    assert isinstance(executor, ActionExecutor)


@pytest.mark.parametrize("module", BROKEN, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_broken_modules_name_one_contract_clause(module: ModuleType) -> None:
    assert module.CLAUSE in CLAUSES


@pytest.mark.parametrize("module", CORRECT, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_E5_E2_E3_E1_exact_outcomes(module: ModuleType) -> None:
    done = _run(module, Action(tool_call=ToolCall(name="echo", arguments={"q": "hi"})))
    assert (done.status, done.observation, done.observation_is_synthetic) == (
        ActionStatus.EXECUTED,
        "q=hi",
        False,
    )
    missing = _run(module, Action(tool_call=ToolCall(name="echo", arguments={})))
    assert missing.status is ActionStatus.NOT_EXECUTED and "q" in missing.observation
    down = _run(module, Action(tool_call=ToolCall(name="down", arguments={})))
    assert (down.status, down.observation) == (ActionStatus.ENV_ERROR, "backend down")
    code = _run(module, Action(code="print(1)"))
    assert code.status is ActionStatus.NOT_EXECUTED and code.observation_is_synthetic
