"""Field test of the API guard on two released versions of a real package.

Run by ``tox -e field-metatests``.

For a pair described by a JSON file next to this script (``openai_agents.json``):

1. ``pip install --target`` each version into its own folder under ``--work`` (two folders, not
   two venvs: one interpreter runs both, so only the package and its dependencies differ);
2. the guard records a baseline on the older (``update --allow-existing``, with the pair's
   ``--exclude`` patterns for optional extras) and checks the newer (``check``, in the child
   process as always), each with ``PYTHONPATH`` pointing at one folder;
3. ``signature_diff.py`` (independent of the guard) dumps both versions and diffs them; its
   result must equal the committed expectation ``expected-<distribution>-<old>-<new>.json``
   (``--write-expectation`` rewrites it);
4. the guard's verdict (what it judges breaking: failing, or allowed by a breaking version
   step) is compared with the expectation, class by class and clause by clause:
   any class the guard reports that the expectation does not (a false alarm), or the reverse (a
   miss), fails the run;
5. (``smoke.json``) numpy and pandas, installed with pytest, are scanned: each scan must end in
   a report with exit status 0 or 1, never a traceback.

Exit status 0 when the guard agrees exactly, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

_FINDINGS = """\
import json, sys
from metatests import check_package
report = check_package(sys.argv[1], sys.argv[2])
# Flagged: what the guard judges breaking, whether it fails or the version step allows it (a
# 0.x minor bump is a breaking step: openai-agents 0.18 -> 0.24 allows its breaks).
json.dump([[f.clause, f.code, f.subject, f.parameter, report.verdict(f) != "note"]
           for f in report.findings], sys.stdout)
