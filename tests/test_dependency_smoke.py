"""hypothesis-jsonschema must work with the installed Hypothesis (DESIGN.md, "Dependencies").

hypothesis-jsonschema 0.23.1 uses a private Hypothesis API that changed in 6.170.10: with a
newer Hypothesis it fails on every object schema with
``AttributeError: 'many' object has no attribute 'more'``. pyproject.toml pins
``hypothesis<6.170.10`` for that reason; this test is the alarm that goes off if the pin is
lifted or bypassed.
"""

from __future__ import annotations

import hypothesis
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema

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

PIN_EXPLANATION = (
    "hypothesis-jsonschema cannot generate from an object schema with hypothesis "
    f"{hypothesis.__version__}. hypothesis-jsonschema 0.23.1 relies on a private Hypothesis API "
    "that changed in 6.170.10 ('many' object has no attribute 'more'); pyproject.toml pins "
    "'hypothesis<6.170.10' in the conformance extra. Reinstall with that pin "
    "(pip install 'hypothesis<6.170.10'), or update the pin only together with a "
    "hypothesis-jsonschema release that supports the newer Hypothesis."
)


def test_dependency_hypothesis_jsonschema_generates_objects() -> None:
    generated: list[object] = []

    @settings(
        max_examples=10,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(OBJECT_SCHEMA))
    def collect(instance: object) -> None:
        generated.append(instance)

    try:
        collect()
    except Exception as exc:  # the whole point is to translate any failure into the pin
        pytest.fail(f"{PIN_EXPLANATION}\nUnderlying error: {type(exc).__name__}: {exc}")
    assert generated, PIN_EXPLANATION
    validator = jsonschema.Draft202012Validator(OBJECT_SCHEMA)
    for instance in generated:
        assert validator.is_valid(instance), f"generated an invalid instance {instance!r}"
        assert isinstance(instance, dict)
        assert {"name", "count"} <= set(instance)
