"""Kit gaps found by mutation analysis (docs/detection.md) that the kit does not catch yet.

Empty: the six found by the first run (E12 ``__str__`` raising SystemExit, E4 a metaclass
``__name__``, E9 a result claiming ``str``, E13 non-JSON leaves, E2 hostile keys, V6 accusing a
valid value) are caught now and live in the zoo proper, at the end of ``tests/zoo/broken.py``.

To add a gap a later run finds: write a zoo-style broken executor here — the zoo's correct
``ZooExecutor`` (``tests/zoo/base.py``) with one hook overridden to do what the surviving mutant
does — with ``VIOLATES`` (the clause it breaks) and ``KNOWN_MISS`` (why ``certify`` does not see
it, and what the property must do instead), put it in `GAPS`, and add its witness call to
``tests/zoo/witnesses.py`` (the bug must show on a concrete call). ``tests/mutants/test_gaps.py``
then holds a strict xfail asserting that ``certify`` fails it; when the kit learns to catch it,
the xfail passes and fails the suite: move the class to the end of ``tests/zoo/broken.py``
without its ``KNOWN_MISS`` (the list only shrinks).
"""

from __future__ import annotations

from zoo.base import ZooExecutor

__all__ = ["GAPS"]


GAPS: tuple[type[ZooExecutor], ...] = ()
