"""The committed baseline file: read (format 3; formats 1 and 2 by migration) and write atomically.

The file is JSON with sorted keys, one constructor parameter (or field) per line, so a change
to the API shows up as a small, reviewable diff::

    {
      "accepted": [
        {"class": "pkg.Line", "reason": "0.x: `width` renamed to `stroke`", "version": "0.4.0"}
      ],
      "allowlist": {"pkg.Point": "unpacked positionally by callers since 1.0"},
      "classes": {
        "pkg.Point": {
          "fields": [
            {"init": true, "name": "x"}
          ],
          "match_args": ["x"],
          "parameters": [
            {"has_default": false, "kind": "positional_or_keyword", "name": "x"}
          ]
        }
      },
      "exclude": {"pkg.win32*": "Windows only"},
      "format": 3,
      "max_positional": 0,
      "package": "pkg",
      "version": "1.0.0"
    }

Parse errors name the key and the JSON type they found, never the value (a baseline may sit
next to secrets; a report must not copy them). Duplicate keys are refused: ``json`` would keep
the last copy silently, and ``update`` would then drop the first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metatests.errors import BaselineError
from metatests.model import JUDGED, KINDS, FieldInfo, Judged, ParamInfo

__all__ = [
    "FORMAT",
    "AcceptedBreak",
    "Baseline",
    "RecordedClass",
    "clean_stale_temporaries",
    "dumps_baseline",
    "load_baseline",
    "refuse_read_only",
    "write_baseline",
]

FORMAT = 3
"""Version of the file layout. 1 recorded dataclass fields; 2 records constructor parameters;
3 adds the accepted breaks and, per class whose constructor is wrapped, which signature was
judged (``"judged"``) and the one callers meet (``"outer"``)."""

MAX_VERSION_LENGTH = 200
"""A recorded version longer than this is refused: no release string is, and the report
prints it."""

STALE_AFTER = 60.0
"""Seconds after which a temporary file of an interrupted ``update`` counts as left behind."""


@dataclass(frozen=True, kw_only=True)
class RecordedClass:
    parameters: tuple[ParamInfo, ...] | None
    """The constructor's parameters in order; None when its signature could not be read."""
    fields: tuple[FieldInfo, ...] = ()
    match_args: tuple[str, ...] | None
    judged: Judged = "unwrapped"
    """Which signature M3 judged: the unwrapped one, or the ``outer`` one callers meet."""
    outer: tuple[ParamInfo, ...] | None = None
    """The signature of the callable a caller meets, when it differs from ``parameters``."""


@dataclass(frozen=True, kw_only=True)
class AcceptedBreak:
    """A breaking change recorded by ``update --accept-break CLASS=REASON``."""

    subject: str
    reason: str
    version: str | None
    """The package version the break was accepted at."""


@dataclass(frozen=True, kw_only=True)
class Baseline:
    package: str
    version: str | None
    allowlist: dict[str, str] = field(default_factory=dict)
    """Qualified class name -> the reason it may stay positional."""
    classes: dict[str, RecordedClass] = field(default_factory=dict)
    exclude: dict[str, str] = field(default_factory=dict)
    """Module pattern (``fnmatch``, dotted) -> the reason it is not scanned."""
    max_positional: int = 0
    """Positional parameters M1 allows per class (the contract's default is 0)."""
    accepted: tuple[AcceptedBreak, ...] = ()
    """Every break accepted so far, oldest first (a history: each applied once, by ``update``)."""
    format: int = FORMAT
    """The format the file was read in; older formats are migrated on ``update``."""


class _Malformed(Exception):
    pass


def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Parse a baseline file; every problem becomes a one-line BaselineError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    duplicates: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _no_duplicates(pairs, duplicates))
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"malformed baseline {path}: not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise BaselineError(f"malformed baseline {path}: nested too deeply") from None
    if duplicates:
        names = ", ".join(repr(d) for d in dict.fromkeys(duplicates))
        raise BaselineError(
            f"malformed baseline {path}: duplicate key{'s' * (len(duplicates) > 1)} {names}"
            " (JSON would keep only the last copy; keep one and delete the others)"
        )
    try:
        return _parse(data)
    except _Malformed as exc:
        raise BaselineError(f"malformed baseline {path}: {exc}") from None


