"""Discover the public dataclasses of a package and measure their constructors (M1, M4, M5).

This module runs **inside the scan's child process** (see ``isolate``); ``scan_package`` is the
public entry point that starts it. Public (M4) means either

* defined in a module whose dotted path has no ``_``-prefixed part, under a qualified name with no
  ``_``-prefixed part (nested classes count: ``Outer.Inner`` is public when both names are), or
* bound under a public name listed in the ``__all__`` of such a public module, even when defined
  in a private module, under a private name, or by ``make_dataclass`` under another name. It is
  then recorded under the public name a caller imports it by (the shortest exporting module, then
  alphabetical), so moving the implementation between private modules does not look like a
  removal.

A class counts once, at its home: ``cls.__module__`` + ``cls.__qualname__`` when that path leads
back to the class. Classes whose path does not resolve (``make_dataclass`` before Python 3.12
sets ``__module__`` to ``"types"``; classes built inside functions) are adopted by the deepest
package module that binds them under their own ``__name__``. Classes defined outside the package
are never counted, even when re-exported: their evolution is their own package's business.

Privacy is judged below the scanned package, so scanning ``_vendor.lib`` explicitly works.

The scan imports every public module and package, namespace sub-folders (no ``__init__.py``)
included. Private modules and packages are never imported by the scan itself (only when a public
module imports them), so nothing below a private package can fail the check, and a ``__main__``
never runs. Modules matching an ``--exclude`` pattern are neither imported nor judged. Any other
import failure is recorded, never skipped.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import pkgutil
import re
import sys
import textwrap
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from metatests.errors import MetatestsError, PackageNotFoundError
from metatests.isolate import scan_package
from metatests.model import (
    POSITIONAL_KINDS,
    ClassInfo,
    FieldInfo,
    ImportFailure,
    Judged,
    Kind,
    ParamInfo,
    Scan,
)
from metatests.sources import SourceLines, class_source

__all__ = [
    "ClassInfo",
    "FieldInfo",
    "ImportFailure",
    "MetatestsError",
    "PackageNotFoundError",
    "ParamInfo",
    "Scan",
    "is_excluded",
    "is_private_path",
    "major_version",
    "scan_in_process",
    "scan_package",
]


def is_private_path(dotted: str) -> bool:
    """True when any part of a dotted module path or qualified name starts with ``_``."""
    return any(part.startswith("_") for part in dotted.split("."))


def is_excluded(dotted: str, patterns: Collection[str]) -> bool:
    """True when ``dotted`` or a package above it matches one of the ``fnmatch`` patterns."""
    parts = dotted.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatchcase(p, pattern) for p in prefixes for pattern in patterns)


def major_version(version: str | None) -> int | None:
    """The leading integer of a version string (``"2.0.1"`` -> 2, ``"v3rc1"`` -> 3)."""
    if version is None:
        return None
    match = re.match(r"\s*v?(\d+)", version)
    return int(match.group(1)) if match else None


Progress = Callable[[str], None]


def scan_in_process(
    package: str,
    *,
    exclude: Sequence[str] = (),
    skip: Collection[str] = (),
    progress: Progress | None = None,
) -> Scan:
    """Import every public module of ``package`` here and describe its public dataclasses.

    ``skip`` names modules (or ``module.attr``) not to touch: the parent found that they kill or
    hang the process. ``progress`` is told each name before it is imported or loaded, so that
    the parent can name the culprit when the process dies. Raises PackageNotFoundError when the
    package cannot be found; every other import error is recorded in ``Scan.import_failures``.
    """
    try:
        spec = importlib.util.find_spec(package)
    except BaseException as exc:  # a parent package may fail at import in any way
        raise PackageNotFoundError(f"cannot find package {package!r}: {one_line(exc)}") from None
    if spec is None:
        raise PackageNotFoundError(
            f"no importable package named {package!r} (is it installed or on sys.path?)"
        )
    walker = _Walker(package, exclude=exclude, skip=skip, progress=progress or (lambda _: None))
    root = walker.import_(package)
    if root is not None:
        walker.walk(root)
        walker.load_exports()

    modules = {
        name: module
        for name, module in _package_modules(package).items()
        if not is_excluded(name, exclude)
    }
    classes, unexported = _public_dataclasses(package, modules, walker)
    return Scan(
        package=package,
        version=_version(package, root, spec),
        classes={name: classes[name] for name in sorted(classes)},
        import_failures=tuple(
            ImportFailure(module=name, error=walker.failures[name])
            for name in sorted(walker.failures)
        ),
        modules=tuple(sorted(walker.imported)),
        excluded=tuple(exclude),
        unexported=unexported,
    )


def one_line(exc: BaseException) -> str:
    try:
        text = " ".join(str(exc).split())
    except BaseException:  # an exception whose __str__ fails still has a type
        text = "<str() failed>"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _private(name: str, package: str) -> bool:
    return is_private_path(name[len(package) + 1 :]) if name != package else False


class _Walker:
    """Imports the public modules, recording every failure; never lets one escape."""

    def __init__(
        self, package: str, *, exclude: Sequence[str], skip: Collection[str], progress: Progress
    ) -> None:
        self.package = package
        self.exclude = exclude
        self.skip = skip
        self.progress = progress
        self.failures: dict[str, str] = {}
        self.imported: list[str] = []

    def import_(self, name: str) -> types.ModuleType | None:
        if name in self.skip:
            return None  # the parent records why
        self.progress(name)
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # pytest's Skipped, SystemExit, KeyboardInterrupt...
            self.failures[name] = one_line(exc)
            return None
        self.imported.append(name)
        return module

    def attribute(self, module: types.ModuleType, module_name: str, attr: str) -> object:
        """``getattr``, recording a failure: a module ``__getattr__`` may import lazily, and fail.

        A name listed in ``__all__`` that cannot be loaded is an import failure (``from m import
        *`` would raise), so it is reported as ``module.name`` rather than skipped.
        """
        where = f"{module_name}.{attr}"
        if where in self.skip:
            return None
        if attr in vars(module):
            return vars(module)[attr]
        self.progress(where)
        try:
            return getattr(module, attr)
        except AttributeError:
            return None  # a stale __all__ entry is not this guard's concern
        except BaseException as exc:
            self.failures[where] = one_line(exc)
            return None

    def load_exports(self) -> None:
        """Touch every name in the ``__all__`` of every public module once, before homes are
        worked out: a module ``__getattr__`` may import the module defining a class only when
        the name is first read (pydantic-ai's ``durable_exec``), and that module is a home."""
        done: set[str] = set()
        while True:
            todo = {
                name: module
                for name, module in _package_modules(self.package).items()
                if name not in done
                and not _private(name, self.package)
                and not is_excluded(name, self.exclude)
            }
            if not todo:
                return
            for name, module in todo.items():
                done.add(name)
                for attr in _exported_names(module, name, self):
                    if not is_excluded(f"{name}.{attr}", self.exclude):
                        self.attribute(module, name, attr)

    def walk(self, package: types.ModuleType) -> None:
        for name in self._children(package):
            if _private(name, self.package) or is_excluded(name, self.exclude):
                continue
            module = self.import_(name)
            if module is not None and hasattr(module, "__path__"):
                self.walk(module)

    def _children(self, package: types.ModuleType) -> list[str]:
        try:
            path = list(getattr(package, "__path__", None) or ())
        except BaseException:
            return []
        prefix = package.__name__ + "."
        names = {info.name for info in pkgutil.iter_modules(path, prefix)}
        # iter_modules only lists folders with an __init__.py; namespace sub-folders are
        # importable too, and a public class defined there is public.
        for entry in path:
            try:
                children = sorted(os.scandir(entry), key=lambda e: e.name)
            except OSError:
                continue
            for child in children:
                if (
                    child.name.isidentifier()
                    and child.is_dir()
                    and not os.path.exists(os.path.join(child.path, "__init__.py"))
                    and _holds_python(child.path)
                ):
                    names.add(prefix + child.name)
        return sorted(names)


def _holds_python(folder: str) -> bool:
    """True when a folder has a ``.py`` file at any depth (a data folder is not a package)."""
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d.isidentifier()]
        if any(f.endswith(".py") for f in files):
            return True
    return False


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
            obj = inspect.getattr_static(obj, part, None)
    except BaseException:  # a strange module or class means: not found there
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
    package: str, modules: dict[str, types.ModuleType], walker: _Walker
) -> tuple[dict[str, ClassInfo], tuple[str, ...]]:
    defined = {
        inner: name
        for cls, home in _homes(package, modules).items()
        for inner, name in _nested(cls, home)
    }
    public = {cls: name for cls, name in defined.items() if not _private(name, package)}

    # Re-exports: a class bound under a name in a public module's __all__ is public under it.
    exported: dict[type, str] = {}
    for module_name, module in modules.items():
        if _private(module_name, package):
            continue
        for attr in _exported_names(module, module_name, walker):
            if is_excluded(f"{module_name}.{attr}", walker.exclude):
                continue
            obj = walker.attribute(module, module_name, attr)
            if not isinstance(obj, type) or obj in public or not _ours(obj, defined, package):
                continue  # not a class, already public, or defined outside the package
            candidate = f"{module_name}.{attr}"
            best = exported.get(obj)
            if best is None or (candidate.count("."), candidate) < (best.count("."), best):
                exported[obj] = candidate
    for cls, name in exported.items():
        for inner, inner_name in _nested(cls, name):
            if inner is cls or not is_private_path(inner_name[len(name) + 1 :]):
                public.setdefault(inner, inner_name)

    sources = SourceLines()
    return {
        name: describe(cls, name, public, defined, sources)
        for cls, name in public.items()
        if dataclasses.is_dataclass(cls)
    }, _unexported(package, modules, defined, public)


