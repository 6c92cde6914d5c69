"""Which jsonschema validator class a schema's ``$schema`` names, decided in one place, and
the one way the kit builds a validator: never retrieving a reference (`make_validator`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin

import referencing
import referencing.jsonschema
from jsonschema import validators
from jsonschema_specifications import REGISTRY as _METASCHEMAS  # type: ignore[import-untyped]
from referencing.exceptions import NoSuchResource

__all__ = [
    "NO_RETRIEVAL",
    "OLD_DIALECTS",
    "UnresolvedRef",
    "declared_validator",
    "in_place_ref_cycle",
    "make_validator",
    "ref_siblings_inert",
    "unresolved_refs",
    "validator_class",
]

OLD_DIALECTS = frozenset(
    {"Draft3Validator", "Draft4Validator", "Draft6Validator", "Draft7Validator"}
)
"""Dialects in which ``$ref`` makes its sibling keywords inert."""


def declared_validator(schema: Mapping[str, Any]) -> tuple[type[Any] | None, str]:
    """The validator class the schema's ``$schema`` names, and how to say which dialect it is.

    No ``$schema`` means 2020-12. ``(None, uri)`` for a ``$schema`` jsonschema does not know (or
    one that is not a string): validators disagree about such a schema."""
    declared = schema.get("$schema")
    if declared is None:
        return validators.Draft202012Validator, "2020-12 (no $schema)"
    if not isinstance(declared, str):
        return None, repr(declared)
    cls = validators.validator_for(dict(schema), default=None)  # type: ignore[arg-type]
    return (None, declared) if cls is None else (cls, declared)


def validator_class(schema: Mapping[str, Any]) -> Any:
    """The validator class for the schema, 2020-12 when its ``$schema`` is absent or unknown."""
    cls, _ = declared_validator(schema)
    return cls if cls is not None else validators.Draft202012Validator


def ref_siblings_inert(schema: Mapping[str, Any]) -> bool:
    """True when the schema's dialect makes the siblings of ``$ref`` inert (draft-07 and
    older). An unrecognised ``$schema`` counts as old too: assuming fewer active keywords can
    only make the oracle demand fewer rejections, never a false one."""
    if schema.get("$schema") is None:
        return False
    cls, _ = declared_validator(schema)
    return cls is None or cls.__name__ in OLD_DIALECTS


def _refuse(uri: str) -> referencing.Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs alias mypy misses


NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
"""The registry every validator the kit builds gets (`make_validator`).

jsonschema's default registry fetches any ``$ref`` it does not know over HTTP or from the file
system (its deprecated automatic retrieval): a tool schema someone else wrote would make the kit
send requests and open local files, and echo their content into reports. This registry refuses
every retrieval (`referencing.exceptions.NoSuchResource`), so such a reference is unresolvable
instead; jsonschema still resolves references within the schema and to the metaschemas it
bundles. A `referencing.Registry` is immutable: sharing one is safe."""


def make_validator(cls: type[Any], schema: Any, **kwargs: Any) -> Any:
    """``cls(schema, **kwargs)`` that never retrieves a reference (see `NO_RETRIEVAL`)."""
    return cls(schema, registry=NO_RETRIEVAL, **kwargs)


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose values are instances, not schemas: a ``$ref`` inside them is data."""

_OLD_ID_DIALECTS = frozenset({"Draft3Validator", "Draft4Validator"})
"""Dialects whose base-URI keyword is ``id`` rather than ``$id``."""


@dataclass(frozen=True, kw_only=True)
class UnresolvedRef:
    """A ``$ref`` (or ``$dynamicRef``) of a schema that does not resolve within the schema."""

    path: tuple[str | int, ...]
    """Where the reference is: the path of its keyword."""
    ref: str
    external: bool
    """True when it names another document (a URL, a file, a relative path), False for a
    fragment of this schema that points nowhere."""


def unresolved_refs(schema: object, *, limit: int = 20) -> list[UnresolvedRef]:
    """The references in `schema` that do not resolve within it (at most `limit` of them).

    Nothing is retrieved: a reference to another document is reported, never followed. Walks
    iteratively, so a deep schema cannot raise `RecursionError` here."""
    if not isinstance(schema, dict):
        return []
    cls = validator_class(schema)
    id_key = "id" if cls.__name__ in _OLD_ID_DIALECTS else "$id"
    try:
        declared = schema.get("$schema")
        specification = referencing.jsonschema.specification_with(
            declared if isinstance(declared, str) else "",
            default=referencing.jsonschema.DRAFT202012,
        )
        # The metaschemas jsonschema bundles resolve, as they do for its validators.
        known = _METASCHEMAS.combine(NO_RETRIEVAL)
        registry = known.with_resource("", specification.create_resource(schema)).crawl()
    except Exception:  # an `$id` or anchor referencing cannot read: nothing resolves then
        registry = NO_RETRIEVAL
    found: list[UnresolvedRef] = []
    stack: list[tuple[object, tuple[str | int, ...], str]] = [(schema, (), "")]
    while stack and len(found) < limit:
        node, path, base = stack.pop()
        if isinstance(node, dict):
            declared_id = node.get(id_key)
            if isinstance(declared_id, str):
                base = urljoin(base, declared_id)
            for key in ("$ref", "$dynamicRef"):
                ref = node.get(key)
                if isinstance(ref, str) and not _resolves(registry, base, ref):
                    # Unresolved: another document if it names one, else a pointer to nowhere.
                    external = urldefrag(urljoin(base, ref))[0] != urldefrag(base)[0]
                    found.append(UnresolvedRef(path=(*path, key), ref=ref, external=external))
            stack.extend(
                (value, (*path, key), base)
                for key, value in reversed(node.items())
                if key not in _DATA_KEYWORDS
            )
        elif isinstance(node, list):
            stack.extend((item, (*path, i), base) for i, item in reversed(list(enumerate(node))))
    return found


