"""M3 judges constructors as callers meet them (issue 23, item 2): a wrapper that only
forwards is judged by the unwrapped signature; a ``(*args, **kwargs)`` wrapper that does more,
or a constructor that became a forwarding shim, binds every recorded call, so its changes are
notes, never reported breaks. The baseline records which signature was judged."""

from __future__ import annotations

import json

from metatests import check_package, load_baseline

REFUSING = """\
import functools
from dataclasses import dataclass

def keyword_only(init):
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if args:
            raise TypeError("keyword arguments only")
        return init(self, **kwargs)
    return wrapper

@dataclass(kw_only=True)
class Config:
    a: int = 0
{extra}
Config.__init__ = keyword_only(Config.__init__)
"""

FORWARDING = '''\
import functools
from dataclasses import dataclass

def logged(init):
    @functools.wraps(init)
    def wrapper(*args, **kwargs):
        """Forward unchanged."""
        return init(*args, **kwargs)
    return wrapper

@dataclass(kw_only=True)
class Config:
    a: int = 0
{extra}
Config.__init__ = logged(Config.__init__)
'''


def test_M3_a_wrapper_that_does_more_than_forward_turns_no_call_into_a_break(packages) -> None:
    name, path = packages.recorded({"models.py": REFUSING.format(extra="    b: int = 0\n")})
    recorded = load_baseline(path).classes[f"{name}.models.Config"]
    assert recorded.judged == "outer"
    assert [(p.name, p.kind) for p in recorded.outer or ()] == [
        ("args", "var_positional"),
        ("kwargs", "var_keyword"),
    ]
    assert [p.name for p in recorded.parameters or ()] == ["a", "b"]  # the contract's record
    packages.write({"models.py": REFUSING.format(extra="")}, name=name)

    report = check_package(name, path)

    assert report.ok
    assert packages.notes(report) == [
        ("M3", "constructor-wrapped", "models.Config", None),
        ("M3", "parameter-removed", "models.Config", "b"),
    ]
    removed = next(f for f in report.notes if f.code == "parameter-removed")
    assert "no call breaks: callers meet a `(*args, **kwargs)` wrapper" in removed.change
    wrapped = next(f for f in report.notes if f.code == "constructor-wrapped")
    assert f"`{name}.models.Config.__init__`" in wrapped.change
    assert "does more than forward" in wrapped.change


def test_M3_a_wrapper_that_only_forwards_is_judged_by_the_unwrapped_signature(packages) -> None:
    name, path = packages.recorded({"models.py": FORWARDING.format(extra="    b: int = 0\n")})
    assert load_baseline(path).classes[f"{name}.models.Config"].judged == "unwrapped"
    packages.write({"models.py": FORWARDING.format(extra="")}, name=name)

    report = check_package(name, path)

    assert packages.failures(report) == [("M3", "parameter-removed", "models.Config", "b")]
    wrapped = next(f for f in report.notes if f.code == "constructor-wrapped")
    assert "only forwards its arguments: the unwrapped signature is judged" in wrapped.change


def test_M3_a_deprecated_forwarding_shim_reports_no_removal(packages) -> None:
    before = (
        "from dataclasses import dataclass\n\n"
        "@dataclass(kw_only=True)\nclass Output:\n    sequences: int\n    scores: int = 0\n"
    )
    shim = (
        "import warnings\nfrom dataclasses import dataclass\n\n"
        "@dataclass(kw_only=True)\nclass NewOutput:\n    sequences: int\n    scores: int = 0\n\n"
        "@dataclass(kw_only=True, init=False)\nclass Output(NewOutput):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        warnings.warn('use NewOutput', DeprecationWarning, stacklevel=2)\n"
        "        super().__init__(*args, **kwargs)\n"
    )
    name, path = packages.recorded({"models.py": before})
    packages.write({"models.py": shim}, name=name)

    report = check_package(name, path)

    # M1 still rejects `*args` (it judges the constructor, not the calls); M3 reports no break.
    assert packages.failures(report) == [("M1", "positional", "models.Output", None)]
    removed = [f for f in report.notes if f.code == "parameter-removed"]
    assert sorted(f.parameter or "" for f in removed) == ["scores", "sequences"]
    assert all("every recorded call still binds" in f.change for f in removed)


def test_M3_the_wrapped_record_is_written_only_for_wrapped_classes(packages) -> None:
    plain = "from dataclasses import dataclass\n\n@dataclass(kw_only=True)\nclass P:\n    a: int\n"
    name, path = packages.recorded({"models.py": REFUSING.format(extra=""), "plain.py": plain})
    classes = json.loads(path.read_text())["classes"]
    assert classes[f"{name}.plain.P"].keys() == {"parameters", "fields", "match_args"}
    assert classes[f"{name}.models.Config"]["judged"] == "outer"
