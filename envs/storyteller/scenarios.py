"""The Storyteller scenarios: Heist (one player) and Duel (two players)."""

from __future__ import annotations

from envs.core.game import Scenario
from envs.storyteller.duel import DUEL_ACTIONS, DUEL_OBS, new_duel
from envs.storyteller.heist import ACTION_COUNT, OBS_SIZE, new_heist

HEIST = Scenario(
    name="heist",
    title="Heist",
    description="Two or three timed extended tasks from the seed's examples: split into multiple actions, "
    "spend Willpower, retry or abandon, automatic success or roll, pick the approach, send the ally",
    num_players=1,
    num_actions=ACTION_COUNT,
    observation_size=OBS_SIZE,
    new_game=new_heist,
    max_episode_steps=400,
    player_names=("Thief",),
    observation_bounds=(0.0, 1.0),
    option_groups=(
        "single_action",
        "multiple_actions",
        "approach_main",
        "approach_alt",
        "auto_success",
        "willpower",
        "no_willpower",
        "retry",
        "abandon",
        "teamwork",
        "no_teamwork",
    ),
    progress_resources=("progress", "turns_left"),
    time_limit_is_rule=True,  # the guards arriving is how a heist ends
)

DUEL = Scenario(
    name="duel",
    title="Duel",
    description="Extended + resisted contest, first to N accumulated successes: attack/defend split, "
    "approach, Willpower",
    num_players=2,
    num_actions=DUEL_ACTIONS,
    observation_size=DUEL_OBS,
    new_game=new_duel,
    max_episode_steps=400,
    player_names=("Asha", "Bram"),
    observation_bounds=(0.0, 1.0),
    option_groups=(
        "single_action",
        "multiple_actions",
        "attack",
        "approach_alt",
        "defend",
        "willpower",
        "no_willpower",
    ),
    progress_resources=("progress",),
)

SCENARIOS = {"heist": HEIST, "duel": DUEL}
