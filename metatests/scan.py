"""Discover the public dataclasses of a package and measure their constructors (M1, M4, M5).

Public (M4) means either

* defined in a module whose dotted path has no ``_``-prefixed part, under a qualified name with no
  ``_``-prefixed part (nested classes count: ``Outer.Inner`` is public when both names are), or
* listed in the ``__all__`` of such a public module, even when defined in a private module or
  under a private name. It is then recorded under the public name a caller imports it by (the
  shortest exporting module, then alphabetical), so moving the implementation between private
  modules does not look like a removal.

A class counts once, at its home: ``cls.__module__`` + ``cls.__qualname__`` when that path leads
back to the class. Classes whose path does not resolve (``make_dataclass`` before Python 3.12
sets ``__module__`` to ``"types"``; classes built inside functions) are adopted by the deepest
package module that binds them under their own ``__name__``. Classes defined outside the package
are never counted, even when re-exported: their evolution is their own package's business.

Privacy is judged below the scanned package, so scanning ``_vendor.lib`` explicitly works.

The scan imports every public module; ``walk_packages`` also imports each package it descends
into, private ones included. Private plain modules are not imported, so a ``__main__`` or a
platform-specific helper never runs during a scan. Any import failure is recorded, never skipped.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import importlib.util
import inspect
import pkgutil
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ClassInfo",
    "FieldInfo",
    "ImportFailure",
    "MetatestsError",
    "PackageNotFoundError",
    "Scan",
    "is_private_path",
    "major_version",
    "scan_package",
]


class MetatestsError(Exception):
    """A usage or input error (exit status 2): the check could not be run at all."""


class PackageNotFoundError(MetatestsError):
    """The package to scan cannot be found at all: a usage error, not a failed check."""


@dataclass(frozen=True, kw_only=True)
class FieldInfo:
    """One dataclass field as a caller of the constructor sees it."""

    name: str
    has_default: bool
    kw_only: bool
    declared_in: str = ""
    """Qualified name of the class whose body declares the field; for messages only."""


@dataclass(frozen=True, kw_only=True)
class ClassInfo:
    """What the baseline records about one public dataclass, plus what M1 needs."""

    name: str
    """Public qualified name: ``package.module.Class`` or ``package.module.Outer.Inner``."""
    fields: tuple[FieldInfo, ...]
    match_args: tuple[str, ...] | None
    positional: tuple[str, ...]
    """Constructor parameters a caller may pass positionally (M1 wants none)."""
    signature_error: str | None = None


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


def is_private_path(dotted: str) -> bool:
    """True when any part of a dotted module path or qualified name starts with ``_``."""
    return any(part.startswith("_") for part in dotted.split("."))


def major_version(version: str | None) -> int | None:
    """The leading integer of a version string (``"2.0.1"`` -> 2, ``"v3rc1"`` -> 3)."""
    if version is None:
        return None
    match = re.match(r"\s*v?(\d+)", version)
    return int(match.group(1)) if match else None


def scan_package(package: str) -> Scan:
    """Import every public module of ``package`` and describe its public dataclasses.

    Raises PackageNotFoundError when the package cannot be found; every other import error is
    recorded in ``Scan.import_failures`` (the caller decides that the check fails).
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as exc:
        raise PackageNotFoundError(f"cannot find package {package!r}: {_one_line(exc)}") from exc
    if spec is None:
        raise PackageNotFoundError(
            f"no importable package named {package!r} (is it installed or on sys.path?)"
        )

    failures: dict[str, str] = {}
    imported: list[str] = []
    root = _import(package, failures)
    if root is not None:
        imported.append(package)
        for module_name in _walk(root, failures):
            if _private(module_name, package) or module_name in failures:
                continue
            if _import(module_name, failures) is not None:
                imported.append(module_name)

    modules = _package_modules(package)
    classes = _public_dataclasses(package, modules, failures)
    return Scan(
        package=package,
        version=_version(package, root),
        classes={name: classes[name] for name in sorted(classes)},
        import_failures=tuple(
            ImportFailure(module=name, error=failures[name]) for name in sorted(failures)
        ),
        modules=tuple(sorted(imported)),
    )


