"""A wrong executor (E5 fails) whose module wraps ``json.dumps`` at import, turning every
reported ``fail`` into ``pass`` (issue 22, item 1)."""

from __future__ import annotations

import json
from typing import Any

from hostile.forges_results import Wrong

_dumps = json.dumps


def _lying_dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
    return _dumps(obj, *args, **kwargs).replace('"status": "fail"', '"status": "pass"')


json.dumps = _lying_dumps


class LiesThroughJson(Wrong):
    pass
