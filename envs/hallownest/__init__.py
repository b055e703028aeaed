"""Hallownest: the Unofficial Hollow Knight RPG's combat chapter and its stamina-investment duel."""

from __future__ import annotations

from pathlib import Path

from envs.core.game import Knob, Ruleset
from envs.hallownest.config import HallownestConfig
from envs.hallownest.odds import ODDS
from envs.hallownest.scenarios import DUEL

HERE = Path(__file__).parent

RULESET = Ruleset(
    name="hallownest",
    title="Hallownest",
    description="The Unofficial Hollow Knight RPG, chapter 10 (Combat): stamina investment, tax, parry/dodge, "
    "Death's Door",
    config_model=HallownestConfig,
    rules_path=HERE / "rules.toml",
    scenarios={"duel": DUEL},
    variants_dir=HERE / "variants",
    knobs=[
        Knob("stamina.tax_per_attack", (0, 2), "the stamina tax per further attack: off, or doubled"),
        Knob("dice.success_on", (4, 6), "successes on 4+ (easier) or only on 6"),
        Knob("imbalance.max", (1, 5), "Imbalance cap lowered to 1 or raised to 5"),
        Knob("deaths_door.enabled", (False,), "Death's Door switched off (only unconsciousness at Heart 0)"),
        Knob("defense.base_cost", (0, 2), "a defense's non-invested cost: free, or 2 Stamina"),
        Knob("imbalance.heavy_weapon_gain", (0, 2), "heavy weapons give no Imbalance, or 2 per attack"),
        Knob("parry.weapon_dice_per_stamina", (1, 3), "weapon parry dice per invested Stamina: 1 or 3"),
        Knob("damage.extra_cap", ("base", "none"), "extra damage capped by base damage only, or uncapped"),
    ],
    odds=ODDS,  # the core mechanic of `rulebreaker odds` (envs/hallownest/odds.py)
)

__all__ = ["RULESET"]
