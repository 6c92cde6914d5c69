"""Measure the issue-9 zoo entries against the current kit (not run by pytest).

For every entry of `zoo.independent`: is it caught on its `VIOLATES` clauses at profile ci,
seed 0? If not, at ci with seeds 1-5? If not, at thorough (seed 0)? Which clauses fail
instead? For every entry of `zoo.independent_unusual`: which of its twist clauses the kit
fails (a false verdict). Prints one JSON line per entry, so a long run can be followed.

    python tests/zoo/measure_independent.py [--names A,B] [--no-thorough] [--unusual]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance import certify
from zoo.independent import INDEPENDENT, target_of
from zoo.independent_unusual import INDEPENDENT_UNUSUAL


def _run(entry: Any, only: list[str], profile: str, seed: int) -> tuple[set[str], float]:
    started = time.perf_counter()
    try:
        report = certify(target_of(entry), level="strict", profile=profile, seed=seed, only=only)
    except ValueError as exc:
        return {f"refused: {exc}"[:80]}, time.perf_counter() - started
    return set(report.failed_ids()), time.perf_counter() - started


def measure(entry: Any, thorough: bool) -> dict[str, Any]:
    wanted = set(entry.VIOLATES)
    row: dict[str, Any] = {"entry": entry.__name__, "violates": sorted(wanted)}
    failed, seconds = _run(entry, sorted(wanted), "ci", 0)
    row["ci0"] = sorted(failed)
    row["ci0_seconds"] = round(seconds, 1)
    if failed == wanted:
        row["verdict"] = "caught ci seed 0"
        return row
    for seed in range(1, 6):
        failed, _ = _run(entry, sorted(wanted), "ci", seed)
        if wanted <= failed:
            row["verdict"] = f"caught ci seed {seed}"
            row["failed_then"] = sorted(failed)
            return row
    if thorough:
        failed, seconds = _run(entry, sorted(wanted), "thorough", 0)
        row["thorough"] = sorted(failed)
        row["thorough_seconds"] = round(seconds, 1)
        if wanted <= failed:
            row["verdict"] = "caught thorough"
            return row
    row["verdict"] = "never (ci seeds 0-5" + (", thorough seed 0)" if thorough else ")")
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--names", default="")
    parser.add_argument("--no-thorough", action="store_true")
    parser.add_argument("--unusual", action="store_true")
    args = parser.parse_args()
    names = {n for n in args.names.split(",") if n}
    if args.unusual:
        for entry in INDEPENDENT_UNUSUAL:
            if names and entry.__name__ not in names:
                continue
            failed, seconds = _run(entry, list(entry.TWIST_CLAUSES), "ci", 0)
            print(
                json.dumps(
                    {
                        "entry": entry.__name__,
                        "failed": sorted(failed),
                        "seconds": round(seconds, 1),
                    }
                ),
                flush=True,
            )
        return
    for entry in INDEPENDENT:
        if names and entry.__name__ not in names:
            continue
        print(json.dumps(measure(entry, not args.no_thorough)), flush=True)


if __name__ == "__main__":
    main()
