"""Where a class is written: its file and the line of its ``class`` statement, for the GitHub
annotations of ``check --format github``. Runs in the scan's child, next to the classes.

``inspect.getsourcelines`` would do, but before Python 3.13 it parses the whole module again
for every class (a package of a thousand dataclasses would parse its files a thousand times),
and it guesses among same-named classes. Here each file is parsed once per scan, and a
qualified name that two ``class`` statements share (a class defined in both branches of an
``if``) gives no line rather than a wrong one.
"""

from __future__ import annotations

import ast
import inspect
import tokenize

__all__ = ["SourceLines", "class_source"]

_AMBIGUOUS = 0
"""A qualified name with more than one ``class`` statement: no line is given for it."""


def _class_lines(tree: ast.AST) -> dict[str, int]:
    """Qualified name (``Outer.Inner``, ``make.<locals>.Local``) -> line of its ``class``."""
    lines: dict[str, int] = {}
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                lines[name] = _AMBIGUOUS if name in lines else child.lineno
                stack.append((child, name + "."))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, f"{prefix}{child.name}.<locals>."))
            else:  # if/try/with blocks: same scope
                stack.append((child, prefix))
    return lines


class SourceLines:
    """The class lines of each file read so far (one scan's cache; never shared)."""

    def __init__(self) -> None:
        self._files: dict[str, dict[str, int] | None] = {}
        self._modules: dict[str, str | None] = {}

    def source_file(self, cls: type) -> str | None:
        """`inspect.getsourcefile`, once per module (it looks at the file system each time)."""
        module = cls.__module__
        if not isinstance(module, str):
            return None
        if module not in self._modules:
            self._modules[module] = inspect.getsourcefile(cls)
        return self._modules[module]

    def lines(self, path: str) -> dict[str, int] | None:
        if path not in self._files:
            try:
                with tokenize.open(path) as file:  # the file's declared encoding
                    self._files[path] = _class_lines(ast.parse(file.read(), path))
            except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
                self._files[path] = None
        return self._files[path]


def class_source(cls: type, cache: SourceLines) -> tuple[str, int] | None:
    """(file, line of the ``class`` statement) of `cls`, or None when that cannot be told for
    sure: a class made by ``make_dataclass``, one whose module has no source file, a
    ``__qualname__`` no ``class`` statement of that file has (or several have)."""
    try:
        path = cache.source_file(cls)
        qualname = cls.__qualname__
    except Exception:  # builtins, a lying __module__, a metaclass raising on attributes
        return None
    if path is None or not isinstance(qualname, str):
        return None
    found = cache.lines(path)
    line = None if found is None else found.get(qualname)
    return None if not line else (path, line)
