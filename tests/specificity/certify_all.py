"""Run the kit on every executor module of `correct/` or `broken/` and print one line per module.

Usage: python -m tests.specificity.certify_all correct|broken [module ...]
Each module is certified at --level strict --profile ci --seed 0; broken ones also report their
CLAUSE and whether that clause failed.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path


def _failed(target: str, only: str | None) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "conformance",
        "certify",
        target,
        "--level",
        "strict",
        "--profile",
        "ci",
        "--seed",
        "0",
        "--json",
        "-",
    ]
    if only:
        cmd += ["--only", only]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return [f"<no report: {done.stderr.strip()[-300:]}>"]
    return [r["id"] for r in report["results"] if r["status"] == "fail"]


def main(argv: list[str]) -> None:
    kind, chosen = argv[0], argv[1:]
    package = f"tests.specificity.{kind}"
    folder = Path(__file__).parent / kind
    names = chosen or sorted(
        m.name for m in pkgutil.iter_modules([str(folder)]) if not m.name.startswith("_")
    )
    for name in names:
        target = f"{package}.{name}:make_executor"
        clause = getattr(importlib.import_module(f"{package}.{name}"), "CLAUSE", None)
        failed = _failed(target, None)
        if clause is None:
            print(f"{name:28} fails: {','.join(failed) or '-'}", flush=True)
        else:
            hit = "yes" if clause in failed else "no"
            print(
                f"{name:28} {clause:4} caught={hit:3} fails: {','.join(failed) or '-'}", flush=True
            )


if __name__ == "__main__":
    main(sys.argv[1:])
