"""The public name of the kit's Hypothesis strategies (tool schemas, calls, behaviours).

```python
from conformance.strategies import tool_schemas, valid_calls, invalid_calls
```

They live with the executor subject (`conformance.executor.strategies`, whose docstring lists
them); this façade keeps the import path the documentation shows. Nothing in the kit imports it.
"""

from __future__ import annotations

from conformance.executor.strategies import *  # noqa: F403 - the subject's names are the façade's
from conformance.executor.strategies import __all__ as _STRATEGIES_ALL

__all__ = list(_STRATEGIES_ALL)
