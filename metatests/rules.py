"""The compatibility rules (M1–M5): judge a scan against a baseline. Pure, so tests can feed it
hand-made baselines.

What callers depend on is the constructor, so M1 and M3 judge ``inspect.signature`` of the
class, in two groups: the parameters a caller may pass **by position** (their order matters to
every positional call) and the **keyword-only** ones.

* Appending a parameter with a default at the end of its group is the compatible change: every
  existing call still works. Anything else touching recorded parameters (insert, remove,
  rename, reorder, drop a default, change its kind) is *breaking*: it fails unless the
  package's major version is higher than the baseline's, in which case it is reported as
  allowed and ``update`` records it. (Inserting a keyword-only parameter with a default breaks
  no call, but the contract, M3, keeps the order of the record: it is breaking too.)
* A rename is reported only when it is unambiguous: both lists have the same length and differ
  only where a recorded name vanished and a new one appeared at the same position. Otherwise a
  removal that has a new parameter at its position says "removed `a`; added `b`".
* ``__match_args__`` may only grow at the end; any other change breaks positional ``case``
  patterns (M5).
* M1 (keyword-only, up to ``max_positional`` positional parameters), M2 (stale or unknown
  allowlist entries) and M4 (import failures, empty scan) are failures no version bump excuses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from metatests.fileformat import Baseline, RecordedClass
from metatests.model import POSITIONAL_KINDS, ClassInfo, ParamInfo, Scan
from metatests.report import RECORD, Finding, Report, short_version, template
from metatests.scan import is_excluded
from metatests.versions import step

__all__ = ["compare", "positional_excess"]

_CLAUSES = ("M4", "M1", "M2", "M3", "M5")

KEYWORD_ONLY_ORDER = True
"""Contract M3 keeps the recorded order of keyword-only parameters too, so inserting one with a
default before a recorded one, or reordering them, is breaking although no call breaks (the
field test counts these apart: pydantic-ai-slim 2.33 -> 2.68 has 27 classes failing only on
this). False would make both notes; change it only together with the contract's M3 text."""