def _private(name: str, package: str) -> bool:
    return is_private_path(name[len(package) + 1 :]) if name != package else False


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _import(name: str, failures: dict[str, str]) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # a module may fail in any way; record, never skip
        failures[name] = _one_line(exc)
        return None


def _walk(root: types.ModuleType, failures: dict[str, str]) -> list[str]:
    path = getattr(root, "__path__", None)
    if path is None:  # a plain module: nothing below it
        return []

    def onerror(name: str) -> None:
        # walk_packages calls this from inside its `except`, so the exception is still current.
        exc = sys.exc_info()[1]
        failures[name] = _one_line(exc) if exc is not None else "failed to import"

    names: list[str] = []
    try:
        for info in pkgutil.walk_packages(path, root.__name__ + ".", onerror=onerror):
            names.append(info.name)
    except SystemExit as exc:
        # walk_packages only catches Exception; it yields a package before importing it, so the
        # last name is the culprit. The walk cannot resume, and the failure fails the check.
        if names:
            failures[names[-1]] = _one_line(exc)
    return sorted(names)


def _package_modules(package: str) -> dict[str, types.ModuleType]:
    # sys.modules also holds the private modules the public ones imported: they are homes too.
    prefix = package + "."
    return {
        name: module
        for name, module in sorted(sys.modules.copy().items())
        if (name == package or name.startswith(prefix)) and isinstance(module, types.ModuleType)
    }


def _in_package(module_name: str, package: str) -> bool:
    return module_name == package or module_name.startswith(package + ".")


def _resolves(cls: type) -> bool:
    """True when ``cls.__module__`` + ``cls.__qualname__`` leads back to ``cls``."""
    obj: Any = sys.modules.get(cls.__module__)
    try:
        for part in cls.__qualname__.split("."):
            if obj is None:
                return False
            obj = getattr(obj, part, None)
    except Exception:  # a module __getattr__ that fails means: not found there
        return False
    return obj is cls


def _homes(package: str, modules: dict[str, types.ModuleType]) -> dict[type, str]:
    """Map each top-level class of the package to its home: the dotted path where it is defined."""
    homes: dict[type, str] = {}
    orphans: dict[type, str] = {}  # class -> module adopting it
    for module_name, module in modules.items():  # sorted, so ties go to the first name
        for attr, obj in list(vars(module).items()):
            if not isinstance(obj, type):
                continue
            if _resolves(obj):
                if obj.__module__ == module_name and obj.__qualname__ == attr:
                    homes[obj] = f"{module_name}.{attr}"
            elif attr == obj.__name__:
                # Deepest wins: definitions usually sit below the modules re-exporting them.
                adopted = orphans.get(obj)
                if adopted is None or module_name.count(".") > adopted.count("."):
                    orphans[obj] = module_name
    for cls, module_name in orphans.items():
        homes.setdefault(cls, f"{module_name}.{cls.__name__}")
    return {cls: home for cls, home in homes.items() if _in_package(home, package)}


def _nested(cls: type, name: str) -> Iterator[tuple[type, str]]:
    """Yield ``cls`` and the classes defined in its body (recursively), with dotted names."""
    yield cls, name
    for attr, obj in list(vars(cls).items()):
        if isinstance(obj, type) and obj.__qualname__ == f"{cls.__qualname__}.{attr}":
            yield from _nested(obj, f"{name}.{attr}")