def _resolves(registry: referencing.Registry[Any], base: str, ref: str) -> bool:
    try:
        registry.resolver(base_uri=base).lookup(ref)
    except Exception:  # Unresolvable, or a malformed pointer or URI
        return False
    return True


_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else", "extends")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")
"""Keywords whose subschemas apply to the same instance (they do not descend into it)."""


def _in_place_children(node: dict[str, Any]) -> list[tuple[tuple[str | int, ...], Any]]:
    children: list[tuple[tuple[str | int, ...], Any]] = []
    for key in _IN_PLACE_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            children += [((key, i), sub) for i, sub in enumerate(value)]
    for key in _IN_PLACE_ONE:
        children.append(((key,), node.get(key)))
    for key in _IN_PLACE_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            children += [((key, name), sub) for name, sub in value.items()]
    return [(path, sub) for path, sub in children if isinstance(sub, dict)]


def in_place_ref_cycle(schema: object) -> tuple[tuple[str | int, ...], str] | None:
    """The (path, ref) of a `$ref` that leads back to a schema already being applied to the
    same instance (through `allOf`, `dependentSchemas`, `not`, ... and `$ref`s only), or None.

    Validating an instance that reaches such a loop never ends: jsonschema raises
    `RecursionError`. A `$ref` under `properties` or `items` (a recursive data type) descends
    into the instance and is fine. Iterative; nothing is retrieved."""
    if not isinstance(schema, dict):
        return None
    try:
        declared = schema.get("$schema")
        specification = referencing.jsonschema.specification_with(
            declared if isinstance(declared, str) else "",
            default=referencing.jsonschema.DRAFT202012,
        )
        registry = NO_RETRIEVAL.with_resource("", specification.create_resource(schema)).crawl()
    except Exception:
        return None
    # Every subschema reachable from the root is a start: a loop anywhere is found.
    starts: list[tuple[Any, tuple[str | int, ...], str]] = []
    walk: list[tuple[Any, tuple[str | int, ...], str]] = [(schema, (), "")]
    while walk:
        node, path, base = walk.pop()
        if isinstance(node, dict):
            own_id = node.get("$id")
            base = urljoin(base, own_id) if isinstance(own_id, str) else base
            starts.append((node, path, base))
            walk += [(v, (*path, k), base) for k, v in node.items() if k not in _DATA_KEYWORDS]
        elif isinstance(node, list):
            walk += [(v, (*path, i), base) for i, v in enumerate(node)]
    where = {id(node): path for node, path, _ in starts}  # document paths, for the report
    done: set[int] = set()
    for start in starts:
        if id(start[0]) in done:
            continue
        # Depth-first over in-place edges; a node met again while on the path is a loop.
        on_path: set[int] = set()
        stack: list[tuple[Any, tuple[str | int, ...], str, bool]] = [(*start, False)]
        while stack:
            node, path, base, leaving = stack.pop()
            if leaving:
                on_path.discard(id(node))
                done.add(id(node))
                continue
            if id(node) in done:
                continue
            on_path.add(id(node))
            stack.append((node, path, base, True))
            nexts = [(sub, (*path, *step), base) for step, sub in _in_place_children(node)]
            ref = node.get("$ref")
            if isinstance(ref, str):
                try:
                    target = registry.resolver(base_uri=base).lookup(ref).contents
                except Exception:
                    target = None
                if isinstance(target, dict):
                    if id(target) in on_path:
                        return (*where.get(id(node), path), "$ref"), ref
                    nexts.append((target, (*path, "$ref"), urldefrag(urljoin(base, ref))[0]))
            for sub, sub_path, sub_base in nexts:
                own_id = sub.get("$id")
                sub_base = urljoin(sub_base, own_id) if isinstance(own_id, str) else sub_base
                if id(sub) in on_path:  # the same object twice: only in data built in Python
                    return where.get(id(sub), sub_path), str(sub.get("$ref", ""))
                stack.append((sub, sub_path, sub_base, False))
    return None
