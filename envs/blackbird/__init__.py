"""Blackbird Pie (generic Lady Blackbird rules) with a house-rules combat fork.

The ruleset where dice-pool spending is studied: when is it right to spend pool dice, and can a
player farm them by failing on purpose? Rules: ``docs/rules/blackbird.md``.
"""

from __future__ import annotations

from pathlib import Path

from envs.blackbird.config import BlackbirdConfig
from envs.blackbird.odds import ODDS
from envs.blackbird.scenarios import KNOBS, SCENARIOS
from envs.core.game import Ruleset

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
    knobs=KNOBS,
    odds=ODDS,  # the core mechanic of `rulebreaker odds` (envs/blackbird/odds.py)
)

__all__ = ["RULESET"]
