"""Independent executors written from the contract alone, to measure the kit's specificity.

`correct/` must all be certified; each module in `broken/` violates exactly the clause it names.
"""