def _unexported(
    package: str,
    modules: dict[str, types.ModuleType],
    defined: dict[type, str],
    public: dict[type, str],
) -> tuple[str, ...]:
    """Dataclasses of private modules that a public module without ``__all__`` binds: a reader
    may import them from there, but M4 counts only ``__all__``. Reported, never judged."""
    found: dict[type, str] = {}
    for module_name, module in modules.items():
        if _private(module_name, package) or "__all__" in vars(module):
            continue
        for attr, obj in list(vars(module).items()):
            if (
                attr.startswith("_")
                or not isinstance(obj, type)
                or obj in public
                or obj not in defined
                or not dataclasses.is_dataclass(obj)
            ):
                continue
            candidate = f"{module_name}.{attr}"
            best = found.get(obj)
            if best is None or (candidate.count("."), candidate) < (best.count("."), best):
                found[obj] = candidate
    return tuple(sorted(found.values()))


def _ours(cls: type, defined: dict[type, str], package: str) -> bool:
    """Defined in the package: found at home there, or homeless (``make_dataclass`` bound under
    another name, ``__module__`` pointing into the package or at ``types``)."""
    if cls in defined:
        return True
    return not _resolves(cls) and (
        _in_package(cls.__module__, package)
        or cls.__module__ not in sys.modules
        or cls.__module__ == "types"
    )


