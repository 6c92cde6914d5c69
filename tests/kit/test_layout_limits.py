"""Issue 8's size limits on the kit, kept true: no module in `conformance/` over 600 lines, no
function over 80. A module or function that grows past them is split where its parts are
separate ideas (as `engine.py` was into `_search.py`, `oracle.py` into `ground_truth.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conformance

MODULE_LIMIT = 600
FUNCTION_LIMIT = 80
_ROOT = Path(conformance.__file__).parent


def _modules() -> list[Path]:
    return sorted(_ROOT.rglob("*.py"))


def _long_functions(source: str, limit: int) -> list[tuple[int, str, int]]:
    """``(line, name, length)`` of every function or method longer than `limit` lines, counted
    from its ``def`` (decorators aside) to its last line, docstring included."""
    return [
        (node.lineno, node.name, length)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > limit
    ]


def test_the_kit_has_modules_to_measure() -> None:
    names = {path.name for path in _modules()}
    assert {"engine.py", "runner.py", "oracle.py", "dispatch.py", "checks.py"} <= names, sorted(
        names
    )


def test_no_kit_module_exceeds_600_lines() -> None:
    too_long = [
        f"{path.relative_to(_ROOT.parent)} ({lines} lines)"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LIMIT
    ]
    assert not too_long, f"modules over {MODULE_LIMIT} lines (split them): {too_long}"


def test_no_kit_function_exceeds_80_lines() -> None:
    too_long = [
        f"{path.relative_to(_ROOT.parent)}:{line} {name} ({length} lines)"
        for path in _modules()
        for line, name, length in _long_functions(path.read_text(encoding="utf-8"), FUNCTION_LIMIT)
    ]
    assert not too_long, f"functions over {FUNCTION_LIMIT} lines (split them): {too_long}"


@pytest.mark.parametrize("body, flagged", [(FUNCTION_LIMIT - 1, False), (FUNCTION_LIMIT, True)])
@pytest.mark.parametrize("indent", ["", "    "])
def test_the_measure_counts_def_to_last_line_of_functions_and_methods(
    body: int, flagged: bool, indent: str
) -> None:
    """The ``def`` line plus `body` lines: FUNCTION_LIMIT - 1 of them is exactly the limit."""
    header = "class C:\n" if indent else ""
    source = (
        f"{header}{indent}@staticmethod\n{indent}def f():\n"
        + f"{indent}    x = 1\n" * body
        + f"\n\n{indent}def g():\n{indent}    pass\n"
    )
    found = _long_functions(source, FUNCTION_LIMIT)
    assert found == ([(2 + bool(indent), "f", body + 1)] if flagged else []), found
