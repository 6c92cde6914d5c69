"""Broken executors: each violates the one clause named by its CLAUSE and tries to keep the rest."""
