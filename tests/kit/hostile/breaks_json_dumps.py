"""A correct executor whose module makes ``json.dumps`` raise, at import (issue 22, item 6):
the kit reports with its own copy, so the verdict stands."""

from __future__ import annotations

import json
from typing import Any

from hostile._base import Wrapped


def _broken(obj: Any, *args: Any, **kwargs: Any) -> str:
    raise RuntimeError("json.dumps is broken")


json.dumps = _broken


class Correct(Wrapped):
    pass
