"""Certification time per subject, beside the time the executor itself spends inside the run.

Run:  python bench/certify.py [--runs 3] [--profile ci] [--seed 0] [--against REV]
                             [--subject executor] [--subject batch]

Each subject is certified through the command line a user runs (``python -m conformance
certify ...``), so the times include starting the child process and importing the kit:

- ``executor``: ``certify`` of polyloop's own ``RegistryExecutor`` (the default target);
- ``batch``: ``certify polyloop:RegistryBatchExecutor``.

Per run it prints the wall time, the CPU time of the command and its child processes, and the
wall time spent inside the target's ``execute``/``execute_batch`` (overlapping calls counted
once), measured by a ``sitecustomize`` shim put on ``PYTHONPATH`` for the run only.

``--against REV`` checks REV out into a temporary ``git worktree`` and runs the same commands
there (``PYTHONPATH`` points at it), alternating the two trees run by run (the order flips every
round, so a load spike hits both alike), then prints medians and the ratio this tree / REV.
The machine may be shared: the load average before and after is printed, and CPU time is the
steadier figure when other jobs compete for the cores. Nothing here gates CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUBJECTS: dict[str, tuple[str, ...]] = {
    "executor": (),
    "batch": ("polyloop:RegistryBatchExecutor",),
}

_SHIM = '''
"""Written by bench/certify.py: time spent inside polyloop's execute/execute_batch."""
import functools, os, time

def _install():
    out = os.environ.get("POLYLOOP_BENCH_TIMES")
    if not out:
        return
    try:
        import polyloop
        from polyloop import batch as _batch
    except Exception:
        return
    state = {"active": 0, "since": 0.0, "total": 0.0, "calls": 0, "fd": None}

    def record():
        # Rewritten in place after every outermost call: the kit's child process may be
        # killed as soon as it has reported, so nothing is left for an exit hook.
        if state["fd"] is None:
            path = os.path.join(out, f"{os.getpid()}.txt")
            state["fd"] = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        line = f"{state['total']:20.6f} {state['calls']:12d}\\n".encode()
        os.pwrite(state["fd"], line, 0)

    def timed(method):
        @functools.wraps(method)
        async def wrapper(*args, **kwargs):
            if state["active"] == 0:
                state["since"] = time.perf_counter()
            state["active"] += 1
            state["calls"] += 1
            try:
                return await method(*args, **kwargs)
            finally:
                state["active"] -= 1
                if state["active"] == 0:
                    state["total"] += time.perf_counter() - state["since"]
                    record()
        return wrapper

    polyloop.RegistryExecutor.execute = timed(polyloop.RegistryExecutor.execute)
    _batch.RegistryBatchExecutor.execute_batch = timed(_batch.RegistryBatchExecutor.execute_batch)

_install()
'''


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    inside: float
    calls: int


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - no load average on this platform
        return "n/a"


def run_once(tree: Path, shim: Path, subject: str, profile: str, seed: int) -> Sample:
    """One certify command of `subject` with `tree` first on ``PYTHONPATH``."""
    times = Path(tempfile.mkdtemp(prefix="bench-times-"))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tree), str(shim)]),
        POLYLOOP_BENCH_TIMES=str(times),
    )
    command = [
        sys.executable,
        "-m",
        "conformance",
        "certify",
        *SUBJECTS[subject],
        "--profile",
        profile,
        "--seed",
        str(seed),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise SystemExit(f"{subject} in {tree}: exit {done.returncode}\n{tail}")
    inside, calls = 0.0, 0
    for path in times.glob("*.txt"):
        seconds, count = path.read_text().split()
        inside += float(seconds)
        calls += int(count)
    shutil.rmtree(times, ignore_errors=True)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Sample(wall=wall, cpu=cpu, inside=inside, calls=calls)


def _spread(values: list[float]) -> str:
    return f"{min(values):6.2f}–{max(values):<6.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per subject and tree")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--against", metavar="REV", help="a git revision to measure beside")
    parser.add_argument(
        "--subject", action="append", choices=sorted(SUBJECTS), help="default: every subject"
    )
    options = parser.parse_args(argv)
    subjects = options.subject or list(SUBJECTS)
    shim = Path(tempfile.mkdtemp(prefix="bench-shim-"))
    (shim / "sitecustomize.py").write_text(_SHIM)
    trees: dict[str, Path] = {"this tree": ROOT}
    worktree: Path | None = None
    if options.against:
        worktree = Path(tempfile.mkdtemp(prefix="bench-against-")) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), options.against],
            check=True,
            capture_output=True,
        )
        trees[options.against] = worktree
    samples: dict[tuple[str, str], list[Sample]] = {}
    print(f"load average before: {_load()}", flush=True)
    try:
        for round_ in range(options.runs):
            names = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            for subject in subjects:
                for name in names:
                    sample = run_once(trees[name], shim, subject, options.profile, options.seed)
                    samples.setdefault((subject, name), []).append(sample)
                    print(
                        f"run {round_ + 1}  {subject:8s} {name:12s} wall {sample.wall:6.2f} s  "
                        f"cpu {sample.cpu:6.2f} s  inside the executor {sample.inside:5.2f} s "
                        f"({sample.calls} calls)  load {_load()}",
                        flush=True,
                    )
    finally:
        if worktree is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                capture_output=True,
            )
        shutil.rmtree(shim, ignore_errors=True)
    print(f"load average after: {_load()}")
    print()
    print(f"medians of {options.runs} runs (profile {options.profile}, seed {options.seed}):")
    print(
        f"{'subject':8s} {'tree':12s} {'wall s':>7s} {'cpu s':>7s} {'inside s':>9s}"
        "   wall min–max    cpu min–max"
    )
    for subject in subjects:
        for name in trees:
            found = samples[(subject, name)]
            walls = [s.wall for s in found]
            cpus = [s.cpu for s in found]
            print(
                f"{subject:8s} {name:12s} {statistics.median(walls):7.2f} "
                f"{statistics.median(cpus):7.2f} "
                f"{statistics.median(s.inside for s in found):9.2f}   "
                f"{_spread(walls)}  {_spread(cpus)}"
            )
        if options.against:
            this = samples[(subject, "this tree")]
            base = samples[(subject, options.against)]
            wall_ratio = statistics.median(s.wall for s in this) / statistics.median(
                s.wall for s in base
            )
            cpu_ratio = statistics.median(s.cpu for s in this) / statistics.median(
                s.cpu for s in base
            )
            print(
                f"{subject:8s} ratio this tree / {options.against}: wall {wall_ratio:.2f}, "
                f"cpu {cpu_ratio:.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
