"""The import hook that serves a mutant's source for one module name (stdlib only): the
harness installs it in its judges (`run.py`), and the ``sitecustomize`` shim `run.py` writes
for child processes installs it from the file ``POLYLOOP_MUTANT`` names."""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from typing import Any


class MutantLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the mutated source for one module name; every other import is left alone."""

    def __init__(self, name: str, path: str, source: str) -> None:
        self.name, self.path, self.source = name, path, source

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.path)

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        module.__file__ = self.path
        exec(compile(self.source, self.path, "exec"), module.__dict__)


def install_from_environment() -> None:
    """In a child process: load the mutant the file named by ``POLYLOOP_MUTANT`` holds."""
    found = os.environ.get("POLYLOOP_MUTANT")
    if not found:
        return
    with open(found, encoding="utf-8") as file:
        mutant = json.load(file)
    sys.meta_path.insert(0, MutantLoader(mutant["name"], mutant["path"], mutant["source"]))
