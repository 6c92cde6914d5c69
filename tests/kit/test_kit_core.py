"""The kit's shared core: one text/data helper each, one target policy, frozen profiles, and
`certify(fail_fast=True)`."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from _unprintable import UnprintableError
from hypothesis import given
from hypothesis import strategies as st
from zoo.runner import ClaimsCompletion

from conformance import certify
from conformance._core import hypo
from conformance._core.data import ints_to_floats, thaw
from conformance._core.target import UsageError, resolve
from conformance._core.text import STR_FAILED, clip, describe_exception, shorten
from conformance.cli import main

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def test_describe_exception_never_raises_and_uses_the_one_marker() -> None:
    assert describe_exception(ValueError("bad")) == "ValueError: bad"
    assert describe_exception(UnprintableError()) == f"UnprintableError: {STR_FAILED}"


@given(st.text(), st.integers(4, 200))
def test_shorten_and_clip_keep_short_text_and_bound_long_text(text: str, limit: int) -> None:
    short = shorten(text, limit)
    assert len(short) <= limit and (short == text or short.endswith("..."))
    clipped = clip(text, limit)
    assert clipped == text if len(text) <= limit else clipped.startswith(text[:limit])


@given(JSON)
def test_thaw_is_a_fresh_plain_copy(value: Any) -> None:
    copy = thaw(value)
    assert copy == value
    if isinstance(value, (dict, list)) and value:
        assert copy is not value


@given(JSON)
def test_ints_to_floats_keeps_bools_and_equal_values(value: Any) -> None:
    floated = ints_to_floats(value)
    assert floated == value
    assert not any(type(leaf) is int and abs(leaf) < 2**53 for leaf in _leaves(floated))


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_profiles_are_frozen_values() -> None:
    ci = hypo.PROFILES["ci"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.max_examples = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        hypo.PROFILES["new"] = ci  # type: ignore[index]
    with pytest.raises(ValueError, match="quick, ci, thorough"):
        hypo.profile("strcit")


def test_target_resolution_imports_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "localmod_refactor_probe.py").write_text("VALUE = 42\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        "sys.path", [p for p in __import__("sys").path if p not in ("", os.getcwd())]
    )
    assert resolve("localmod_refactor_probe:VALUE") == 42
    with pytest.raises(UsageError, match="has no attribute 'MISSING'"):
        resolve("localmod_refactor_probe:MISSING")


def test_fail_fast_stops_at_the_first_failing_clause() -> None:
    report = certify(
        ClaimsCompletion, profile="quick", seed=0, only=["E1", "E7", "E14"], fail_fast=True
    )
    statuses = {result.id: result.status for result in report.results}
    assert statuses["E7"] == "fail"
    assert statuses["E14"] == "skipped"
    assert "--fail-fast stopped at E7" in (report.result("E14").message or "")
    assert report.exit_status() == 1


def test_cli_fail_fast_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "certify",
            f"{__name__}:ClaimsCompletion",
            "--profile",
            "quick",
            "--only",
            "E7,E14",
            "--fail-fast",
        ]
    )
    assert status == 1
    assert "not run: --fail-fast stopped at E7" in capsys.readouterr().out


def test_catalog_json_dash_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--json", "-"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")
