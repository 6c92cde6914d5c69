"""Issue 9, defect 10: a ``ci`` verdict depends only on the executor's behaviour, the kit and the
seed — never on the source text of the module that defines the target.

Hypothesis draws some values from the literals of every loaded "local" module (neither stdlib
nor site-packages). Two target modules that differ only in unrelated constants, loaded one
after the other into the same process, must give the kit identical example sequences.
The modules are written outside any ``tests`` directory (Hypothesis skips test files).
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import certify
from conformance._core import hypo

_TARGET = """
from polyloop import RegistryExecutor

SEEN = []

class Spy(RegistryExecutor):
    async def execute(self, action):
        SEEN.append(repr(action.tool_call))
        return await super().execute(action)
"""

_NOISE = """
UNRELATED = (
    {constants}
)
"""


def _load(directory: Path, name: str, source: str) -> ModuleType:
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _constants(salt: int) -> str:
    numbers = [2**63 - salt, -(10**6) - salt, 7 + salt, 3.25 + salt, 1e16 + salt]
    texts = [f"'; DROP TABLE t{salt}; --", f"read_file_{salt}", f"\\u00e9{salt}", f"key{salt}"]
    items = [*map(repr, numbers), *map(repr, texts)]
    return ",\n    ".join(items * 20)


def _certified_calls(module: ModuleType) -> tuple[list[str], Any]:
    report = certify(module.Spy, profile="ci", seed=0, only=["V1", "V8"])
    return list(module.SEEN), [(r.id, r.status, r.examples) for r in report.results]


def test_defect10_verdicts_do_not_depend_on_the_target_modules_constants(tmp_path: Path) -> None:
    directory = tmp_path / "targets"
    directory.mkdir()
    plain = _load(directory, "polyloop_defect10_plain", _TARGET)
    first = _certified_calls(plain)
    noisy = _load(
        directory,
        "polyloop_defect10_noisy",
        _TARGET + textwrap.dedent(_NOISE).format(constants=_constants(1)),
    )
    second = _certified_calls(noisy)
    assert first[1] == second[1]
    assert first[0] == second[0], "the examples differ once another module's constants loaded"
    assert len(first[0]) > 50


def test_defect10_the_hook_leaves_other_hypothesis_tests_alone() -> None:
    # Outside the kit's own settings Hypothesis keeps its behaviour: the hook is installed,
    # yet a plain @given test runs with plain settings and still draws.
    hypo.run_settings(None)
    drawn: list[int] = []

    @settings(max_examples=20, database=None)
    @given(st.integers())
    def plain(value: int) -> None:
        assert not isinstance(settings.default, hypo.KitSettings)
        drawn.append(value)

    plain()
    assert drawn
