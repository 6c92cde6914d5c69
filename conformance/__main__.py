"""``python -m conformance``: the same command line as ``polyloop-conformance``."""

from conformance.cli import main

raise SystemExit(main())