def _exported_names(module: types.ModuleType, module_name: str, walker: _Walker) -> list[str]:
    if is_excluded(f"{module_name}.__all__", walker.exclude):
        return []  # the fix-it for a failing lazy __all__ suggests exactly this pattern
    try:
        names = getattr(module, "__all__", None)
    except BaseException as exc:  # a module __getattr__ may compute __all__, and fail
        walker.failures[f"{module_name}.__all__"] = one_line(exc)
        return []
    if not isinstance(names, (list, tuple)):
        return []
    return [name for name in names if isinstance(name, str)]


def describe(
    cls: type,
    name: str,
    public: dict[type, str] | None = None,
    defined: dict[type, str] | None = None,
    sources: SourceLines | None = None,
) -> ClassInfo:
    """Measure one dataclass: its constructor (unwrapped, and as a caller meets it), its
    fields, ``__match_args__``, its package bases, fix-it details."""
    public = public or {}
    defined = defined or {}
    owner = _hand_written_init(cls)
    try:
        params: tuple[ParamInfo, ...] | None = _constructor(cls)
        signature_error = None
    except Exception as exc:
        params, signature_error = None, one_line(exc)
        if owner is None:
            # inspect refuses some valid generated constructors (a field whose default *is*
            # ``inspect.Parameter.empty`` reads as "no default"); the fields say what it takes.
            params, signature_error = _from_fields(cls), None
    fields = tuple(FieldInfo(name=f.name, init=bool(f.init)) for f in dataclasses.fields(cls))
    positional = [p.name for p in params or () if p.kind in POSITIONAL_KINDS]
    declared = (
        () if owner is not None else tuple((p, _declared_in(cls, p, public)) for p in positional)
    )
    match_args = getattr(cls, "__match_args__", None)
    if match_args is not None and not isinstance(match_args, (tuple, list)):
        match_args = (repr(match_args),)  # invalid for `match` anyway; still record a change
    outer: tuple[ParamInfo, ...] | None = None
    judged: Judged = "unwrapped"
    wrapper: str | None = None
    if params is not None:
        outer, judged, wrapper = _as_met(cls, params, public)
    return ClassInfo(
        name=name,
        parameters=params,
        fields=fields,
        match_args=None if match_args is None else tuple(str(arg) for arg in match_args),
        signature_error=signature_error,
        declared_in=declared,
        init_owner=None if owner is None else public.get(owner) or _qualified(owner),
        outer=outer,
        judged=judged,
        wrapper=wrapper,
        bases=tuple(
            public.get(base) or defined[base] for base in cls.__mro__[1:] if base in defined
        ),
        source=class_source(cls, sources or SourceLines()),
    )


