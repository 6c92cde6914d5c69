"""``python -m conformance``: the same command line as ``polyloop-conformance``, through the same
door (`polyloop._launch.conformance_main`: ``--version``, and one line naming the extra when it
is missing)."""

from polyloop._launch import conformance_main

if __name__ == "__main__":
    raise SystemExit(conformance_main())