def compare(
    scan: Scan,
    baseline: Baseline,
    *,
    baseline_path: str = "",
    accept: Mapping[str, str] | None = None,
    extra_exclude: Collection[str] = (),
    updating: bool = False,
) -> Report:
    """Judge a scan against a baseline.

    ``accept`` (class -> reason) lets the breaking changes of those classes pass (``update
    --accept-break``). ``extra_exclude`` names the patterns given on ``check``'s command line
    rather than recorded: one that hides a recorded class fails. ``updating`` makes a version
    that went backwards a failure (``update`` would record the older version).
    """
    moved = step(baseline.version, scan.version) if baseline.version is not None else "unknown"
    bump = moved == "breaking"
    complete = not scan.import_failures  # "missing" means nothing while a module is unreadable
    findings: list[Finding] = []
    if moved == "backwards":
        findings.append(
            Finding(
                clause="M3",
                code="version-backwards",
                subject=scan.package,
                change=f"the version went backwards: {short_version(baseline.version)} recorded,"
                f" {short_version(scan.version)} now (read from `__version__`, else the"
                " distribution metadata, which an editable install leaves stale)",
                fix="reinstall the package (`pip install -e .` again) or set `__version__`;"
                " `update` refuses to record an older version",
                kind="failure" if updating else "note",
            )
        )
    findings += _unrecorded_exclusions(scan, baseline, extra_exclude)

    for failure in scan.import_failures:
        findings.append(
            Finding(
                clause="M4",
                code="import-failed",
                subject=failure.module,
                change=f"failed to import ({failure.error})",
                fix=f"make it importable, or leave it out: `--exclude '{failure.module}=why'`",
                kind="failure",
            )
        )
    if scan.import_failures and baseline.classes:
        findings.append(
            Finding(
                clause="M4",
                code="incomplete-scan",
                subject=scan.package,
                change="removed classes and unknown allowlist entries are not judged while a"
                " module fails to import",
                fix="fix or exclude the modules above",
                kind="note",
            )
        )
    if not scan.classes:
        findings.append(
            Finding(
                clause="M4",
                code="empty-scan",
                subject=scan.package,
                change="no public dataclass found (an empty scan guards nothing)",
                fix="check the package name, and that its modules import",
                kind="failure",
            )
        )

    for name, info in scan.classes.items():
        if name not in baseline.allowlist:
            findings += _keyword_only(info, baseline.max_positional, baseline.allowlist)
    findings += _allowlist(scan, baseline, complete=complete)

    for name in _vanished(baseline.classes, scan, complete=complete):
        findings.append(
            Finding(
                clause="M3",
                code="class-removed",
                subject=name,
                change="public dataclass was removed (or is no longer public)",
                fix=f"restore `{name}`",
                kind="breaking",
            )
        )
    for name, old in baseline.classes.items():
        now = scan.classes.get(name)
        if now is not None:
            findings += _constructor(name, old, now, migrated=baseline.format < 2)
            findings += _match_args(name, old.match_args, now.match_args)
            findings += _wrapped(name, old, now)
    for name in scan.classes.keys() - baseline.classes.keys():
        findings.append(
            Finding(
                clause="M3",
                code="class-added",
                subject=name,
                change="new public dataclass",
                fix=RECORD,
                kind="note",
            )
        )

    findings = _with_causes(findings, scan)
    accepted = {name: reason for name, reason in (accept or {}).items()}
    return Report(
        package=scan.package,
        version=scan.version,
        baseline_path=baseline_path,
        baseline_version=baseline.version,
        major_bump=bump,
        step=moved,
        classes=len(scan.classes),
        findings=tuple(sorted(findings, key=_order)),
        max_positional=baseline.max_positional,
        excluded=tuple(
            (
                p,
                baseline.exclude.get(p, ""),
                "baseline" if p in baseline.exclude else "command line",
            )
            for p in scan.excluded
        ),
        accepted=tuple(sorted(accepted.items())),
        fresh=not baseline.classes and baseline.version is None,
        output=scan.output,
        migrated_from=baseline.format if baseline.format < 3 else None,
        unexported=scan.unexported,
        locations={
            name: info.source for name, info in scan.classes.items() if info.source is not None
        },
    )


def _unrecorded_exclusions(scan: Scan, baseline: Baseline, extra: Collection[str]) -> list[Finding]:
    """A check-time exclusion may not hide what the baseline recorded: that would hide its
    regressions. Recording it (``update --exclude 'PATTERN=why'``) makes it visible for good."""
    findings = []
    for pattern in extra:
        if pattern in baseline.exclude:
            continue
        hidden = [n for n in (*baseline.classes, *baseline.allowlist) if is_excluded(n, [pattern])]
        if not hidden:
            continue
        shown = ", ".join(f"`{n}`" for n in sorted(set(hidden))[:3])
        more = len(set(hidden)) - 3
        findings.append(
            Finding(
                clause="M4",
                code="exclusion-unrecorded",
                subject=pattern,
                change=f"excluded on the command line, but the baseline records"
                f" {len(set(hidden))} class{'es' * (len(set(hidden)) != 1)} there ({shown}"
                + (f" and {more} more" if more > 0 else "")
                + "): their changes would go unjudged",
                fix=f"record the exclusion with its reason: `update --exclude '{pattern}=why'`,"
                " or drop it",
                kind="failure",
            )
        )
    return findings


