"""Batch executors written from contract section 10 and polyloop's public API alone, each in
its own structure (unlike polyloop's scheduler and the zoo's `ZooBatch`): all must certify.
Each module exports ``make_executor(registry, *, max_concurrency)``. The ``indep_*`` ones (issue
30) were written from the contract by people who never read ``conformance/``, each with its own
stop sentences and its own way of raising the cancellation."""
