"""Four independent durable runtimes for contract section 12, written from the contract alone.

Each module exposes `factory(registry, directory)`; see README.md.
"""

RUNTIMES = ("sqlite_log", "jsonl_log", "sqlite_rows", "file_per_record")
"""Module names, in the order of the brief."""