def _with_causes(findings: list[Finding], scan: Scan) -> list[Finding]:
    """Name one base class as the cause of the same change in many classes deriving from it,
    so the report can print one group instead of a thousand lines."""
    buckets: dict[tuple[str, str, str], list[int]] = {}
    for i, f in enumerate(findings):
        if f.clause in ("M1", "M2", "M3", "M5") and f.subject in scan.classes:
            buckets.setdefault((f.clause, f.code, template(f.change)), []).append(i)
    out = list(findings)
    for indexes in buckets.values():
        todo = list(indexes)
        while len({findings[i].subject for i in todo}) >= GROUP_AT:
            counts: dict[str, set[str]] = {}
            for i in todo:
                subject = findings[i].subject
                for base in (subject, *scan.classes[subject].bases):
                    counts.setdefault(base, set()).add(subject)
            base, members = max(counts.items(), key=lambda kv: (len(kv[1]), kv[0]))
            if len(members) < GROUP_AT:
                break
            for i in todo:
                if findings[i].subject in members:
                    out[i] = replace(findings[i], cause=base)
            todo = [i for i in todo if findings[i].subject not in members]
    return out


GROUP_AT = 5
"""Classes sharing a change and a base before the report prints them as one group."""


def _order(finding: Finding) -> tuple[int, str, int]:
    return (_CLAUSES.index(finding.clause), finding.subject, 0 if finding.parameter is None else 1)


def _wrapped(name: str, old: RecordedClass, now: ClassInfo) -> list[Finding]:
    """Say on the class that the constructor a caller meets is not the one measured."""
    if now.wrapper is None:
        return []
    return [
        Finding(
            clause="M3",
            code="constructor-wrapped",
            subject=name,
            change=now.wrapper,
            fix="nothing to do; the baseline records which signature was judged",
            kind="note",
        )
    ]


