"""The values a scan produces, and their JSON form (the scan runs in a child process).

A public dataclass is described by its **constructor**: the parameters of
``inspect.signature(cls)`` in order (name, kind, whether it has a default). That is what callers
depend on, so M1 and M3 judge it; the dataclass fields are recorded for information only
(``field(init=False)`` fields are not parameters; ``InitVar``s and a hand-written ``__init__``'s
parameters are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "JUDGED",
    "KINDS",
    "POSITIONAL_KINDS",
    "ClassInfo",
    "FieldInfo",
    "ImportFailure",
    "Judged",
    "Kind",
    "ParamInfo",
    "Scan",
    "scan_from_json",
    "scan_to_json",
]

Kind = Literal[
    "positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"
]
KINDS: tuple[Kind, ...] = (
    "positional_only",
    "positional_or_keyword",
    "var_positional",
    "keyword_only",
    "var_keyword",
)
Judged = Literal["unwrapped", "outer"]
JUDGED: tuple[Judged, ...] = ("unwrapped", "outer")
"""Which constructor signature M3 judges: after unwrapping decorators (the contract's default,
also when a wrapper only forwards), or the one a caller meets (a wrapper that does more)."""

POSITIONAL_KINDS: frozenset[str] = frozenset({"positional_only", "positional_or_keyword"})
"""Named parameters a caller may pass by position (``*args`` is counted separately)."""


@dataclass(frozen=True, kw_only=True)
class ParamInfo:
    """One constructor parameter as a caller sees it."""

    name: str
    kind: Kind
    has_default: bool


@dataclass(frozen=True, kw_only=True)
class FieldInfo:
    """One dataclass field, for information: ``init=False`` fields are not parameters."""

    name: str
    init: bool


@dataclass(frozen=True, kw_only=True)
class ClassInfo:
    """What the baseline records about one public dataclass, plus what M1's fix-its need."""

    name: str
    """Public qualified name: ``package.module.Class`` or ``package.module.Outer.Inner``."""
    parameters: tuple[ParamInfo, ...] | None
    """The constructor's parameters without ``self``; None when the signature is unreadable."""
    fields: tuple[FieldInfo, ...]
    match_args: tuple[str, ...] | None
    signature_error: str | None = None
    declared_in: tuple[tuple[str, str], ...] = ()
    """(parameter, class whose body declares it) for positional parameters; for fix-its."""
    init_owner: str | None = None
    """The class whose hand-written ``__init__`` is the constructor, if not the generated one."""
    outer: tuple[ParamInfo, ...] | None = None
    """The signature of the callable a caller meets (decorators not unwrapped), when it differs
    from ``parameters``: a ``functools.wraps`` wrapper, say."""
    judged: Judged = "unwrapped"
    """Which of the two M3 judges (see ``JUDGED``)."""
    wrapper: str | None = None
    """What the guard found about the wrapper, for the report (None when not wrapped)."""
    bases: tuple[str, ...] = ()
    """Public names of the package's classes in the MRO (nearest first): for grouping findings
    that one changed base causes."""
    source: tuple[str, int] | None = None
    """(file, line of the ``class`` statement), for annotations; None when not known for sure."""

    @property
    def positional(self) -> tuple[str, ...]:
        """Parameters a caller may pass positionally, ``*args`` included (as ``*name``)."""
        return tuple(
            p.name if p.kind in POSITIONAL_KINDS else f"*{p.name}"
            for p in self.parameters or ()
            if p.kind in POSITIONAL_KINDS or p.kind == "var_positional"
        )


@dataclass(frozen=True, kw_only=True)
class ImportFailure:
    module: str
    """The module, or ``module.name`` for a name in its ``__all__`` whose lazy load failed."""
    error: str


@dataclass(frozen=True, kw_only=True)
class Scan:
    package: str
    version: str | None
    classes: dict[str, ClassInfo]
    """Public dataclasses by public qualified name, sorted."""
    import_failures: tuple[ImportFailure, ...]
    modules: tuple[str, ...]
    """Modules imported by the scan, sorted."""
    excluded: tuple[str, ...] = ()
    """The ``--exclude`` patterns the scan honoured: nothing matching them was judged."""
    output: tuple[str, ...] = ()
    """A summary of what the scanned modules printed (captured, never mixed into the report)."""
    unexported: tuple[str, ...] = ()
    """Dataclasses defined in private modules and bound by a public module that has no
    ``__all__``: public to a reader, left out by M4 (reported, never judged)."""


def scan_to_json(scan: Scan) -> dict[str, Any]:
    return {
        "package": scan.package,
        "version": scan.version,
        "classes": [_class_to_json(info) for info in scan.classes.values()],
        "import_failures": [[f.module, f.error] for f in scan.import_failures],
        "modules": list(scan.modules),
        "excluded": list(scan.excluded),
        "output": list(scan.output),
        "unexported": list(scan.unexported),
    }


def scan_from_json(data: dict[str, Any]) -> Scan:
    classes = [_class_from_json(item) for item in data["classes"]]
    return Scan(
        package=data["package"],
        version=data["version"],
        classes={info.name: info for info in classes},
        import_failures=tuple(
            ImportFailure(module=module, error=error) for module, error in data["import_failures"]
        ),
        modules=tuple(data["modules"]),
        excluded=tuple(data["excluded"]),
        output=tuple(data["output"]),
        unexported=tuple(data.get("unexported", ())),
    )


def _class_to_json(info: ClassInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "parameters": None
        if info.parameters is None
        else [[p.name, p.kind, p.has_default] for p in info.parameters],
        "fields": [[f.name, f.init] for f in info.fields],
        "match_args": None if info.match_args is None else list(info.match_args),
        "signature_error": info.signature_error,
        "declared_in": [list(pair) for pair in info.declared_in],
        "init_owner": info.init_owner,
        "outer": None
        if info.outer is None
        else [[p.name, p.kind, p.has_default] for p in info.outer],
        "judged": info.judged,
        "wrapper": info.wrapper,
        "bases": list(info.bases),
        "source": None if info.source is None else list(info.source),
    }


def _class_from_json(data: dict[str, Any]) -> ClassInfo:
    params = data["parameters"]
    return ClassInfo(
        name=data["name"],
        parameters=None
        if params is None
        else tuple(ParamInfo(name=n, kind=k, has_default=d) for n, k, d in params),
        fields=tuple(FieldInfo(name=n, init=i) for n, i in data["fields"]),
        match_args=None if data["match_args"] is None else tuple(data["match_args"]),
        signature_error=data["signature_error"],
        declared_in=tuple((p, c) for p, c in data["declared_in"]),
        init_owner=data["init_owner"],
        outer=None
        if data["outer"] is None
        else tuple(ParamInfo(name=n, kind=k, has_default=d) for n, k, d in data["outer"]),
        judged=data["judged"],
        wrapper=data["wrapper"],
        bases=tuple(data["bases"]),
        source=None if data.get("source") is None else (data["source"][0], data["source"][1]),
    )
