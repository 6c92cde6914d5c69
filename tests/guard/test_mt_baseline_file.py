"""The baseline file (M3): malformed or missing input is exit 2, and ``update`` is atomic."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from metatests import BaselineError, check_package, load_baseline, update_baseline
from metatests.cli import main

MODEL = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass P:\n    a: int\n"


def _valid(name: str) -> dict[str, object]:
    return {
        "format": 3,
        "accepted": [],
        "package": name,
        "version": "1.0.0",
        "max_positional": 0,
        "allowlist": {},
        "exclude": {},
        "classes": {
            f"{name}.models.P": {
                "parameters": [{"name": "a", "kind": "keyword_only", "has_default": False}],
                "fields": [{"name": "a", "init": True}],
                "match_args": [],
            }
        },
    }


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("classes"), "the top level lacks 'classes'"),
        (
            lambda d: next(iter(d["classes"].values()))["parameters"][0].update(kind="kw"),
            "parameter 0 'kind' must be one of positional_only, positional_or_keyword,",
        ),
        (lambda d: d.update(extra=1), "the top level has unknown 'extra'"),
        (lambda d: d.update(format=4), "'format' is 4; this metatests reads formats 1 to 3"),
        (lambda d: d.update(version=1), "'version' must be a string, not a number"),
        (lambda d: d.update(allowlist=["x"]), "'allowlist' must be a JSON object, not an array"),
        (lambda d: d.update(max_positional=-1), "'max_positional' must be a non-negative integer"),
        (lambda d: d.update(exclude={"x.*": ""}), "exclude entry 'x.*' has an empty reason"),
        (lambda d: d.update(allowlist={"x.Y": " "}), "allowlist entry 'x.Y' has an empty reason"),
        (
            lambda d: next(iter(d["classes"].values()))["parameters"][0].update(has_default="no"),
            "parameter 0 'has_default' must be true or false, not a string",
        ),
        (
            lambda d: next(iter(d["classes"].values())).update(match_args="a"),
            "'match_args' must be an array of strings or null, not a string",
        ),
        pytest.param(
            lambda d: next(iter(d["classes"].values())).update(parameters=None),
            "has 'parameters': null, which would stop M3 judging it",
            id="null-parameters-switch-M3-off",
        ),
        pytest.param(
            lambda d: d.update(version="9" * 5001),
            "'version' is 5001 characters long (at most 200)",
            id="5001-digit-version",
        ),
        pytest.param(
            lambda d: d.update(accepted=[{"class": "x.Y", "reason": "", "version": None}]),
            "accepted entry 0 has an empty reason",
            id="accepted-without-reason",
        ),
        pytest.param(
            lambda d: next(iter(d["classes"].values())).update(judged="inner"),
            "'judged' must be one of unwrapped, outer",
            id="judged-unknown",
        ),
    ],
)
def test_M3_malformed_baseline_is_exit_2_with_one_line(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str], mutate, message: str
) -> None:
    name = packages.write({"models.py": MODEL})
    data = _valid(name)
    mutate(data)
    path = tmp_path / "api.json"
    path.write_text(json.dumps(data))

    assert main(["check", name, "--baseline", str(path)]) == 2
    assert main(["update", name, "--baseline", str(path)]) == 2

    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert lines[0].startswith(f"polyloop-metatests: error: malformed baseline {path}: ")
    assert message in lines[0]


def test_M3_baseline_that_is_not_json_is_exit_2(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"
    path.write_text('{"format": 1,\n  oops}')

    assert main(["check", name, "--baseline", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"polyloop-metatests: error: malformed baseline {path}: not JSON"
        " (line 2 column 3: Expecting property name enclosed in double quotes)\n"
    )


def test_M3_valid_baseline_round_trips(packages, tmp_path: Path) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"
    path.write_text(json.dumps(_valid(name)))

    assert load_baseline(path).classes[f"{name}.models.P"].match_args == ()
    assert check_package(name, path).findings == ()


def test_M3_missing_baseline_on_check_is_exit_2_telling_to_run_update(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"

    assert main(["check", name, "--baseline", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"polyloop-metatests: error: baseline {path} does not exist; create it with"
        f" `polyloop-metatests update {name} --baseline {path}`\n"
    )


def test_M3_baseline_of_another_package_is_exit_2(packages, tmp_path: Path) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"
    path.write_text(json.dumps(_valid("some_other_package")))

    with pytest.raises(BaselineError, match="records package 'some_other_package'"):
        check_package(name, path)


@pytest.mark.parametrize("failing", ["os.replace", "os.fsync", "json.dumps"])
def test_M3_interrupted_update_leaves_the_old_file_intact(
    packages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    name = packages.write({"models.py": MODEL})
    (tmp_path / "base").mkdir()
    path = tmp_path / "base" / "api.json"
    assert update_baseline(name, path).written
    before = path.read_bytes()
    packages.write({"models.py": MODEL + "    b: int = 0\n"}, name=name)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    module, attr = failing.split(".")
    monkeypatch.setattr(f"{module}.{attr}", fail)

    with pytest.raises(OSError, match="No space left"):
        update_baseline(name, path)
    assert main(["update", name, "--baseline", str(path)]) == 2

    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["api.json"]  # no temp file left


def test_M3_update_keeps_the_file_mode(packages) -> None:
    name, path = packages.recorded({"models.py": MODEL})
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o664)
    packages.write({"models.py": MODEL + "    b: int = 0\n"}, name=name)

    assert update_baseline(name, path).written
    assert stat.S_IMODE(path.stat().st_mode) == 0o664


def test_M3_duplicate_keys_are_refused_naming_them(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"
    text = json.dumps(_valid(name), indent=1)
    entry = f'"{name}.models.P": '
    tail = text.split(entry, 1)[1]
    # Repeat the class entry and the top-level "version": JSON would keep the last copies.
    duplicated = text.replace('"version": "1.0.0"', '"version": "1.0.0", "version": "0.9"')
    block = tail.split("\n }", 1)[0]
    duplicated = duplicated.replace(entry + block, entry + block + ",\n  " + entry + block)
    path.write_text(duplicated)
    before = path.read_bytes()

    assert main(["update", name, "--baseline", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"polyloop-metatests: error: malformed baseline {path}: duplicate keys")
    assert f"'{name}.models.P'" in err and "'version'" in err
    assert path.read_bytes() == before


def test_M3_parse_errors_name_the_key_and_type_never_the_value(
    packages, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = packages.write({"models.py": MODEL})
    path = tmp_path / "api.json"
    for key, value in (
        ("package", {"db_password": "hunter2-SECRET"}),
        ("version", ["hunter2-SECRET"]),
        ("allowlist", {"x.Y": {"token": "hunter2-SECRET"}}),
    ):
        data = _valid(name)
        data[key] = value
        path.write_text(json.dumps(data))
        assert main(["check", name, "--baseline", str(path)]) == 2
        err = capsys.readouterr().err
        assert "SECRET" not in err and "db_password" not in err and "token" not in err
        assert "must be a string, not an " in err


def test_M3_read_only_baseline_is_never_replaced(
    packages, capsys: pytest.CaptureFixture[str]
) -> None:
    name, path = packages.recorded({"models.py": MODEL})
    packages.write({"models.py": MODEL + "    b: int = 0\n"}, name=name)
    os.chmod(path, 0o444)
    before, inode = path.read_bytes(), path.stat().st_ino

    assert main(["update", name, "--baseline", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"polyloop-metatests: error: baseline {path} is read-only (mode 0444); not replacing it"
        " — `check` reads it as it is; to record a new one, run `update` where the baseline may"
        " be written (your own checkout) or give `--baseline` a writable path\n"
    )
    assert (path.read_bytes(), path.stat().st_ino) == (before, inode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert main(["check", name, "--baseline", str(path)]) == 0  # reading is fine


def test_M3_symlinked_baseline_is_written_through_the_link(packages, tmp_path: Path) -> None:
    name = packages.write({"models.py": MODEL})
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "api.json"
    assert update_baseline(name, target).written
    link = tmp_path / "api.json"
    link.symlink_to(target)
    packages.write({"models.py": MODEL + "    b: int = 0\n"}, name=name)

    assert update_baseline(name, link).written

    assert link.is_symlink() and link.resolve() == target.resolve()
    params = load_baseline(target).classes[f"{name}.models.P"].parameters or ()
    assert [p.name for p in params] == ["a", "b"]
    assert _listing(tmp_path) == ["api.json", "real"]


def test_M3_stale_temporary_files_of_an_interrupted_update_are_cleaned(
    packages, tmp_path: Path
) -> None:
    name, path = packages.recorded({"models.py": MODEL})
    stale = tmp_path / ".api.json.k3x9_q2z.tmp"  # what kill -9 during update leaves
    fresh = tmp_path / ".api.json.abcdefgh.tmp"  # a concurrent update, still writing
    foreign = tmp_path / ".api.json.mine.tmp"  # not of the guard's naming
    for p in (stale, fresh, foreign):
        p.write_text("{")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(foreign, (old, old))

    assert check_package(name, path).ok

    assert _listing(tmp_path) == [
        ".api.json.abcdefgh.tmp",
        ".api.json.mine.tmp",
        "api.json",
    ]


def test_M3_kill_9_during_update_leaves_nothing_the_next_update_keeps(
    packages, tmp_path: Path
) -> None:
    name, path = packages.recorded({"models.py": MODEL})
    leftover = tmp_path / ".api.json.zz99zz99.tmp"
    leftover.write_text('{"half": ')
    old = time.time() - 120
    os.utime(leftover, (old, old))
    packages.write({"models.py": MODEL + "    b: int = 0\n"}, name=name)

    assert update_baseline(name, path).written

    assert _listing(tmp_path) == ["api.json"]


def test_M4_missing_baseline_for_a_missing_package_does_not_suggest_update(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "api.json"

    assert main(["check", "mtpkg_nowhere_to_be_found", "--baseline", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "polyloop-metatests: error: no importable package named 'mtpkg_nowhere_to_be_found'"
        f" (is it installed or on sys.path?); nothing to check against {path}\n"
    )


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "packages")
