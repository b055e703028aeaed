"""Experiment drivers (evaluate, train, discover, regress, sweeps) and the ``rulebreaker`` CLI."""
