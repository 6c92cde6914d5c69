"""Run the kit on every executor module of `correct/` or `broken/` and print one line per module.

Usage: python -m tests.specificity.certify_all correct|broken [--only IDS] [module ...]
Each module is certified at --level strict --profile ci --seed 0. For a broken module the line
says whether its CLAUSE failed, and whether with the very message the witness also fails with
(the known hostile-object traps), which does not count as catching the bug.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path


def _failures(target: str, only: str | None) -> dict[str, str]:
    cmd = [sys.executable, "-m", "conformance", "certify", target, "--level", "strict"]
    cmd += ["--profile", "ci", "--seed", "0", "--json", "-"]
    if only:
        cmd += ["--only", only]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"?": f"no report: {done.stderr.strip()[-300:]}"}
    return {
        r["id"]: json.dumps([r["message"], r["counterexample"]], sort_keys=True)
        for r in report["results"]
        if r["status"] == "fail"
    }


def main(argv: list[str]) -> None:
    kind, rest = argv[0], argv[1:]
    only = None
    if rest[:1] == ["--only"]:
        only, rest = rest[1], rest[2:]
    package = f"tests.specificity.{kind}"
    folder = Path(__file__).parent / kind
    names = rest or sorted(
        m.name for m in pkgutil.iter_modules([str(folder)]) if not m.name.startswith("_")
    )
    witness = _failures("tests.specificity.correct.witness:make_executor", only)
    if kind == "broken":
        print(f"{'witness':30} fails: {','.join(witness) or '-'}", flush=True)
    for name in names:
        failed = _failures(f"{package}.{name}:make_executor", only)
        clause = getattr(importlib.import_module(f"{package}.{name}"), "CLAUSE", None)
        listed = ",".join(failed) or "-"
        extra = ",".join(c for c in failed if c not in witness and c != clause) or "-"
        if clause is None:
            print(f"{name:30} fails: {listed}", flush=True)
            continue
        if clause not in failed:
            hit = "no"
        elif failed[clause] == witness.get(clause):
            hit = "trap"  # the same counterexample an honest executor fails on
        else:
            hit = "yes"
        print(f"{name:30} {clause:4} caught={hit:4} also: {extra:10} fails: {listed}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