def _params(parameters: Iterable[inspect.Parameter]) -> tuple[ParamInfo, ...]:
    return tuple(
        ParamInfo(name=p.name, kind=_kind(p), has_default=p.default is not inspect.Parameter.empty)
        for p in parameters
    )


def _as_met(
    cls: type, unwrapped: tuple[ParamInfo, ...], public: dict[type, str]
) -> tuple[tuple[ParamInfo, ...] | None, Judged, str | None]:
    """The signature a caller meets (wrappers not followed), which of the two M3 judges, and
    a sentence about the wrapper for the report; (None, "unwrapped", None) when they agree.

    Read without calling anything of the package: ``inspect.signature(follow_wrapped=False)``
    and, to tell a wrapper that only forwards, its source (``ast``), never its execution."""
    try:
        if _deprecated_new(cls):
            met = _params(
                list(
                    inspect.signature(_static_init(cls), follow_wrapped=False).parameters.values()
                )[1:]
            )
        else:
            met = _params(inspect.signature(cls, follow_wrapped=False).parameters.values())
    except Exception:
        return None, "unwrapped", None
    if met == unwrapped:
        return None, "unwrapped", None
    function, where = _wrapper_of(cls, public)
    generic = {p.kind for p in met} == {"var_positional", "var_keyword"}
    if function is not None and generic and _only_forwards(function):
        return (
            met,
            "unwrapped",
            (
                f"callers meet {where}, a `(*args, **kwargs)` wrapper that only forwards its"
                " arguments: the unwrapped signature is judged"
            ),
        )
    if generic:
        return (
            met,
            "outer",
            (
                f"callers meet {where}, a `(*args, **kwargs)` wrapper that does more than"
                " forward: the unwrapped signature is recorded, but its changes are notes (the"
                " guard does not call the wrapper to learn what it refuses)"
            ),
        )
    return met, "outer", f"callers meet {where}, whose own signature differs: it is judged"


def _static_init(cls: type) -> Any:
    """``cls.__init__`` as a plain attribute read (static: no descriptor of the package runs)."""
    return inspect.getattr_static(cls, "__init__")


def _deprecated_new(target: type) -> bool:
    new = getattr(target, "__new__", None)
    return (
        callable(new)
        and getattr(new, "__wrapped__", None) is not None
        and inspect.unwrap(new) is object.__new__
    )


def _wrapper_of(cls: type, public: dict[type, str]) -> tuple[Any, str]:
    """The wrapping ``__init__`` (or ``__new__``) and how the report names it."""
    for attr in ("__init__", "__new__"):
        for klass in cls.__mro__:
            found = vars(klass).get(attr)
            if found is None:
                continue
            if isinstance(found, staticmethod):
                found = found.__func__
            if getattr(found, "__wrapped__", None) is not None:
                return found, f"`{public.get(klass) or _qualified(klass)}.{attr}`"
            break
    return None, "a constructor whose signature differs from the unwrapped one"


def _only_forwards(function: Any) -> bool:
    """True when the wrapper's body is ``return f(<its named params>, *args, **kwargs)``
    (after an optional docstring): read from its source, never run."""
    try:
        # Of the code object: getsource(function) would follow __wrapped__ to the wrapped one.
        tree = ast.parse(textwrap.dedent(inspect.getsource(function.__code__)))
    except Exception:
        return False
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = node.args
    if args.vararg is None or args.kwarg is None or args.kwonlyargs:
        return False
    named = [a.arg for a in (*args.posonlyargs, *args.args)]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    call = body[0].value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    passed = [a.id if isinstance(a, ast.Name) else None for a in call.args[:-1]]
    star = call.args[-1] if call.args else None
    return (
        passed == named
        and isinstance(star, ast.Starred)
        and isinstance(star.value, ast.Name)
        and star.value.id == args.vararg.arg
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == args.kwarg.arg
    )


