"""``python -m metatests``: the same CLI as ``polyloop-metatests``."""

from metatests.cli import main

raise SystemExit(main())