def _no_duplicates(pairs: list[tuple[str, Any]], duplicates: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            duplicates.append(key)
        result[key] = value
    return result


def _type(value: Any) -> str:
    """The JSON type of a value, for messages: never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


_TOP_1 = {"format", "package", "version", "allowlist", "classes"}
_TOP_2 = _TOP_1 | {"exclude", "max_positional"}
_TOP_3 = _TOP_2 | {"accepted"}
_TOPS = {1: _TOP_1, 2: _TOP_2, 3: _TOP_3}


def _parse(data: Any) -> Baseline:
    if not isinstance(data, dict):
        raise _Malformed(f"the top level must be a JSON object, not {_type(data)}")
    version_of_file = data.get("format")
    if version_of_file not in _TOPS or isinstance(version_of_file, bool):
        shown = (
            repr(version_of_file)
            if isinstance(version_of_file, int) and abs(version_of_file) < 10**9
            else _type(version_of_file)
        )
        raise _Malformed(f"'format' is {shown}; this metatests reads formats 1 to {FORMAT}")
    obj = _object(data, "the top level", _TOPS[version_of_file])
    package = _string(obj["package"], "'package'")
    version = obj["version"]
    if version is not None:
        version = _string(version, "'version'")
        if len(version) > MAX_VERSION_LENGTH:
            raise _Malformed(
                f"'version' is {len(version)} characters long (at most {MAX_VERSION_LENGTH});"
                ' put the release number there, e.g. "1.4.0"'
            )
    allowlist = _reasons(obj["allowlist"], "allowlist")
    exclude = _reasons(obj.get("exclude", {}), "exclude")
    max_positional = obj.get("max_positional", 0)
    if (
        not isinstance(max_positional, int)
        or isinstance(max_positional, bool)
        or max_positional < 0
    ):
        raise _Malformed(
            f"'max_positional' must be a non-negative integer, not {_type(max_positional)}"
        )
    classes: dict[str, RecordedClass] = {}
    for name, entry in _object(obj["classes"], "'classes'", None).items():
        where = f"class {name!r}"
        if version_of_file == 1:
            classes[name] = _class_v1(entry, where)
        else:
            classes[name] = _class_v2(entry, where, extended=version_of_file >= 3)
        if classes[name].parameters is None and name not in allowlist:
            # update writes null only for an unreadable signature, which M1 rejects unless the
            # class is allowlisted; anywhere else null would switch M3 off for the class.
            raise _Malformed(
                f"{where} has 'parameters': null, which would stop M3 judging it; only an"
                " allowlisted class whose signature cannot be read is recorded so — restore"
                " its parameters (git checkout the file) or re-record it with `update`"
            )
    return Baseline(
        package=package,
        version=version,
        allowlist=allowlist,
        classes=classes,
        exclude=exclude,
        max_positional=max_positional,
        accepted=_accepted(obj.get("accepted", [])),
        format=version_of_file,
    )


def _accepted(value: Any) -> tuple[AcceptedBreak, ...]:
    entries = []
    for i, raw in enumerate(_list(value, "'accepted'")):
        where = f"accepted entry {i}"
        item = _object(raw, where, {"class", "reason", "version"})
        reason = _string(item["reason"], f"{where} 'reason'")
        if not reason.strip():
            raise _Malformed(f"{where} has an empty reason; say why the break is accepted")
        version = item["version"]
        entries.append(
            AcceptedBreak(
                subject=_string(item["class"], f"{where} 'class'"),
                reason=reason,
                version=None if version is None else _string(version, f"{where} 'version'"),
            )
        )
    return tuple(entries)


def _reasons(value: Any, key: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for name, reason in _object(value, f"'{key}'", None).items():
        reason = _string(reason, f"the reason of {key} entry {name!r}")
        if not reason.strip():
            raise _Malformed(f"{key} entry {name!r} has an empty reason; say why it is there")
        entries[name] = reason
    return entries


def _class_v2(entry: Any, where: str, *, extended: bool) -> RecordedClass:
    keys = {"parameters", "fields", "match_args"}
    if extended and isinstance(entry, dict):
        keys |= {"judged", "outer"} & entry.keys()  # written only for wrapped constructors
    recorded = _object(entry, where, keys)
    params = _parameters(recorded["parameters"], where, "parameters")
    judged = recorded.get("judged", "unwrapped")
    known = next((j for j in JUDGED if j == judged), None)
    if known is None:
        raise _Malformed(f"{where} 'judged' must be one of {', '.join(JUDGED)}")
    fields = []
    for i, raw in enumerate(_list(recorded["fields"], f"{where}: 'fields'")):
        item = _object(raw, f"{where} field {i}", {"name", "init"})
        fields.append(
            FieldInfo(
                name=_string(item["name"], f"{where} field {i} 'name'"),
                init=_bool(item["init"], f"{where} field {i} 'init'"),
            )
        )
    return RecordedClass(
        parameters=params,
        fields=tuple(fields),
        match_args=_match_args(recorded, where),
        judged=known,
        outer=_parameters(recorded.get("outer"), where, "outer"),
    )


def _parameters(raw_params: Any, where: str, key: str) -> tuple[ParamInfo, ...] | None:
    if raw_params is None:
        return None
    return tuple(
        _parameter(raw, f"{where} {'parameter' if key == 'parameters' else key} {i}")
        for i, raw in enumerate(_list(raw_params, f"{where}: '{key}'"))
    )


def _parameter(raw: Any, where: str) -> ParamInfo:
    item = _object(raw, where, {"name", "kind", "has_default"})
    kind = _string(item["kind"], f"{where} 'kind'")
    known = next((k for k in KINDS if k == kind), None)
    if known is None:
        raise _Malformed(f"{where} 'kind' must be one of {', '.join(KINDS)}")
    return ParamInfo(
        name=_string(item["name"], f"{where} 'name'"),
        kind=known,
        has_default=_bool(item["has_default"], f"{where} 'has_default'"),
    )


def _class_v1(entry: Any, where: str) -> RecordedClass:
    """Format 1 recorded dataclass fields; read them as the constructor they described.

    It could not tell ``init=False`` fields from parameters, so the comparison forgives a
    migrated parameter that is an ``init=False`` field now (see ``rules``).
    """
    recorded = _object(entry, where, {"fields", "match_args"})
    params = []
    for i, raw in enumerate(_list(recorded["fields"], f"{where}: 'fields'")):
        item = _object(raw, f"{where} field {i}", {"name", "has_default", "kw_only"})
        kw_only = _bool(item["kw_only"], f"{where} field {i} 'kw_only'")
        params.append(
            ParamInfo(
                name=_string(item["name"], f"{where} field {i} 'name'"),
                kind="keyword_only" if kw_only else "positional_or_keyword",
                has_default=_bool(item["has_default"], f"{where} field {i} 'has_default'"),
            )
        )
    return RecordedClass(
        parameters=tuple(params),
        fields=tuple(FieldInfo(name=p.name, init=True) for p in params),
        match_args=_match_args(recorded, where),
    )


def _match_args(recorded: dict[str, Any], where: str) -> tuple[str, ...] | None:
    match_args = recorded["match_args"]
    if match_args is None:
        return None
    if not isinstance(match_args, list):
        raise _Malformed(
            f"{where}: 'match_args' must be an array of strings or null, not {_type(match_args)}"
        )
    return tuple(_string(a, f"{where} 'match_args' item") for a in match_args)


def _object(value: Any, where: str, keys: set[str] | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed(f"{where} must be a JSON object, not {_type(value)}")
    if keys is not None:
        missing, unknown = sorted(keys - value.keys()), sorted(value.keys() - keys)
        if missing:
            raise _Malformed(f"{where} lacks {', '.join(map(repr, missing))}")
        if unknown:
            raise _Malformed(f"{where} has unknown {', '.join(map(repr, unknown))}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Malformed(f"{where} must be an array, not {_type(value)}")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"{where} must be a string, not {_type(value)}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _Malformed(f"{where} must be true or false, not {_type(value)}")
    return value


# -- writing ------------------------------------------------------------------------------------


def dumps_baseline(baseline: Baseline) -> str:
    """The file's exact text (always the current format): sorted keys, two-space indent, one
    parameter or field per line, final newline."""
    data = {
        "format": FORMAT,
        "package": baseline.package,
        "version": baseline.version,
        "max_positional": baseline.max_positional,
        "allowlist": dict(baseline.allowlist),
        "exclude": dict(baseline.exclude),
        "accepted": [
            {"class": a.subject, "reason": a.reason, "version": a.version}
            for a in baseline.accepted
        ],
        "classes": {name: _class_json(recorded) for name, recorded in baseline.classes.items()},
    }
    return _dump(data, 0) + "\n"


def _params_json(params: tuple[ParamInfo, ...] | None) -> list[dict[str, Any]] | None:
    if params is None:
        return None
    return [{"name": p.name, "kind": p.kind, "has_default": p.has_default} for p in params]


def _class_json(recorded: RecordedClass) -> dict[str, Any]:
    data: dict[str, Any] = {
        "parameters": _params_json(recorded.parameters),
        "fields": [{"name": f.name, "init": f.init} for f in recorded.fields],
        "match_args": None if recorded.match_args is None else list(recorded.match_args),
    }
    if recorded.outer is not None:  # only wrapped constructors: other classes' diffs stay small
        data["judged"] = recorded.judged
        data["outer"] = _params_json(recorded.outer)
    return data


def _dump(value: Any, depth: int) -> str:
    """``json.dumps(indent=2, sort_keys=True)``, except that an array of scalars and an object
    inside an array stay on one line."""
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value) or not value:
            return json.dumps(value, ensure_ascii=False)
        pad = "  " * (depth + 1)
        items = [pad + json.dumps(v, sort_keys=True, ensure_ascii=False) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]"
    if isinstance(value, dict) and value:
        pad = "  " * (depth + 1)
        items = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_dump(value[k], depth + 1)}"
            for k in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"
    return json.dumps(value, ensure_ascii=False)


def refuse_read_only(path: Path) -> None:
    """Refuse to replace a read-only baseline: its owner made it so on purpose."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    # Mode bits, not os.access: root may write anything, and would silently replace it.
    if not mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise BaselineError(
            f"baseline {path} is read-only (mode {mode:04o}); not replacing it — `check` reads"
            " it as it is; to record a new one, run `update` where the baseline may be written"
            " (your own checkout) or give `--baseline` a writable path"
        )


def _temporary_name(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.tmp")


def clean_stale_temporaries(
    path: str | os.PathLike[str], *, now: float | None = None
) -> list[Path]:
    """Delete temporary files an interrupted ``update`` (``kill -9``) left next to the baseline.

    Only files of the guard's own naming (``.NAME.json.XXXXXXXX.tmp``) older than
    ``STALE_AFTER`` seconds go, so a concurrent ``update`` still writing is left alone.
    """
    target = Path(os.path.realpath(path))
    pattern = _temporary_name(target)
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and now - entry.stat().st_mtime > STALE_AFTER:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def write_baseline(path: str | os.PathLike[str], baseline: Baseline) -> None:
    """Replace the file atomically: a crash or error mid-write leaves the old file intact.

    The text goes to a temporary file in the same directory (so ``os.replace`` is a rename on
    one filesystem), is flushed to disk, and only then replaces the baseline. A symlinked
    baseline is written through the link (its target is replaced, the link stays); the file's
    mode and, where permitted, its owner are kept.
    """
    target = Path(os.path.realpath(path))
    text = dumps_baseline(baseline)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st else 0o644)
        if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            with contextlib.suppress(OSError):
                os.chown(tmp, st.st_uid, st.st_gid)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
