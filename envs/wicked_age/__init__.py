"""In a Wicked Age (Vincent Baker): the conflict engine, its duel and melee scenarios.

Rules as implemented: docs/rules/wicked_age.md. Importing this package builds ``RULESET``;
``import envs`` registers ``rulebreaker/WickedAgeDuel-v0`` and ``rulebreaker/WickedAgeMelee-v0``.
"""

from __future__ import annotations

from pathlib import Path

from envs.core.game import Knob, Ruleset
from envs.wicked_age.config import WickedAgeConfig
from envs.wicked_age.odds import ODDS
from envs.wicked_age.scenarios import DUEL, MELEE

_HERE = Path(__file__).parent

RULESET = Ruleset(
    name="wicked_age",
    title="WickedAge",
    description="In a Wicked Age (Vincent Baker), 'Dice, action and consequences': forms, standing rolls, "
    "advantage dice, absolute results, the owe list and negotiation with the whip.",
    config_model=WickedAgeConfig,
    rules_path=_HERE / "rules.toml",
    scenarios={"duel": DUEL, "melee": MELEE},
    variants_dir=_HERE / "variants",
    knobs=[
        Knob("advantage.die_sides", (4, 8), "advantage die a d4 / a d8 instead of a d6 (Rule 13)"),
        Knob("contest.max_rounds", (2, 4), "conflicts end after round 2 / round 4 instead of 3 (Rule 12)"),
        Knob(
            "contest.absolute_multiple",
            (3,),
            "absolute results need triple / a third instead of double / half (Rule 11)",
        ),
        Knob("owe_list.enabled", (False,), "no owe list (Rules 18-19)"),
        Knob("owe_list.dice_per_entry", (2,), "a cashed owe-list entry gives two advantage dice (Rule 19)"),
        Knob("negotiation.enabled", (False,), "no negotiation: the default consequence always (Rule 17)"),
        Knob("consequences.pc_out_zero_forms", (1, 3), "a PC is out with one / three forms at 0 (Rule 16)"),
    ],
    odds=ODDS,  # the core mechanic of `rulebreaker odds` (envs/wicked_age/odds.py)
)

__all__ = ["RULESET"]
