"""V6 on its own catches a validator that lets any non-bool value pass ``"type": "number"``.

The mutant of ``polyloop/tools.py`` whose ``_is_number`` reads ``... or not isinstance(value,
bool)`` accepts ``"7"`` or ``null`` for a number: the kit's V6 traps must send such a value to a
``number``-typed property, not only to an ``integer`` one.
"""

from __future__ import annotations

from typing import ClassVar

from zoo.base import ZooExecutor

from conformance.engine import certify
from polyloop import RegistryExecutor


class AcceptsAnythingButBoolAsNumber(ZooExecutor):
    """The mutant's ``_is_number``: any non-bool value passes as a number (V6)."""

    VIOLATES: ClassVar[tuple[str, ...]] = ("V6",)

    def type_matches(self, value: object, type_name: str) -> bool:
        if type_name == "number":
            return not isinstance(value, bool)
        return super().type_matches(value, type_name)


def test_V6_kit_rejects_an_executor_that_accepts_a_string_for_a_number() -> None:
    broken = certify(AcceptsAnythingButBoolAsNumber, only=["V6"], profile="ci", seed=0)
    assert broken.result("V6").status == "fail", broken.to_text()
    assert broken.result("V6").counterexample is not None

    reference = certify(RegistryExecutor, only=["V6"], profile="ci", seed=0)
    assert reference.result("V6").status == "pass", reference.to_text()
