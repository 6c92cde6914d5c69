"""The console scripts' entry points, and the check for the ``conformance`` extra.

``polyloop-conformance`` needs the extra (Hypothesis, hypothesis-jsonschema, jsonschema, pytest);
a plain ``pip install polyloop`` has none of it. So the script starts here, with the standard
library only: it answers ``--version``, and without the extra prints one line naming it and exits
2 instead of a traceback from deep inside the kit. ``polyloop-metatests`` is stdlib-only and
needs no extra; it starts here only for ``--version``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "CONFORMANCE_REQUIREMENTS",
    "conformance_main",
    "metatests_main",
    "missing_extra_message",
    "missing_requirements",
    "shadowing_file",
    "shadowing_message",
]

CONFORMANCE_REQUIREMENTS = ("hypothesis", "hypothesis_jsonschema", "jsonschema", "pytest", "regex")
"""The import names the ``conformance`` extra provides."""


def missing_requirements() -> list[str]:
    """The import names of the ``conformance`` extra that cannot be found (nothing is imported)."""
    missing = []
    for name in CONFORMANCE_REQUIREMENTS:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            found = False
        if not found:
            missing.append(name)
    return missing


def missing_extra_message(what: str, missing: Sequence[str]) -> str:
    """One line: `what` needs the extra, the modules missing, and the command that fixes it."""
    return (
        f"{what} needs the 'conformance' extra (missing: {', '.join(missing)}): "
        "pip install 'polyloop[conformance]' (from a checkout: pip install '.[conformance]')"
    )


_OWN_ROOT = Path(__file__).resolve().parent.parent
"""Where polyloop's own top-level packages (``conformance``, ``metatests``) are installed."""


def shadowing_file(package: str) -> str | None:
    """The file or folder the top-level name `package` resolves to, when that is not polyloop's
    own package of that name (say a project's ``tests/conformance.py`` on ``sys.path``); else
    None. Nothing is imported: a shadowed name fails later with a bare ``ImportError`` that
    names neither the clash nor the fix.
    """
    module = sys.modules.get(package)
    try:
        spec = importlib.util.find_spec(package) if module is None else module.__spec__
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    origin = spec.origin if spec.origin not in (None, "namespace") else None
    if origin is not None and Path(origin).resolve().parent == _OWN_ROOT / package:
        return None
    locations = list(spec.submodule_search_locations or ())
    where = origin or (str(locations[0]) if locations else None)
    return None if where is None else os.path.abspath(where)  # 3.10 keeps a "./" of sys.path


def shadowing_message(package: str, where: str) -> str:
    """One line: what shadows polyloop's `package`, and how to stop it."""
    return (
        f"the name '{package}' resolves to {where}, not to polyloop's {_OWN_ROOT / package}, "
        "which it shadows; rename that file or folder, or take its directory off sys.path "
        "(PYTHONPATH, or pytest's rootdir/conftest insertion)"
    )


def _shadowed(prog: str, package: str) -> bool:
    where = shadowing_file(package)
    if where is not None:
        print(f"{prog}: error: " + shadowing_message(package, where), file=sys.stderr)
    return where is not None


def _version_line(prog: str) -> str:
    from polyloop import __version__

    return f"{prog} {__version__}"


def conformance_main(argv: Sequence[str] | None = None) -> int:
    """``polyloop-conformance``: `conformance.cli.main` once the extra is known to be there."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(_version_line("polyloop-conformance"))
        return 0
    missing = missing_requirements()
    if missing:
        print(
            "polyloop-conformance: error: " + missing_extra_message("the command", missing),
            file=sys.stderr,
        )
        return 2
    if _shadowed("polyloop-conformance", "conformance"):
        return 2
    from conformance.cli import main

    return main(args)


def metatests_main(argv: Sequence[str] | None = None) -> int:
    """``polyloop-metatests``: `metatests.cli.main`, plus ``--version``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(_version_line("polyloop-metatests"))
        return 0
    if _shadowed("polyloop-metatests", "metatests"):
        return 2
    from metatests.cli import main

    return main(args)