def _public_dataclasses(
    package: str, modules: dict[str, types.ModuleType], failures: dict[str, str]
) -> dict[str, ClassInfo]:
    defined = {
        inner: name
        for cls, home in _homes(package, modules).items()
        for inner, name in _nested(cls, home)
    }
    public = {cls: name for cls, name in defined.items() if not _private(name, package)}

    # Re-exports: a class listed in a public module's __all__ is public under that name.
    exported: dict[type, str] = {}
    for module_name, module in modules.items():
        if _private(module_name, package):
            continue
        names = _exported_names(module, module_name, failures)
        for attr in names:
            obj = _lazy_attribute(module, module_name, attr, failures)
            if not isinstance(obj, type) or obj in public or obj not in defined:
                continue  # not a class, already public, or defined outside the package
            candidate = f"{module_name}.{attr}"
            best = exported.get(obj)
            if best is None or (candidate.count("."), candidate) < (best.count("."), best):
                exported[obj] = candidate
    for cls, name in exported.items():
        for inner, inner_name in _nested(cls, name):
            if inner is cls or not is_private_path(inner_name[len(name) + 1 :]):
                public.setdefault(inner, inner_name)

    return {
        name: _describe(cls, name, public)
        for cls, name in public.items()
        if dataclasses.is_dataclass(cls)
    }


def _exported_names(
    module: types.ModuleType, module_name: str, failures: dict[str, str]
) -> list[str]:
    try:
        names = getattr(module, "__all__", None)
    except Exception as exc:  # a module __getattr__ may compute __all__, and fail
        failures[f"{module_name}.__all__"] = _one_line(exc)
        return []
    if not isinstance(names, (list, tuple)):
        return []
    return [name for name in names if isinstance(name, str)]


def _lazy_attribute(
    module: types.ModuleType, module_name: str, attr: str, failures: dict[str, str]
) -> object:
    """``getattr``, recording a failure: a module ``__getattr__`` may import lazily, and fail.

    A name listed in ``__all__`` that cannot be loaded is an import failure (``from m import *``
    would raise), so it is reported as ``module.name`` rather than skipped.
    """
    try:
        return getattr(module, attr)
    except AttributeError:
        return None  # a stale __all__ entry is not this guard's concern
    except Exception as exc:
        failures[f"{module_name}.{attr}"] = _one_line(exc)
        return None


def _describe(cls: type, name: str, public: dict[type, str]) -> ClassInfo:
    try:
        params: dict[str, inspect.Parameter] | None = dict(inspect.signature(cls).parameters)
        signature_error = None
    except (TypeError, ValueError) as exc:
        params, signature_error = None, _one_line(exc)

    fields = []
    for f in dataclasses.fields(cls):
        param = params.get(f.name) if params is not None else None
        if param is not None:
            # The constructor is what callers see, so a hand-written __init__ is judged by it.
            has_default = param.default is not inspect.Parameter.empty
            kw_only = param.kind is inspect.Parameter.KEYWORD_ONLY
        else:
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            kw_only = f.kw_only is True
        fields.append(
            FieldInfo(
                name=f.name,
                has_default=has_default,
                kw_only=kw_only,
                declared_in=_declared_in(cls, f.name, public),
            )
        )

    positional = tuple(
        p.name
        for p in (params or {}).values()
        if p.kind
        in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.VAR_POSITIONAL,
        )
    )
    match_args = getattr(cls, "__match_args__", None)
    if match_args is not None and not isinstance(match_args, (tuple, list)):
        match_args = (repr(match_args),)  # invalid for `match` anyway; still record a change
    return ClassInfo(
        name=name,
        fields=tuple(fields),
        match_args=None if match_args is None else tuple(str(arg) for arg in match_args),
        positional=positional,
        signature_error=signature_error,
    )


def _declared_in(cls: type, field_name: str, public: dict[type, str]) -> str:
    for base in cls.__mro__:
        try:
            annotations = inspect.get_annotations(base)
        except Exception:  # an unreadable annotation only costs the message its detail
            continue
        if field_name in annotations:
            return public.get(base) or f"{base.__module__}.{base.__qualname__}"
    return public.get(cls, cls.__qualname__)


def _version(package: str, root: types.ModuleType | None) -> str | None:
    """``__version__`` if the package has one, else its distribution's metadata version."""
    try:
        version = getattr(root, "__version__", None)
    except Exception:  # a lazy module __getattr__ failing: fall back to the metadata
        version = None
    if isinstance(version, str):
        return version
    top = package.split(".")[0]
    candidates = [top, *importlib.metadata.packages_distributions().get(top, [])]
    for dist in candidates:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None