def _constructor(cls: type) -> tuple[ParamInfo, ...]:
    """The parameters a caller passes to ``cls(...)``, decorators unwrapped.

    ``deprecated`` (``warnings``/``typing_extensions``) replaces ``__new__`` with a
    ``(*args, **kwargs)`` wrapper of ``object.__new__``; ``inspect.signature`` would then report
    that wrapper, hiding the real constructor, which is ``__init__``.
    """
    target = inspect.unwrap(cls)
    new = getattr(target, "__new__", None)
    if (
        callable(new)
        and getattr(new, "__wrapped__", None) is not None
        and inspect.unwrap(new) is object.__new__
    ):
        init = inspect.unwrap(target.__init__)
        parameters = list(inspect.signature(init).parameters.values())[1:]
    else:
        parameters = list(inspect.signature(target).parameters.values())
    return tuple(
        ParamInfo(name=p.name, kind=_kind(p), has_default=p.default is not inspect.Parameter.empty)
        for p in parameters
    )


def _from_fields(cls: type) -> tuple[ParamInfo, ...]:
    """The generated ``__init__``'s parameters, from the dataclass fields (and ``InitVar``s):
    positional ones first, then keyword-only ones, each in declaration order."""
    taken = [
        f
        for f in getattr(cls, "__dataclass_fields__", {}).values()
        if f.init and f._field_type is not dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
    ]
    params = [
        ParamInfo(
            name=f.name,
            kind="keyword_only" if f.kw_only is True else "positional_or_keyword",
            has_default=f.default is not dataclasses.MISSING
            or f.default_factory is not dataclasses.MISSING,
        )
        for f in taken
    ]
    return tuple(
        sorted(params, key=lambda p: p.kind == "keyword_only")  # stable: order kept per group
    )


def _kind(param: inspect.Parameter) -> Kind:
    kind: Kind = param.kind.name.lower()  # type: ignore[assignment]
    return kind


def _hand_written_init(cls: type) -> type | None:
    """The class whose own ``__init__`` is not the one ``@dataclass`` generated, if any."""
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        if klass is object:
            return None
        code = getattr(inspect.unwrap(init), "__code__", None)
        # dataclasses compiles the __init__ it generates from a string, on every Python.
        return None if code is not None and code.co_filename == "<string>" else klass
    return None


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _declared_in(cls: type, param: str, public: dict[type, str]) -> str:
    """The nearest class in the MRO whose body annotates ``param``: where it must change."""
    for base in cls.__mro__:
        try:
            annotations = inspect.get_annotations(base)
        except Exception:  # an unreadable annotation only costs the message its detail
            continue
        if param in annotations:
            return public.get(base) or _qualified(base)
    return public.get(cls) or _qualified(cls)


def _version(
    package: str, root: types.ModuleType | None, spec: importlib.machinery.ModuleSpec
) -> str | None:
    """``__version__`` if the package has one, else the version of the distribution that
    installed the scanned package's files (a namespace package like ``google`` is provided by
    several distributions: the one holding this very folder counts)."""
    try:
        version = inspect.getattr_static(root, "__version__", None) if root else None
    except BaseException:
        version = None
    if isinstance(version, str):
        return version
    locations = {
        os.path.realpath(p)
        for p in [*(spec.submodule_search_locations or ()), *([spec.origin] if spec.origin else [])]
    }
    top = package.split(".")[0]
    candidates = list(dict.fromkeys(importlib.metadata.packages_distributions().get(top, [])))
    relative = Path(*package.split("."))
    owners: dict[str, str] = {}
    for dist_name in candidates:
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for suffix in ("", ".py"):
            where = os.path.realpath(str(dist.locate_file(str(relative) + suffix)))
            if where in locations and _dist_owns(dist, relative):
                owners[dist_name] = dist.version
    if owners:
        # Several distributions sharing a namespace folder: none of their versions is its own.
        return next(iter(owners.values())) if len(owners) == 1 else None
    if len(candidates) == 1:
        try:
            return importlib.metadata.version(candidates[0])
        except importlib.metadata.PackageNotFoundError:
            return None
    return None


def _dist_owns(dist: importlib.metadata.Distribution, relative: Path) -> bool:
    files = dist.files
    if files is None:
        return True  # no RECORD: trust the location
    prefix = relative.parts
    return any(
        f.parts[: len(prefix)] == prefix or f.parts == (*prefix[:-1], prefix[-1] + ".py")
        for f in files
    )