"""


def _install(requirements: list[str], target: Path) -> None:
    """pip-install ``requirements`` into ``target`` once; the marker file makes reruns cheap."""
    if (target / ".installed").exists():
        return
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-warn-conflicts",
            "--target",
            str(target),
            *requirements,
        ],
        check=True,
    )
    (target / ".installed").write_text(" ".join(requirements))


def _env(target: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(target)}


def _run(args: list[str], target: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        env=_env(target),
        text=True,
        capture_output=True,
        timeout=900,
        **kwargs,
    )


def guard_verdict(config: dict[str, Any], old: Path, new: Path, work: Path) -> dict[str, Any]:
    baseline = work / "baseline.json"
    baseline.unlink(missing_ok=True)
    package = config["package"]
    excludes = [a for p, r in config["exclude"].items() for a in ("--exclude", f"{p}={r}")]
    started = time.monotonic()
    update = _run(
        [
            "-m",
            "metatests",
            "update",
            package,
            "--baseline",
            str(baseline),
            "--allow-existing",
            config["allow_existing"],
            *excludes,
        ],
        old,
    )
    print(update.stdout.splitlines()[0] if update.stdout else update.stderr.strip())
    if update.returncode != 0:
        raise SystemExit(
            f"update on {config['old']} failed ({update.returncode}):\n"
            f"{update.stdout}{update.stderr}"
        )
    check = _run(["-m", "metatests", "check", package, "--baseline", str(baseline)], new)
    elapsed = time.monotonic() - started
    print(check.stdout.splitlines()[0] if check.stdout else check.stderr.strip())
    print(f"guard: update + check took {elapsed:.1f} s; check exit status {check.returncode}")
    if check.returncode not in (0, 1) or "Traceback" in check.stdout + check.stderr:
        raise SystemExit(f"check crashed:\n{check.stdout}{check.stderr}")
    raw = _run(["-c", _FINDINGS, package, str(baseline)], new, check=True)
    findings = json.loads(raw.stdout)
    failing = [f for f in findings if f[4]]
    by: dict[str, set[str]] = {}
    for clause, code, subject, _param, _failing in failing:
        key = {
            "M4": "import_failures",
            "M1": "newly_positional",
            "M5": "match_args",
        }.get(clause)
        if clause == "M2":
            key = "allowlist_stale" if code == "allowlist-stale" else "allowlist_unknown"
        if clause == "M3":
            key = "constructor_breaks"
        by.setdefault(key or clause, set()).add(subject)
    return {
        "exit": check.returncode,
        "failures": len(failing),
        "classes": {k: sorted(v) for k, v in by.items()},
        "notes": sum(1 for f in findings if not f[4]),
    }


def reference(config: dict[str, Any], old: Path, new: Path, work: Path) -> dict[str, Any]:
    script = str(HERE / "signature_diff.py")
    excludes = [a for p in config["exclude"] for a in ("--exclude", p)]
    dumps = []
    for target, version in ((old, config["old"]), (new, config["new"])):
        out = work / f"signatures-{version}.json"
        _run([script, "dump", config["package"], str(out), *excludes], target, check=True)
        dumps.append(out)
    out = work / "diff.json"
    subprocess.run(
        [sys.executable, script, "diff", str(dumps[0]), str(dumps[1]), str(out)], check=True
    )
    diff: dict[str, Any] = json.loads(out.read_text())
    return diff


def expected_classes(diff: dict[str, Any]) -> dict[str, list[str]]:
    """The classes each clause must fail, from the independent diff."""
    return {
        "constructor_breaks": sorted({*diff["caller_breaks"], *diff["contract_only"]}),
        "match_args": sorted(diff["match_args"]),
        "newly_positional": diff["newly_positional"],
        "allowlist_stale": diff["allowlist_stale"],
        "allowlist_unknown": diff["allowlist_unknown"],
        "import_failures": [f.split(":")[0] for f in diff["import_failures"]],
    }


def smoke(work: Path) -> bool:
    """Scans that must end in a report (exit 0 or 1), never a traceback (``smoke.json``)."""
    config = json.loads((HERE / "smoke.json").read_text())
    target = work / "smoke"
    _install(config["install"], target)
    ok = True
    for package in config["scan"]:
        baseline = work / f"smoke-{package}.json"
        baseline.unlink(missing_ok=True)
        started = time.monotonic()
        run = _run(["-m", "metatests", "update", package, "--baseline", str(baseline)], target)
        elapsed = time.monotonic() - started
        lines = run.stdout.splitlines()
        reported = bool(lines) and lines[0].startswith(f"{package} ")
        crashed = "Traceback" in run.stdout + run.stderr or run.returncode not in (0, 1)
        m4 = sum(1 for line in lines if line.startswith("  [M4]"))
        verdict = "ok" if reported and not crashed else "CRASHED"
        print(
            f"smoke {package}: exit {run.returncode}, {m4} M4 findings, {elapsed:.1f} s: {verdict}"
            f" ({lines[0] if lines else run.stderr.strip()[:200]})"
        )
        ok = ok and reported and not crashed
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pair", nargs="?", default="openai_agents.json")
    parser.add_argument("--work", default=os.environ.get("FIELD_WORK", "/tmp/metatests-field"))
    parser.add_argument("--write-expectation", action="store_true")
    parser.add_argument("--no-smoke", action="store_true", help="skip the numpy/pandas scans")
    args = parser.parse_args(argv)
    config = json.loads((HERE / args.pair).read_text())
    work = Path(args.work) / config["distribution"]
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    old, new = work / config["old"], work / config["new"]
    _install([f"{config['distribution']}=={config['old']}"], old)
    _install([f"{config['distribution']}=={config['new']}"], new)
    print(
        f"installed {config['distribution']} {config['old']} and {config['new']}"
        f" in {time.monotonic() - started:.0f} s"
    )

    diff = reference(config, old, new, work)
    expectation = HERE / f"expected-{config['distribution']}-{config['old']}-{config['new']}.json"
    text = json.dumps(diff, indent=1, sort_keys=True) + "\n"
    if args.write_expectation:
        expectation.write_text(text)
        print(f"wrote {expectation.name}")
    elif expectation.read_text() != text:
        print(
            f"the independent diff no longer equals {expectation.name}: the environment"
            f" differs (dependency versions?); compare {work / 'diff.json'}"
        )
        return 1

    guard = guard_verdict(config, old, new, work)
    want = expected_classes(diff)
    ok = True
    print(f"public dataclasses (independent): {diff['classes']['old']} -> {diff['classes']['new']}")
    for key in sorted(set(want) | set(guard["classes"])):
        got, exp = set(guard["classes"].get(key, [])), set(want.get(key, []))
        false_alarms, misses = sorted(got - exp), sorted(exp - got)
        print(
            f"{key}: guard {len(got)}, independent {len(exp)},"
            f" false alarms {len(false_alarms)}, misses {len(misses)}"
        )
        for name in false_alarms:
            print(f"  false alarm: {name}")
        for name in misses:
            print(f"  missed: {name}")
        ok = ok and not false_alarms and not misses
    breaks = sum(len(v) for v in diff["caller_breaks"].values())
    print(
        f"independent: {len(diff['caller_breaks'])} classes with {breaks} caller-breaking"
        f" changes, {len(diff['contract_only'])} with changes only M3's order rule rejects,"
        f" {len(diff['match_args'])} __match_args__ changes"
    )
    print(
        f"guard: {guard['failures']} findings judged breaking or failing, {guard['notes']} notes,"
        f" exit {guard['exit']}"
    )
    if not args.no_smoke:
        ok = smoke(Path(args.work)) and ok
    print(f"field test {'PASSED' if ok else 'FAILED'} in {time.monotonic() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
