"""Running one subcommand through nothing but its own ``add_<name>_command`` registration,
so a test shows that the command wires itself (the one-CLI convention) without `main`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def run_registered(add_command: Callable[[Any], object], name: str, *argv: str) -> int:
    """Register `name` with `add_command` on a fresh parser, parse `argv` and run it."""
    parser = argparse.ArgumentParser(prog="polyloop-conformance")
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args([name, *argv])
    result: int = args.func(args)
    return result
