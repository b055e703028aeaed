"""Blackbird Pie (generic Lady Blackbird rules) with a house-rules combat fork.

The ruleset where dice-pool spending is studied: when is it right to spend pool dice, and can a
player farm them by failing on purpose? Rules: ``docs/rules/blackbird.md``.
"""

from __future__ import annotations

from pathlib import Path

from envs.blackbird.config import BlackbirdConfig
from envs.blackbird.scenarios import SCENARIOS
from envs.core.game import Knob, Ruleset

HERE = Path(__file__).parent

RULESET = Ruleset(
    name="blackbird",
    title="Blackbird",
    description="Blackbird Pie: trait/tag/flag dice pools, personal pool dice that grow on failure, "
                "help, perks, advancement, and a contested-roll combat fork with a damage table.",
    config_model=BlackbirdConfig,
    rules_path=HERE / "rules.toml",
    scenarios=SCENARIOS,
    variants_dir=HERE / "variants",
    knobs=[
        Knob("pool.failure_bonus", (0, 2), "a failed roll gives no extra pool die / two extra pool dice"),
        Knob("pool.session_reset", (4, 10), "the pool resets lower / to full between sessions",
             ("session",)),
        Knob("pool.cap", (7, 15), "a tighter / looser pool cap"),
        Knob("dice.success_on", (3, 5), "successes on 3+ / 5+ instead of 4+"),
        Knob("difficulty.default", (2, 4), "ordinary obstacles are easy / hard instead of medium",
             ("session",)),
        Knob("help.returned_on_failure", (False,), "the helper's die is lost even when the roll fails",
             ("session",)),
        Knob("combat.hit_points", (4, 8), "fewer / more hit points", ("duel",)),
        Knob("combat.aim_max", (1, 5), "aiming stores at most 1 / 5 dice", ("duel",)),
    ],
)

__all__ = ["RULESET"]
