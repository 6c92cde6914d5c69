"""Time-to-detect for the zoo: how long `certify` takes to report each planted bug.

Run from the repository root::

    python tests/zoo/measure.py                 # each broken executor, only=its VIOLATES
    python tests/zoo/measure.py --full          # the whole strict level (also shows spill-over)
    python tests/zoo/measure.py --json out.json --jobs 2 CatchesValueError SharedResultSlot

Time-to-detect of one executor is the time `certify` (profile ``ci``, seed 0) spent on the
first of its `VIOLATES` clauses to be reported failing — generation, execution and shrinking
included — i.e. how long a user waits for the bug once the kit starts on the clause that
catches it. A bug that is not caught has no time-to-detect and is listed as missed. The script
prints one line per executor and then the median and worst time-to-detect across the zoo.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, so `zoo` imports

from zoo.broken import BROKEN

PROFILE = "ci"
SEED = 0


def measure(name: str, full: bool) -> dict[str, Any]:
    from conformance.engine import certify

    cls = next(c for c in BROKEN if c.__name__ == name)
    started = time.perf_counter()
    report = certify(
        cls, level="strict", profile=PROFILE, seed=SEED, only=None if full else cls.VIOLATES
    )
    wall = time.perf_counter() - started
    failed = sorted(report.failed_ids())
    caught = [r for r in report.results if r.id in cls.VIOLATES and r.status == "fail"]
    return {
        "name": name,
        "violates": sorted(cls.VIOLATES),
        "failed": failed,
        "exact": set(failed) == set(cls.VIOLATES),
        "missed": sorted(set(cls.VIOLATES) - {r.id for r in caught}),
        "extra": sorted(set(failed) - set(cls.VIOLATES)),
        "detect_seconds": min((r.seconds for r in caught), default=None),
        "clause_seconds": {r.id: round(r.seconds, 3) for r in report.results},
        "wall_seconds": round(wall, 3),
        "messages": {r.id: r.message for r in report.results if r.status in ("fail", "error")},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="broken executors to measure (default: all)")
    parser.add_argument("--full", action="store_true", help="certify the whole strict level")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    known = [c.__name__ for c in BROKEN]
    unknown = sorted(set(args.names) - set(known))
    if unknown:
        parser.error(f"unknown executors {unknown}; the zoo has {', '.join(known)}")
    names = args.names or known
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = []
        for row in pool.map(measure, names, [args.full] * len(names)):
            rows.append(row)
            detect = row["detect_seconds"]
            when = "missed" if detect is None else f"{detect:7.2f}s"
            verdict = "exact" if row["exact"] else f"MISMATCH failed={row['failed']}"
            print(
                f"{row['name']:<36} {','.join(row['violates']):<10} {when:>8}  {verdict}",
                flush=True,
            )
    times = [row["detect_seconds"] for row in rows if row["detect_seconds"] is not None]
    missed = [row["name"] for row in rows if row["detect_seconds"] is None]
    print()
    print(
        f"executors {len(rows)}   caught {len(times)}   missed {len(missed)}   "
        f"exact {sum(row['exact'] for row in rows)}"
    )
    if times:
        print(
            f"time-to-detect: median {statistics.median(times):.2f}s   "
            f"worst {max(times):.2f}s   ({'full strict' if args.full else 'only=VIOLATES'}, "
            f"profile {PROFILE}, seed {SEED})"
        )
    if missed:
        print(f"missed: {', '.join(missed)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
