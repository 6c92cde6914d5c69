"""Batch executors written from contract section 10 and polyloop's public API alone, each in
its own structure (unlike polyloop's scheduler and the zoo's `ZooBatch`): all must certify.
Each module exports ``make_executor(registry, *, max_concurrency)``."""
