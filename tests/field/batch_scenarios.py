"""A pytest plugin that runs polyloop's own batch scenarios (`tests/test_batch.py`) on a field
batch adapter instead of `RegistryBatchExecutor`.

    FIELD_BATCH_TARGET=field.agents_batch_adapter:AgentsBatchExecutor \\
        PYTHONPATH=tests pytest -p field.batch_scenarios tests/test_batch.py -k B

Every `Harness` the scenarios build gets ``Factory(harness.registry, max_concurrency=cap)`` as
its executor, in the way the kit will build a batch executor; the scenarios' oracle
(``harness.registry.executor()``, polyloop's own `execute`) is unchanged. So each scenario is
one B clause's example check, judged on the runtime. Until the kit certifies batch executors
(`conformance certify` on an ``execute_batch`` target), this is the field matrix's B evidence:
`test_field_batch.py` runs it per adapter and pins which scenarios fail.
"""

from __future__ import annotations

import importlib
import os
import signal
from typing import Any

import _batch_harness
import pytest

TARGET_VARIABLE = "FIELD_BATCH_TARGET"


def _factory() -> Any:
    module_name, _, name = os.environ[TARGET_VARIABLE].partition(":")
    return getattr(importlib.import_module(module_name), name)


_original_init = _batch_harness.Harness.__init__


def _patched_init(self: _batch_harness.Harness, cap: int = 10, journal: bool = True) -> None:
    _original_init(self, cap, journal)
    self.executor = _factory()(self.registry, max_concurrency=cap)


def pytest_configure(config: Any) -> None:
    if os.environ.get(TARGET_VARIABLE):
        _batch_harness.Harness.__init__ = _patched_init  # type: ignore[method-assign]


HANG_SECONDS = 30
"""A scenario still running after this long is stuck (each takes milliseconds when it ends):
it fails as a hang instead of stopping the whole run. Only a hang is judged by the clock."""


class ScenarioHang(Exception):
    """A scenario did not end: the adapter is still awaiting something nothing will release."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise ScenarioHang(f"the scenario did not end within {HANG_SECONDS} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    if not os.environ.get(TARGET_VARIABLE):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
