"""Crossroads: a GM-less episode game with three stats G | KH | M, conditions, factions and crossroads.

Rules as implemented: ``docs/rules/crossroads.md``. Importing :mod:`envs` registers
``rulebreaker/CrossroadsEpisode-v0``.
"""

from __future__ import annotations

from pathlib import Path

from envs.core.game import Knob, Ruleset
from envs.crossroads.config import CrossroadsConfig
from envs.crossroads.odds import ODDS
from envs.crossroads.scenarios import SCENARIOS

_HERE = Path(__file__).parent

RULESET = Ruleset(
    name="crossroads",
    title="Crossroads",
    description="GM-less episode game: 3d10 roll-under with dice assignment over G|KH|M, conditions, factions "
    "(seed 003; every gap in the text is a config decision)",
    config_model=CrossroadsConfig,
    rules_path=_HERE / "rules.toml",
    scenarios=SCENARIOS,
    variants_dir=_HERE / "variants",
    knobs=[
        Knob("advantage.bonus", (0, 2), "Advantage worth nothing / +2 successes instead of +1"),
        Knob("confrontation.reroll_repeatable", (False,), "a side may burn +C to reroll only once"),
        Knob("spend.double_step", ("off", "opposite_sign"), "the +-2 option switched off / paid with the other sign"),
        Knob("deal.influence_gain", (0, 2), "deals give the faction no Influence / +2"),
        Knob("confrontation.loser_trade", ("off",), "losers cannot trade -C for degree"),
        Knob("faction.start_influence", (3, 5), "factions start at Influence 3 / 5"),
        Knob("character.creation_points", (10, 14), "characters built on 10 / 14 points"),
        Knob("crossroads.effect", ("extra_success", "gain_minus_c"), "a crossroads adds a success / brings a -C"),
    ],
    odds=ODDS,  # the core mechanic of `rulebreaker odds` (envs/crossroads/odds.py)
)

__all__ = ["RULESET"]
