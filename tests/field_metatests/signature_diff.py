"""An independent reference for the field test of the API guard: a plain ``inspect.signature``
diff of every public dataclass of two installed versions of a package.

It shares no code with ``metatests`` (it imports nothing from it) and judges by what a caller
can observe, not by the guard's rules:

* ``dump PACKAGE OUT.json [--exclude PATTERN ...]`` imports every public module of the package
  on ``sys.path`` and writes, per public dataclass, ``inspect.signature(cls)`` (name, kind,
  has-default of each parameter) and ``__match_args__``. Public: a non-underscore class defined
  in (or nested in a class of) a module with no underscore-prefixed part, or named in the
  ``__all__`` of such a module while defined inside the package.
* ``diff OLD.json NEW.json OUT.json`` lists what breaks between the two dumps, classified by
  trying the calls a caller of the old version could write against the new signature (see
  ``_breaks``), plus ``__match_args__`` changes and the keyword-only verdicts (M1/M2) the guard's
  contract adds.

Run it in one Python per version (``PYTHONPATH`` pointing at that version's install).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import importlib
import inspect
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any

P = inspect.Parameter


def _excluded(name: str, patterns: list[str]) -> bool:
    parts = name.split(".")
    return any(
        fnmatch.fnmatchcase(".".join(parts[: i + 1]), pat)
        for i in range(len(parts))
        for pat in patterns
    )


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def dump(package: str, patterns: list[str]) -> dict[str, Any]:
    failures = []
    modules = {}

    def load(name: str) -> Any:
        try:
            modules[name] = importlib.import_module(name)
            return modules[name]
        except BaseException as exc:
            failures.append(name + ": " + type(exc).__name__)
            return None

    root = load(package)
    todo = [root] if root is not None else []
    while todo:
        pkg = todo.pop()
        for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
            rel = info.name[len(package) + 1 :]
            if _private(rel) or _excluded(info.name, patterns):
                continue
            module = load(info.name)
            if module is not None and hasattr(module, "__path__"):
                todo.append(module)

    found: dict[str, type] = {}

    def visit(cls: type, name: str) -> None:
        found.setdefault(name, cls)
        for attr, obj in vars(cls).items():
            nested = isinstance(obj, type) and obj.__qualname__ == f"{cls.__qualname__}.{attr}"
            if nested and not attr.startswith("_"):
                visit(obj, f"{name}.{attr}")

    for mod_name, module in sorted(modules.items()):
        for attr, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and not attr.startswith("_")
                and obj.__module__ == mod_name
                and obj.__qualname__ == attr
            ):
                visit(obj, f"{mod_name}.{attr}")
    seen = {id(c) for c in found.values()}
    exports: dict[int, tuple[str, type]] = {}
    for mod_name, module in sorted(modules.items()):
        for attr in getattr(module, "__all__", ()) or ():
            if _excluded(f"{mod_name}.{attr}", patterns):
                continue
            try:
                obj = getattr(module, attr)
            except BaseException:
                failures.append(f"{mod_name}.{attr}: lazy load failed")
                continue
            if not isinstance(obj, type) or id(obj) in seen:
                continue
            if not (obj.__module__ or "").startswith(package):
                continue
            name = f"{mod_name}.{attr}"
            best = exports.get(id(obj))
            if best is None or (name.count("."), name) < (best[0].count("."), best[0]):
                exports[id(obj)] = (name, obj)
    for name, obj in exports.values():
        visit(obj, name)

    classes = {}
    for name, cls in sorted(found.items()):
        if not dataclasses.is_dataclass(cls):
            continue
        try:
            params = [
                [p.name, p.kind.name, p.default is not P.empty]
                for p in inspect.signature(cls).parameters.values()
            ]
        except (TypeError, ValueError):
            params = None
        match_args = getattr(cls, "__match_args__", None)
        classes[name] = {
            "parameters": params,
            "match_args": None if match_args is None else list(match_args),
        }
    return {"package": package, "classes": classes, "import_failures": sorted(failures)}


POSITIONAL = {"POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"}
KEYWORD = {"POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"}


def _breaks(old: list[list[Any]], new: list[list[Any]]) -> tuple[list[str], list[str]]:
    """(calls that break, changes only the contract's ordering rule rejects).

    A caller of the old version may pass the first k positional parameters by position and any
    keyword parameter by name, and must pass every parameter without a default. Each way that
    such a call fails against the new signature is one break, named by the parameter concerned.
    """
    o_pos = [p[0] for p in old if p[1] in POSITIONAL]
    n_pos = [p[0] for p in new if p[1] in POSITIONAL]
    o_by = {p[0]: p for p in old}
    n_by = {p[0]: p for p in new}
    n_var = {p[1] for p in new}
    breaks: list[str] = []
    contract: list[str] = []
    for i, name in enumerate(o_pos):  # a positional call reaching position i
        moved = i >= len(n_pos) or n_pos[i] != name
        if moved and ("VAR_POSITIONAL" not in n_var or i < len(n_pos)):
            breaks.append(
                f"position {i} was `{name}`, now "
                + (f"`{n_pos[i]}`" if i < len(n_pos) else "nothing")
            )
    for name, p in o_by.items():  # a keyword call
        gone = p[1] in KEYWORD and (name not in n_by or n_by[name][1] not in KEYWORD)
        if gone and ("VAR_KEYWORD" not in n_var or name in n_by):
            breaks.append(f"`{name}` cannot be passed by keyword")
        if p[1] == "VAR_POSITIONAL" and "VAR_POSITIONAL" not in n_var:
            breaks.append(f"`*{name}` gone")
        if p[1] == "VAR_KEYWORD" and "VAR_KEYWORD" not in n_var:
            breaks.append(f"`**{name}` gone")
    for name, p in n_by.items():  # a call that omits what had a default, or was not there
        if p[1] in ("VAR_POSITIONAL", "VAR_KEYWORD") or p[2]:
            continue
        if name not in o_by or o_by[name][2]:
            breaks.append(f"`{name}` is required")
    # The contract (M3) also keeps the recorded order of keyword-only parameters and refuses a
    # keyword-only parameter turning positional, though no call breaks.
    o_kw = [p[0] for p in old if p[1] == "KEYWORD_ONLY"]
    n_kw = [p[0] for p in new if p[1] == "KEYWORD_ONLY"]
    kept = [n for n in n_kw if n in o_kw]
    if kept != [o for o in o_kw if o in n_kw]:
        contract.append("keyword-only order changed")
    last = max((n_kw.index(n) for n in kept), default=-1)
    for i, n in enumerate(n_kw):
        if n not in o_by and i < last:
            contract.append(f"keyword-only `{n}` inserted before a recorded one")
    for name in o_kw:
        if name in n_by and n_by[name][1] in POSITIONAL:
            contract.append(f"keyword-only `{name}` became positional")
    return breaks, contract


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    complete = not new["import_failures"]
    out: dict[str, Any] = {"caller_breaks": {}, "contract_only": {}, "match_args": {}}
    positional_old = set()
    unreadable = {n for n, info in new["classes"].items() if info["parameters"] is None}
    out["unreadable_signatures"] = sorted(unreadable)
    for name, info in old["classes"].items():
        params = info["parameters"] or []
        if any(p[1] in POSITIONAL or p[1] == "VAR_POSITIONAL" for p in params):
            positional_old.add(name)
        now = new["classes"].get(name)
        if now is None:
            if complete:
                out["caller_breaks"][name] = ["class removed"]
            continue
        if info["parameters"] is not None and now["parameters"] is not None:
            breaks, contract = _breaks(info["parameters"], now["parameters"])
            if breaks:
                out["caller_breaks"][name] = breaks
            if contract:
                out["contract_only"][name] = contract
        o_m, n_m = info["match_args"], now["match_args"]
        if o_m != n_m and not (n_m is not None and (o_m is None or n_m[: len(o_m)] == o_m)):
            out["match_args"][name] = [o_m, n_m]
    # M1/M2 with the old version's positional classes allowlisted (``--allow-existing``).
    out["newly_positional"] = sorted(
        name
        for name, info in new["classes"].items()
        if name not in positional_old
        and any(p[1] in POSITIONAL or p[1] == "VAR_POSITIONAL" for p in info["parameters"] or [])
    )
    out["allowlist_stale"] = sorted(
        name
        for name in positional_old
        if name in new["classes"]
        and name not in unreadable
        and not any(
            p[1] in POSITIONAL or p[1] == "VAR_POSITIONAL"
            for p in new["classes"][name]["parameters"] or []
        )
    )
    out["allowlist_unknown"] = sorted(
        name for name in positional_old if name not in new["classes"] and complete
    )
    out["import_failures"] = new["import_failures"]
    out["classes"] = {"old": len(old["classes"]), "new": len(new["classes"])}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("package")
    d.add_argument("out")
    d.add_argument("--exclude", action="append", default=[])
    f = sub.add_parser("diff")
    f.add_argument("old")
    f.add_argument("new")
    f.add_argument("out")
    args = parser.parse_args(argv)
    if args.command == "dump":
        data = dump(args.package, args.exclude)
    else:
        data = diff(json.loads(Path(args.old).read_text()), json.loads(Path(args.new).read_text()))
    Path(args.out).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    import os

    code = main()
    sys.stdout.flush()
    os._exit(code)  # a scanned package's threads must not keep this process alive
