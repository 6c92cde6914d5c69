"""hypothesis-jsonschema must work with the installed Hypothesis (DESIGN.md, "Dependencies").

hypothesis-jsonschema 0.23.1 draws an object's keys through a private Hypothesis helper,
``conjecture.utils.many``, whose ``while elements.more():`` protocol Hypothesis 6.170.10 replaced
with ``with many(...) as elements: for _ in elements:``. Without `conformance._core.hjs_compat`
every object schema then fails with ``AttributeError: 'many' object has no attribute 'more'``. These
tests are the alarm: they fail loudly, naming the versions, when the layer stops bridging the
installed pair (tox -e deps-lowest and deps-newest run them on both ends of the declared range).
"""

from __future__ import annotations

from typing import Any

import hypothesis
import hypothesis_jsonschema
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as hypothesis_utils

from conformance._core import hjs_compat as _hjs_compat
from conformance._core.hjs_compat import from_schema

OBJECT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "count"],
    "additionalProperties": False,
}

# A schema dependency makes hypothesis-jsonschema reject drawn keys (`elements.reject()`).
DEPENDENT_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "dependencies": {"a": {"properties": {"b": {"minimum": 5}}}},
    "additionalProperties": False,
}

EXPLANATION = (
    f"hypothesis-jsonschema {hypothesis_jsonschema.__version__} cannot generate from an object "
    f"schema with hypothesis {hypothesis.__version__}, even through "
    "conformance/_core/hjs_compat.py. "
    "hypothesis-jsonschema 0.23.1 calls the private conjecture.utils.many().more(), which "
    "Hypothesis 6.170.10 replaced by `with many(...) as e: for _ in e:`; the layer bridges the "
    "two. Check what the installed Hypothesis's `many` looks like now and update the layer, or "
    "install the versions the README lists as supported."
)

QUIET = settings(
    max_examples=25, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def collect(strategy: st.SearchStrategy[Any]) -> list[Any]:
    generated: list[Any] = []

    @QUIET
    @given(strategy)
    def run(instance: Any) -> None:
        generated.append(instance)

    try:
        run()
    except Exception as exc:  # the whole point is to translate any failure into the explanation
        pytest.fail(f"{EXPLANATION}\nUnderlying error: {type(exc).__name__}: {exc}")
    return generated


def test_dependency_hypothesis_jsonschema_generates_objects() -> None:
    generated = collect(from_schema(OBJECT_SCHEMA))
    assert generated, EXPLANATION
    validator = jsonschema.Draft202012Validator(OBJECT_SCHEMA)
    for instance in generated:
        assert validator.is_valid(instance), f"generated an invalid instance {instance!r}"
        assert isinstance(instance, dict)
        assert {"name", "count"} <= set(instance)


def test_dependency_rejected_keys_still_give_valid_objects() -> None:
    generated = collect(from_schema(DEPENDENT_SCHEMA))
    validator = jsonschema.Draft7Validator(DEPENDENT_SCHEMA)
    assert generated, EXPLANATION
    for instance in generated:
        assert validator.is_valid(instance), f"generated an invalid instance {instance!r}"


@settings(max_examples=15, database=None, deadline=None)
@given(low=st.integers(0, 4), extra=st.integers(0, 3), data=st.data())
def test_dependency_object_sizes_stay_within_min_and_max_properties(
    low: int, extra: int, data: st.DataObject
) -> None:
    # The layer drives the size decisions of `many`: a wrong translation shows up as an object
    # with too few or too many keys.
    schema = {"type": "object", "minProperties": low, "maxProperties": low + extra}
    instance = data.draw(from_schema(schema))
    assert low <= len(instance) <= low + extra, (schema, instance)


def test_dependency_layer_is_installed_exactly_when_hypothesis_needs_it() -> None:
    new_protocol = hypothesis.__version_info__ >= (6, 170, 10)
    assert _hjs_compat.needs_shim() == new_protocol, (
        f"hypothesis {hypothesis.__version__}: many() has more(): "
        f"{hasattr(hypothesis_utils.many, 'more')}; the layer's detection is out of date"
    )
    assert _hjs_compat.shim_installed() == new_protocol


def test_dependency_layer_changes_only_hypothesis_jsonschemas_view() -> None:
    # Hypothesis's own module is untouched: only hypothesis-jsonschema sees the shim.
    assert hypothesis_utils.many.__module__ == "hypothesis.internal.conjecture.utils"
    seen = _hjs_compat.hjs_module.cu
    # Every other name is Hypothesis's own object.
    assert seen.calc_label_from_name is hypothesis_utils.calc_label_from_name
    if _hjs_compat.needs_shim():
        assert seen.many is not hypothesis_utils.many
    else:
        assert seen is hypothesis_utils


needs_new_protocol = pytest.mark.skipif(
    not _hjs_compat.needs_shim(), reason="this Hypothesis's many() still has more()"
)


@needs_new_protocol
@settings(max_examples=30, database=None, deadline=None)
@given(low=st.integers(0, 3), extra=st.integers(0, 3), data=st.data())
def test_dependency_legacy_more_protocol_counts_and_rejects(
    low: int, extra: int, data: st.DataObject
) -> None:
    high = low + extra
    elements = _hjs_compat._LegacyMany(
        data.conjecture_data, min_size=low, max_size=high, average_size=(low + high) / 2
    )
    kept = 0
    while elements.more():
        if data.draw(st.booleans(), label="reject this element"):
            elements.reject()
        else:
            kept += 1
    assert not elements.more(), "more() after the end must stay False"
    assert kept == elements.count
    assert kept <= high
    # Hypothesis may stop early after many rejections; below min_size it marks the example
    # invalid instead of returning, so a finished loop never has fewer than `low`.
    assert kept >= low


@needs_new_protocol
@settings(max_examples=15, database=None, deadline=None)
@given(data=st.data())
def test_dependency_new_protocol_passes_through(data: st.DataObject) -> None:
    with _hjs_compat._LegacyMany(
        data.conjecture_data, min_size=1, max_size=3, average_size=2
    ) as elements:
        drawn = sum(1 for _ in elements)
    assert 1 <= drawn <= 3
