"""The executor zoo: deliberately broken executors the conformance kit must catch, and unusual
but correct ones it must pass. Used by tests/kit/test_zoo*.py and tests/zoo/measure.py."""
