"""storyteller: the Storyteller d10 system as printed in Demon: The Fallen (rules chapter).

Rules reference: docs/rules/storyteller.md. Scenarios: ``heist`` (timed extended tasks, one player)
and ``duel`` (extended + resisted contest, two players); their rules cards are the docstrings of
``heist.py`` and ``duel.py``.
"""

from __future__ import annotations

from pathlib import Path

from envs.core.game import Ruleset, Scenario
from envs.storyteller.actions import DUEL_OPTION_GROUPS, HEIST_OPTION_GROUPS
from envs.storyteller.config import StorytellerConfig
from envs.storyteller.duel import duel_actions, duel_observation_length, new_duel
from envs.storyteller.heist import heist_actions, new_heist
from envs.storyteller.observation import HEIST_OBS_SIZE
from envs.storyteller.odds import ODDS
from envs.storyteller.scenarios import DUEL_OPTION_RULES, HEIST_OPTION_RULES, KNOBS

HEIST = Scenario(
    name="heist",
    title="Heist",
    description="Two or three timed extended tasks from the seed's examples: split into multiple actions, "
    "spend Willpower, retry or abandon, automatic success or roll, pick the approach, send the ally",
    num_players=1,
    num_actions=heist_actions,  # 22, and 2 more per action beyond 3 (multiple_actions.max_actions)
    observation_size=HEIST_OBS_SIZE,
    new_game=new_heist,
    max_episode_steps=400,
    observation_in_bounds=True,
    clone_start=True,
    player_names=("Thief",),
    observation_bounds=(0.0, 1.0),
    option_groups=HEIST_OPTION_GROUPS,
    progress_resources=("progress", "turns_left"),
    time_limit_is_rule=True,  # the guards arriving is how a heist ends
    core_options=("retry",),  # retrying a failed roll is the heist's intended core (rule 10)
    option_rules=HEIST_OPTION_RULES,
)

DUEL = Scenario(
    name="duel",
    title="Duel",
    description="Extended + resisted contest, first to N accumulated successes: attack/defend split, "
    "approach, Willpower",
    num_players=2,
    num_actions=duel_actions,  # 8, and 2 more per action beyond 2 (duel.max_actions, one_roll_per_task = false)
    observation_size=duel_observation_length,  # 40, and 3 more per action beyond 2
    new_game=new_duel,
    max_episode_steps=400,
    observation_in_bounds=True,
    clone_start=True,
    player_names=("Asha", "Bram"),
    observation_bounds=(0.0, 1.0),
    option_groups=DUEL_OPTION_GROUPS,
    progress_resources=("progress",),
    option_rules=DUEL_OPTION_RULES,
)

SCENARIOS = {"heist": HEIST, "duel": DUEL}

RULESET = Ruleset(
    name="storyteller",
    title="Storyteller",
    description="Storyteller d10 dice pools (Demon: The Fallen): difficulty, rule of one, botches, willpower, "
    "multiple actions, retries, extended and resisted actions",
    config_model=StorytellerConfig,
    rules_path=Path(__file__).with_name("rules.toml"),
    scenarios=SCENARIOS,
    variants_dir=Path(__file__).with_name("variants"),
    knobs=KNOBS,
    odds=ODDS,  # the core mechanic of `rulebreaker odds` (envs/storyteller/odds.py)
)

__all__ = ["DUEL", "HEIST", "RULESET", "SCENARIOS"]
