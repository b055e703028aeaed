"""Ruleset discovery and Gymnasium registration.

Each ruleset package ``envs.<name>`` exposes ``RULESET``. ``import envs`` registers every scenario
of every ruleset as ``rulebreaker/<Ruleset><Scenario>-v0``.
"""

from __future__ import annotations

import importlib

import gymnasium as gym

from envs.core.errors import UserError
from envs.core.game import Ruleset

RULESET_NAMES: tuple[str, ...] = ("wicked_age", "storyteller", "blackbird", "crossroads", "hallownest")
_RULESETS: dict[str, Ruleset] = {}
_loaded = False


def register_ruleset(ruleset: Ruleset) -> None:
    """Add a ruleset (the shipped ones, a designer's own, or a test's toy game) and its env ids."""
    _RULESETS[ruleset.name] = ruleset
    for name, scenario in ruleset.scenarios.items():
        env_id = ruleset.env_id(name)
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point="envs.core.gym_adapter:make_env",
            kwargs={"ruleset": ruleset.name, "scenario": name},
            max_episode_steps=scenario.max_episode_steps,
        )


def load_builtin_rulesets() -> None:
    """Import and register the shipped rulesets (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in RULESET_NAMES:
        try:
            module = importlib.import_module(f"envs.{name}")
        except ModuleNotFoundError as e:  # a ruleset folder not written yet: skip only that module
            if e.name == f"envs.{name}":
                continue
            raise
        register_ruleset(module.RULESET)


def all_rulesets() -> dict[str, Ruleset]:
    """Every registered ruleset by name."""
    load_builtin_rulesets()
    return dict(_RULESETS)


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``; an unknown name is a :class:`UserError` listing the valid ones."""
    rulesets = all_rulesets()
    if name not in rulesets:
        raise UserError(f"unknown ruleset '{name}'; valid: {', '.join(sorted(rulesets)) or '(none)'}")
    return rulesets[name]
