"""The contract as documentation: the `catalog` command and the generated `docs/contract.md`.

Both render `conformance.catalog`, the single table of clauses, and add which entry point of
the kit checks each clause. Regenerate the page after changing the catalog:

    python -m conformance.docs --write docs/contract.md

`python -m conformance.docs --check docs/contract.md` exits 1 when the file is out of date (a
test in tests/kit does the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.catalog import CLAUSES, CONTRACT_VERSION, SECTIONS, Clause
from conformance.subjects import SUBJECTS

__all__ = [
    "ENTRY_POINTS",
    "REGENERATE",
    "catalog_json",
    "catalog_text",
    "checked_by",
    "contract_markdown",
    "main",
]

REGENERATE = "python -m conformance.docs --write docs/contract.md"

ENTRY_POINTS: dict[str, str] = {
    **{name: what for subject in SUBJECTS for name, what in subject.entry_points.items()},
    "metatests": "`polyloop-metatests check`: the API-evolution guard",
    "polyloop tests": "polyloop's own test suite (a property of the library, not of a target)",
}
"""Who checks clauses, as named in the catalog and in docs/contract.md: each registered
subject's entry points (`conformance.subjects`), then the library's own."""

_LIBRARY_HEADINGS: dict[str, str] = {
    "spec": "3. Tool specs",
    "registry": "4. The registry",
    "session": "7. Run requests",
    "api": "9. Public API evolution",
}
"""The headings of the sections no subject checks; each subject names its own."""

_HEADINGS: dict[str, str] = {
    section: heading
    for section in SECTIONS
    for heading in [
        _LIBRARY_HEADINGS.get(section)
        or next((s.headings[section] for s in SUBJECTS if section in s.headings), section)
    ]
}


def checked_by(clause: Clause) -> tuple[str, ...]:
    """The entry points (keys of `ENTRY_POINTS`) that check this clause.

    Read from the checks themselves, not kept as a second list: the registered subject whose
    clauses include it names its checkers (`Subject.checked_by`).
    """
    for subject in SUBJECTS:
        if clause.id in subject.clauses:
            return subject.checked_by
    if clause.section == "api":
        return ("metatests",)
    return ("polyloop tests",)


def catalog_json() -> dict[str, Any]:
    """The catalog as JSON data: contract version and every clause with its checkers."""
    return {
        "contract_version": CONTRACT_VERSION,
        "clauses": [
            {
                "id": clause.id,
                "level": clause.level,
                "section": clause.section,
                "title": clause.title,
                "summary": clause.summary,
                "checked_by": list(checked_by(clause)),
            }
            for clause in CLAUSES
        ],
    }


def catalog_text() -> str:
    """One line per clause: ID, level, title and who checks it."""
    width = max(len(clause.title) for clause in CLAUSES)
    lines = [f"polyloop tool contract {CONTRACT_VERSION}: {len(CLAUSES)} clauses", ""]
    section = None
    for clause in CLAUSES:
        if clause.section != section:
            section = clause.section
            if len(lines) > 2:
                lines.append("")
            lines.append(_HEADINGS.get(section, section))
        checkers = ", ".join(checked_by(clause))
        lines.append(f"  {clause.id:<4} {clause.level:<7}{clause.title:<{width}}  {checkers}")
    return "\n".join(lines)


def _table_cell(text: str) -> str:
    return text.replace("|", "\\|")


def contract_markdown() -> str:
    """The text of docs/contract.md."""
    out = [
        "# The polyloop tool contract: clause catalog",
        "",
        f"<!-- Generated from conformance/catalog.py by `{REGENERATE}`. Do not edit by hand:",
        "     tests/kit/test_docs.py fails when this file is out of date. -->",
        "",
        f"Contract version {CONTRACT_VERSION}, {len(CLAUSES)} clauses. This page is the "
        "contract as the project publishes it: every clause with its stable ID, its level, a "
        "one-paragraph summary and the entry points of the conformance kit that check it. The "
        "same rows drive test names, report lines and `polyloop-conformance catalog`; "
        "`docs/batch.md`, `docs/policy.md` and `docs/recovery.md` explain the later sections "
        "at length.",
        "",
        "**The design the contract keeps.** Every tool call a model makes becomes exactly one "
        "`ActionOutcome`, so the model always gets an answer: a call validation rejects is "
        "`NOT_EXECUTED` with the reason (for the audit record; the model's history shows a "
        "fixed text), a `ToolEnvironmentError` (the environment is broken, not the call) is "
        "`ENV_ERROR`, any other exception of a handler is an `EXECUTED` observation the model "
        "can read and correct, and cancellation is never turned into an outcome. Each tool "
        "also declares whether its calls may overlap "
        "(`concurrency_safe`) and whether it may run again when a crash left it unknown whether "
        "it ran (`replay_policy`: `SAFE` may, `NEVER` may not).",
        "",
        "**Levels.** `core`: what that design requires of any executor claiming conformance. "
        "`strict`: `core` plus this project's hardening (the clauses marked [H] in the "
        "contract), always required of polyloop's own implementation. `hardened` (opt-in): "
        "`strict`'s clauses plus traps built from objects that lie about themselves; polyloop's "
        "own tests certify its executor there, and **no third-party executor is expected to "
        "pass it**.",
        "",
        "**What certification judges.** At `core` and `strict` the kit judges realistic input "
        "only: calls as JSON decoding produces them (exact `str` tool names and keys; `str`, "
        "`int`, `float`, `bool`, `None`, mappings and lists, through `ToolCall`'s freezing), and "
        "handlers that behave as real code does: they return a value of an honest type (E9's "
        "non-`str` values are `None`, numbers, `bytes`, lists, dicts and an object of a user "
        "class; a `str` subclass is a `str`, as `isinstance` sees it) and raise an `Exception` "
        "of an honest class, however deep or odd its name or message (E4's name is "
        "`type(exc).__name__`; E12's exception has a `__str__` that raises an `Exception`). "
        "Deliberately left to an implementation's own tests (and to `hardened`): `str` "
        "subclasses with lying `__eq__`/`__hash__` as keys, metaclasses hiding `__name__`, a "
        "`__class__` that claims `str`, a `__str__` raising a `BaseException`, and non-JSON "
        "leaves in arguments. What the executor *returns* is judged without trusting it: an "
        "observation is read as an exact `str` copy, never through its own methods.",
        "",
        "**Checked by.**",
        "",
    ]
    out += [f"- **{name}**: {what}" for name, what in ENTRY_POINTS.items()]
    out += ["", "| ID | Level | Title | Checked by |", "|---|---|---|---|"]
    for clause in CLAUSES:
        anchor = clause.id.lower()
        checkers = ", ".join(checked_by(clause))
        out.append(
            f"| [{clause.id}](#{anchor}) | {clause.level} | {_table_cell(clause.title)} "
            f"| {checkers} |"
        )
    section = None
    for clause in CLAUSES:
        if clause.section != section:
            section = clause.section
            out += ["", f"## {_HEADINGS.get(section, section)}"]
        out += [
            "",
            f"### {clause.id}",
            "",
            f"**{clause.title}** · level `{clause.level}` · checked by "
            + ", ".join(checked_by(clause)),
            "",
            clause.summary,
        ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`python -m conformance.docs [--write PATH | --check PATH]`: print, write or check."""
    parser = argparse.ArgumentParser(
        prog="python -m conformance.docs", description="Generate docs/contract.md."
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="PATH", help="write the page to PATH")
    mode.add_argument("--check", metavar="PATH", help="exit 1 if PATH is not up to date")
    args = parser.parse_args(argv)
    text = contract_markdown()
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")
        return 0
    if args.check:
        path = Path(args.check)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            print(
                f"{path} is out of date; regenerate it with: "
                f"python -m conformance.docs --write {path}",
                file=sys.stderr,
            )
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
