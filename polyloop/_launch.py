"""The console scripts' entry points, and the check for the ``conformance`` extra.

``polyloop-conformance`` needs the extra (Hypothesis, hypothesis-jsonschema, jsonschema, pytest);
a plain ``pip install polyloop`` has none of it. So the script starts here, with the standard
library only: it answers ``--version``, and without the extra prints one line naming it and exits
2 instead of a traceback from deep inside the kit. ``polyloop-metatests`` is stdlib-only and
needs no extra; it starts here only for ``--version``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

__all__ = [
    "CONFORMANCE_REQUIREMENTS",
    "conformance_main",
    "metatests_main",
    "missing_extra_message",
    "missing_requirements",
]

CONFORMANCE_REQUIREMENTS = ("hypothesis", "hypothesis_jsonschema", "jsonschema", "pytest")
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
    from conformance.cli import main

    return main(args)


def metatests_main(argv: Sequence[str] | None = None) -> int:
    """``polyloop-metatests``: `metatests.cli.main`, plus ``--version``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--version"]:
        print(_version_line("polyloop-metatests"))
        return 0
    from metatests.cli import main

    return main(args)
