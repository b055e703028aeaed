"""Heuristic personas, one module per ruleset, each exposing ``PERSONAS: dict[str, type]``.

Every persona class has a ``name`` and a one-sentence docstring describing its style; the CLI's
``rulebreaker rulesets`` prints those sentences.
"""
