"""Correct executors: each conforms to the contract and varies the structure in one way."""
