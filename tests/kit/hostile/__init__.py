"""Hostile targets for the isolation tests (issue 13 items 4-7 and 9, issue 9 defects 4, 5, 7).

Each module is one small target that attacks the kit the way a careless or malicious executor
or tool list would: it exits, kills its process, forks, prints, closes stdout, holds the GIL or
patches the clocks the kit relies on. They are imported by name (``hostile.<module>:<attr>``),
in the test process or in the command line's child process.
"""
