"""Ruleset discovery and Gymnasium registration.

Each ruleset package ``envs.<name>`` exposes ``RULESET``. A designer's own package adds its ruleset through
the entry-point group ``rulebreaker.rulesets`` (``name = "package"`` or ``"package:RULESET"``; the object is a
:class:`Ruleset`, a module holding ``RULESET``, or a callable returning one). ``import envs`` registers every
scenario of every ruleset as ``rulebreaker/<Ruleset><Scenario>-v0``.

A plugin that fails to load (import error, not a ruleset, a name clashing with a shipped one, a scenario
whose first state cannot be built or whose observation has the wrong shape, an odds mechanic that is not an
:class:`~envs.core.odds.OddsProvider`) is skipped with one line on
stderr naming the entry point and the fix; asking for it by name is a :class:`UserError` (exit 2). The
shipped rulesets never depend on a plugin loading.
"""

from __future__ import annotations

import importlib
import sys
import types
from importlib.metadata import EntryPoint, entry_points

import gymnasium as gym
import numpy as np

from envs.core.errors import UserError
from envs.core.game import Ruleset

RULESET_NAMES: tuple[str, ...] = ("wicked_age", "storyteller", "blackbird", "crossroads", "hallownest")
ENTRY_POINT_GROUP = "rulebreaker.rulesets"
"""The entry-point group a designer's package declares its ruleset in."""
_RULESETS: dict[str, Ruleset] = {}
PLUGIN_ERRORS: dict[str, str] = {}
"""Plugins that failed to load: entry-point name -> the one-line message (with its fix)."""
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
            # GameEnv does what these two wrappers of gym.make's would: it raises ResetNeeded on a step before
            # reset() (OrderEnforcing's check) and after the end, and its outputs are one adapter's for every ruleset,
            # which gymnasium's full check_env passes on every scenario (the tests and `rulebreaker check`): the
            # passive checker's first-step checks would repeat it. Each wrapper is a pass-through frame per step.
            disable_env_checker=True,
            order_enforce=False,
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
    load_plugin_rulesets()


def _plugin_ruleset(ep: EntryPoint) -> Ruleset:
    """The ruleset an entry point names, validated; a problem is a :class:`UserError` naming the fix."""
    where = f"plugin '{ep.name} = {ep.value}' (entry point group {ENTRY_POINT_GROUP})"
    try:
        obj = ep.load()
    except Exception as e:  # any import-time failure of a third-party package: one line, not a traceback
        raise UserError(
            f"{where} failed to import: {type(e).__name__}: {e}; fix: make `import {ep.module}` work "
            f"(is the package installed in this environment?)"
        ) from None
    if isinstance(obj, types.ModuleType):
        obj = getattr(obj, "RULESET", None)
    elif callable(obj) and not isinstance(obj, Ruleset):
        try:
            obj = obj()
        except Exception as e:
            raise UserError(f"{where}: calling it failed: {type(e).__name__}: {e}") from None
    if not isinstance(obj, Ruleset):
        raise UserError(
            f"{where} is not a Ruleset (got {type(obj).__name__}); fix: point it at an envs.core.game.Ruleset "
            f"object or a module defining RULESET"
        )
    if obj.name in RULESET_NAMES:
        raise UserError(f"{where} is named '{obj.name}', which clashes with a shipped ruleset; fix: rename it")
    if obj.name != ep.name:
        raise UserError(f"{where} names ruleset '{obj.name}'; fix: name the entry point '{obj.name}' too")
    if obj.name in _RULESETS:
        raise UserError(f"{where}: ruleset '{obj.name}' is registered twice; fix: uninstall one of the packages")
    _validate_plugin(obj, where)
    return obj


def _validate_plugin(ruleset: Ruleset, where: str) -> None:
    """Build each scenario's first state under the default rules and check its observation's shape."""
    from envs.core.odds import OddsProvider

    if ruleset.odds is not None and not isinstance(ruleset.odds, OddsProvider):
        raise UserError(
            f"{where}: its odds is not an envs.core.odds.OddsProvider (got {type(ruleset.odds).__name__}); fix: "
            f"set Ruleset(odds=OddsProvider(summary, params, odds)) or leave it None (docs/adding-a-ruleset.md)"
        )
    try:
        config = ruleset.default_config()
    except UserError as e:
        raise UserError(f"{where}: its rules.toml does not load: {e}") from None
    for name, scenario in ruleset.scenarios.items():
        try:
            state = scenario.new_game(config)
            n_obs = scenario.observation_length(config)
            obs = np.asarray(state.observation(0))
            scenario.action_count(config)
        except Exception as e:  # e.g. a State subclass missing an abstract method cannot be instantiated
            raise UserError(
                f"{where}: scenario '{name}' cannot start a game: {type(e).__name__}: {e}; fix: implement the "
                f"State protocol of envs/core/game.py (docs/adding-a-ruleset.md)"
            ) from None
        if obs.shape != (n_obs,):
            raise UserError(
                f"{where}: scenario '{name}' observation has shape {obs.shape}, expected ({n_obs},); fix: make "
                f"observation() return observation_size floats"
            )


def load_plugin_rulesets() -> None:
    """Register every ruleset of the ``rulebreaker.rulesets`` entry points; skip a broken one with one line."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _RULESETS or ep.name in PLUGIN_ERRORS:
            continue
        try:
            register_ruleset(_plugin_ruleset(ep))
        except UserError as e:
            PLUGIN_ERRORS[ep.name] = str(e)
            print(f"rulebreaker: skipped {e}", file=sys.stderr)


def all_rulesets() -> dict[str, Ruleset]:
    """Every registered ruleset by name."""
    load_builtin_rulesets()
    return dict(_RULESETS)


def get_ruleset(name: str) -> Ruleset:
    """The ruleset called ``name``; an unknown name is a :class:`UserError` listing the valid ones."""
    rulesets = all_rulesets()
    if name not in rulesets:
        if name in PLUGIN_ERRORS:
            raise UserError(PLUGIN_ERRORS[name])
        raise UserError(f"unknown ruleset '{name}'; valid: {', '.join(sorted(rulesets)) or '(none)'}")
    return rulesets[name]