def _ticks(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "nothing"


def positional_excess(info: ClassInfo, max_positional: int) -> tuple[str, ...]:
    """The positional parameters beyond the threshold (``*args`` always counts)."""
    named = [p.name for p in info.parameters or () if p.kind in POSITIONAL_KINDS]
    star = [f"*{p.name}" for p in info.parameters or () if p.kind == "var_positional"]
    return (*named[max_positional:], *star)


def _keyword_only(
    info: ClassInfo, max_positional: int, allowlist: Collection[str] = ()
) -> list[Finding]:
    if info.signature_error is not None:
        return [
            Finding(
                clause="M1",
                code="signature-unreadable",
                subject=info.name,
                change=f"its constructor signature cannot be read ({info.signature_error})",
                fix="give it an inspectable `__init__`, or list it in the baseline's allowlist"
                " with a reason",
                kind="failure",
            )
        ]
    excess = positional_excess(info, max_positional)
    if not excess:
        return []
    positional = info.positional
    plural = "s" if len(positional) > 1 else ""
    allowed = f"; at most {max_positional} allowed" if max_positional else ""
    return [
        Finding(
            clause="M1",
            code="positional",
            subject=info.name,
            change=f"takes positional parameter{plural} {_ticks(positional)}{allowed}",
            fix=_keyword_only_fix(info, excess, allowlist)
            + ", or list it in the baseline's allowlist with a reason",
            kind="failure",
        )
    ]


def _keyword_only_fix(
    info: ClassInfo, excess: Sequence[str], allowlist: Collection[str] = ()
) -> str:
    """Name the class to change for every positional parameter: where it is declared."""
    star = [p for p in excess if p.startswith("*")]
    named = [p for p in excess if not p.startswith("*")]
    parts = []
    if info.init_owner is not None:
        where = f"the hand-written `{info.init_owner}.__init__`"
        if named:
            parts.append(f"make {_ticks(named)} keyword-only in {where} (a `*` before them)")
        if star:
            parts.append(f"remove {_ticks(star)} from {where}")
        return "; ".join(parts)
    declared = dict(info.declared_in)
    by_class: dict[str, list[str]] = {}
    for p in named:
        by_class.setdefault(declared.get(p, info.name), []).append(p)
    for owner, params in by_class.items():
        inherited = " (inherited)" if owner != info.name else ""
        if owner != info.name and owner in allowlist:
            # The base stays positional on purpose: changing it would break its own callers.
            parts.append(
                f"`{owner}` is allowlisted, so leave it positional: re-declare {_ticks(params)}"
                f" in `{info.name}` after `_: KW_ONLY` (a subclass may make inherited fields"
                " keyword-only)"
            )
            continue
        parts.append(
            f"declare `{owner}`{inherited} `@dataclass(kw_only=True)` (or put `_: KW_ONLY`"
            f" before {_ticks(params)})"
        )
    if star:
        parts.append(f"remove {_ticks(star)} from the constructor")
    return "; ".join(parts)


def _vanished(recorded: Iterable[str], scan: Scan, *, complete: bool) -> list[str]:
    """The recorded names the scan no longer finds, outside excluded modules. Judged only when
    the scan is complete: a module that fails to import hides its classes, it does not remove
    them."""
    if not complete:
        return []
    return [
        name
        for name in recorded
        if name not in scan.classes and not is_excluded(name, scan.excluded)
    ]


def _allowlist(scan: Scan, baseline: Baseline, *, complete: bool) -> list[Finding]:
    findings = [
        Finding(
            clause="M2",
            code="allowlist-unknown",
            subject=name,
            change=f"allowlist entry names no public dataclass of {scan.package}",
            fix="remove the unknown allowlist entry (or correct its name)",
            kind="failure",
        )
        for name in _vanished(baseline.allowlist, scan, complete=complete)
    ]
    for name in baseline.allowlist:
        info = scan.classes.get(name)
        if info is None or info.signature_error is not None:
            continue
        if not positional_excess(info, baseline.max_positional):
            findings.append(
                Finding(
                    clause="M2",
                    code="allowlist-stale",
                    subject=name,
                    change="allowlisted, but it is keyword-only now"
                    if not info.positional
                    else "allowlisted, but it is within the positional threshold now",
                    fix="remove the stale allowlist entry",
                    kind="failure",
                )
            )
    return findings


def _group(kind: str) -> str:
    if kind in POSITIONAL_KINDS:
        return "positional"
    return kind  # keyword_only, var_positional, var_keyword


_KIND_WORDS = {
    "positional_only": "positional-only",
    "positional_or_keyword": "positional",
    "keyword_only": "keyword-only",
    "var_positional": "`*args`",
    "var_keyword": "`**kwargs`",
}


def _constructor(
    name: str, old_class: RecordedClass, now: ClassInfo, *, migrated: bool
) -> list[Finding]:
    if old_class.parameters is None or now.parameters is None:
        return []  # an unreadable signature is M1's finding; nothing to compare
    old = list(old_class.parameters)
    if migrated:
        # Format 1 recorded every field; an init=False field was never a parameter.
        not_init = {f.name for f in now.fields if not f.init}
        names_now = {p.name for p in now.parameters}
        old = [p for p in old if p.name in names_now or p.name not in not_init]
    if (
        now.judged == "outer"
        and old_class.judged == "outer"
        and now.outer is not None
        and old_class.outer is not None
        and not _accepts_anything(now.outer)
    ):
        # A wrapper with a signature of its own: that is what callers bind to.
        return _parameters(name, list(old_class.outer), list(now.outer))
    findings = _parameters(name, old, list(now.parameters))
    why = _binds_every_call(old_class, now)
    if why is None:
        return findings
    return [
        replace(f, kind="note", change=f"{f.change} — no call breaks: {why}", fix=RECORD)
        if f.kind == "breaking"
        else f
        for f in findings
    ]


def _accepts_anything(params: Iterable[ParamInfo]) -> bool:
    kinds = {p.kind for p in params}
    return {"var_positional", "var_keyword"} <= kinds


def _binds_every_call(old: RecordedClass, now: ClassInfo) -> str | None:
    """Why no recorded call can fail to bind now, or None. The guard never calls the
    constructor, so it judges binding only: a ``(*args, **kwargs)`` constructor or a wrapper
    that does more than forward accepts every call at the signature a caller meets."""
    if now.judged == "outer" and now.outer is not None and _accepts_anything(now.outer):
        return (
            "callers meet a `(*args, **kwargs)` wrapper that does more than forward (the"
            " guard does not call it to see what it refuses)"
        )
    if old.judged == "outer" and old.outer is not None and _accepts_anything(old.outer):
        return (
            "the recorded constructor was a `(*args, **kwargs)` wrapper the guard could not judge"
        )
    if (
        now.parameters is not None
        and _accepts_anything(now.parameters)
        and not (old.parameters is not None and _accepts_anything(old.parameters))
    ):
        return (
            "the constructor takes `(*args, **kwargs)` now, so every recorded call still"
            " binds (a forwarding shim?); what it forwards to is not judged"
        )
    return None


def _m3(
    name: str, code: str, param: str | None, change: str, fix: str, *, note: bool = False
) -> Finding:
    """One M3 finding about a constructor parameter of `name` (a note, or a breaking change)."""
    return Finding(
        clause="M3",
        code=code,
        subject=name,
        parameter=param,
        change=change,
        fix=fix,
        kind="note" if note else "breaking",
    )


def _parameters(name: str, old: list[ParamInfo], new: list[ParamInfo]) -> list[Finding]:
    findings: list[Finding] = []

    def add(code: str, param: str | None, change: str, fix: str, *, note: bool = False) -> None:
        findings.append(_m3(name, code, param, change, fix, note=note))

    old_var = {p.kind: p for p in old if p.kind in ("var_positional", "var_keyword")}
    new_var = {p.kind: p for p in new if p.kind in ("var_positional", "var_keyword")}
    old_named = [p for p in old if p.kind not in old_var]
    new_named = [p for p in new if p.kind not in new_var]
    old_by = {p.name: p for p in old_named}
    new_by = {p.name: p for p in new_named}

    renamed: dict[str, ParamInfo] = {}
    if len(old_named) == len(new_named):
        pairs = [(o, n) for o, n in zip(old_named, new_named, strict=True) if o.name != n.name]
        if all(o.name not in new_by and n.name not in old_by for o, n in pairs):
            renamed = {o.name: n for o, n in pairs}
    consumed = {n.name for n in renamed.values()}
    for o_name, n in renamed.items():
        add("parameter-renamed", o_name, f"renamed to `{n.name}`", f"restore the name `{o_name}`")

    for i, o in enumerate(old_named):
        if o.name in new_by or o.name in renamed:
            continue
        at = new_named[i] if i < len(new_named) else None
        if at is not None and at.name not in old_by and at.name not in consumed:
            consumed.add(at.name)  # one finding for the pair: a rename or not, we cannot tell
            add(
                "parameter-removed",
                o.name,
                f"removed `{o.name}`; added `{at.name}` at its position",
                f"restore `{o.name}` (a new parameter goes after the last one, with a default)",
            )
        else:
            add("parameter-removed", o.name, "removed", f"restore `{o.name}`")

    for group in ("positional", "keyword_only"):
        findings += _group_changes(name, group, old_named, new_named, consumed)

    for o in old_named:
        if o.name not in new_by:
            continue
        n = new_by[o.name]
        if n.kind != o.kind:
            if o.kind == "positional_only" and n.kind == "positional_or_keyword":
                add(
                    "kind-changed",
                    o.name,
                    "may be passed by keyword now",
                    RECORD,
                    note=True,
                )
            else:
                add(
                    "kind-changed",
                    o.name,
                    f"became {_KIND_WORDS[n.kind]} (was {_KIND_WORDS[o.kind]})",
                    f"make `{o.name}` {_KIND_WORDS[o.kind]} again",
                )
        if o.has_default and not n.has_default:
            add("default-removed", o.name, "lost its default", f"give `{o.name}` its default back")
        elif n.has_default and not o.has_default:
            add("default-added", o.name, "gained a default", RECORD, note=True)

    for kind, word in (("var_positional", "extra positional"), ("var_keyword", "extra keyword")):
        if kind in old_var and kind not in new_var:
            star = "*" if kind == "var_positional" else "**"
            p = old_var[kind].name
            add(
                "var-removed",
                f"{star}{p}",
                f"no longer accepts {word} arguments",
                f"restore `{star}{p}`",
            )
        elif kind in new_var and kind not in old_var:
            star = "*" if kind == "var_positional" else "**"
            p = new_var[kind].name
            add("var-added", f"{star}{p}", f"accepts {word} arguments now", RECORD, note=True)
    return findings


def _group_changes(
    name: str,
    group: str,
    old_named: list[ParamInfo],
    new_named: list[ParamInfo],
    consumed: set[str],
) -> list[Finding]:
    """Additions and reordering within one group (positional, or keyword-only)."""
    old_names = [p.name for p in old_named if _group(p.kind) == group]
    new_params = [p for p in new_named if _group(p.kind) == group]
    new_names = [p.name for p in new_params]
    all_old = {p.name for p in old_named}
    findings: list[Finding] = []

    def add(code: str, param: str | None, change: str, fix: str, *, note: bool = False) -> None:
        findings.append(_m3(name, code, param, change, fix, note=note))

    # Survivors: recorded parameters still in this group (a kind change is reported apart).
    survivors = [i for i, n in enumerate(new_names) if n in old_names]
    last = max(survivors, default=-1)
    label = "" if group == "positional" else " keyword-only"
    for i, p in enumerate(new_params):
        if p.name in all_old or p.name in consumed:
            continue
        if i > last:
            if p.has_default:
                add(
                    "parameter-appended",
                    p.name,
                    f"appended{label} with a default",
                    RECORD,
                    note=True,
                )
            else:
                add(
                    "parameter-appended-without-default",
                    p.name,
                    f"appended{label} without a default (calls that omit it break)",
                    f"give `{p.name}` a default",
                )
        else:
            before = next(new_names[j] for j in survivors if j > i)
            harmless = group == "keyword_only" and p.has_default and not KEYWORD_ONLY_ORDER
            who = (
                f"; calls passing `{before}` or a later parameter by position break"
                if group == "positional"
                else "; no keyword call breaks, but M3 keeps the recorded order"
                if p.has_default
                else ""
            )
            add(
                "parameter-inserted",
                p.name,
                f"inserted{label} before `{before}`"
                + (" (with a default" if p.has_default else " (without a default")
                + f"{who})",
                RECORD
                if harmless
                else f"move `{p.name}` after the last{label} parameter, with a default",
                note=harmless,
            )
    common_old = [n for n in old_names if n in new_names]
    common_new = [n for n in new_names if n in old_names]
    if common_old != common_new:
        harmless = group == "keyword_only" and not KEYWORD_ONLY_ORDER
        add(
            "parameters-reordered",
            None,
            f"{group.replace('_', '-')} parameters reordered: recorded {_ticks(common_old)},"
            f" now {_ticks(common_new)}",
            RECORD if harmless else f"restore the order {_ticks(common_old)}",
            note=harmless,
        )
    return findings


def _match_args(
    name: str, old: tuple[str, ...] | None, new: tuple[str, ...] | None
) -> list[Finding]:
    if old == new:
        return []
    if new is not None and (old is None or new[: len(old)] == old):
        return [
            Finding(
                clause="M5",
                code="match-args-extended",
                subject=name,
                change=f"`__match_args__` grew from {_tuple(old)} to {_tuple(new)}",
                fix=RECORD,
                kind="note",
            )
        ]
    return [
        Finding(
            clause="M5",
            code="match-args-changed",
            subject=name,
            change=f"`__match_args__` changed from {_tuple(old)} to {_tuple(new)}"
            " (positional `case` patterns break)",
            fix=f"restore `__match_args__` to {_tuple(old)} (it may only grow at the end)",
            kind="breaking",
        )
    ]


def _tuple(value: tuple[str, ...] | None) -> str:
    return "None" if value is None else repr(value)
