"""Crossroads scenarios: ``episode`` (Rules 1-13, 2-12 seats by ``episode.players``).

The scenario's rules card is the docstring of :mod:`envs.crossroads.episode`; this module holds its
setup (sizes, players), its option groups and its decision contexts.
"""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.game import Scenario
from envs.crossroads.actions import CONTEXT_NAMES, num_actions
from envs.crossroads.config import MAX_PLAYERS, CrossroadsConfig
from envs.crossroads.episode import CrossroadsState
from envs.crossroads.observation import Layout, layout_of

OPTION_GROUPS = (
    "build",
    "optimal_assignment",
    "suboptimal_assignment",
    "spend_stat",
    "spend_plus_c",
    "spend_remove_minus_c",
    "introduce",
    "deal",
    "confront",
    "target_leader",
    "target_other",
    "oppose_own_character",
    "oppose_common",
    "oppose_faction",
    "no_opposition",
    "aim_minus_c",
    "aim_plus_c",
    "aim_goal",
    "deal_own_faction",
    "deal_other_faction",
    "deal_against",
    "burn_before",
    "burn_after",
    "trade",
    "loser_mark",
    "lower_influence",
    "outcome_stat",
    "outcome_plus_c",
    "outcome_remove_minus_c",
    "outcome_goal",
    "outcome_harm_stat",
    "outcome_harm_condition",
    "outcome_named_minus_c",
    "outcome_unmark",
    "outcome_kill",
    "outcome_influence",
    "pass",
)
"""Option groups :meth:`CrossroadsState.option_of` returns (restricted play forbids one at a time)."""

DECISION_CONTEXTS = CONTEXT_NAMES


def new_episode(config: BaseModel) -> CrossroadsState:
    """A fresh episode: setup starts with seat 0 building its character (or a roll for the first player)."""
    assert isinstance(config, CrossroadsConfig)
    return CrossroadsState(config)


def episode_players(config: BaseModel) -> int:
    """``episode.players`` seats (2-12)."""
    assert isinstance(config, CrossroadsConfig)
    return config.episode.players


def episode_layout(config: BaseModel) -> Layout:
    """The slots of the config: 5 seats, 10 characters and 8 factions as written, more where the config asks."""
    assert isinstance(config, CrossroadsConfig)
    ep = config.episode
    return layout_of(ep.players, ep.max_characters, ep.max_factions)


def episode_actions(config: BaseModel) -> int:
    """The action table's size: 69 as written (10 character and 8 faction targets), more with more slots."""
    layout = episode_layout(config)
    return num_actions(layout.char_slots, layout.faction_slots)


def episode_observation_size(config: BaseModel) -> int:
    """The observation's length: 304 as written."""
    return episode_layout(config).size


EPISODE = Scenario(
    name="episode",
    title="Episode",
    description=(
        "A whole GM-less episode for 2-12 players (episode.players, default 3): build a character (12 points over "
        "G/KH/M), present a faction, then take turns as Admin framing introductions, deals and confrontations "
        "until three exits or the scene limit. Reward: +1 goal achieved, -1 personal character written off, "
        "+-0.25 for the faction's Influence change."
    ),
    num_players=episode_players,
    num_actions=episode_actions,
    observation_size=episode_observation_size,
    new_game=new_episode,
    max_episode_steps=3000,
    player_names=tuple(f"Player {i + 1}" for i in range(MAX_PLAYERS)),
    observation_bounds=(0.0, 1.0),
    observation_in_bounds=True,
    clone_start=True,
    option_groups=OPTION_GROUPS,
    progress_resources=("goal_boxes",),
    option_rules={  # the rule of docs/rules/crossroads.md each option plays (named by the report)
        "build": "1",
        **dict.fromkeys(("optimal_assignment", "suboptimal_assignment"), "3"),
        **dict.fromkeys(("spend_stat", "spend_plus_c", "spend_remove_minus_c", "pass"), "6"),
        "introduce": "9",
        **dict.fromkeys(("deal", "deal_own_faction", "deal_other_faction", "deal_against"), "10"),
        **{g: "11" for g in OPTION_GROUPS if g.startswith(("confront", "target_", "oppose_", "aim_", "outcome_"))},
        **dict.fromkeys(("no_opposition", "burn_before", "burn_after", "trade", "loser_mark"), "11"),
        **dict.fromkeys(("lower_influence", "outcome_kill"), "12"),
    },
)

SCENARIOS = {"episode": EPISODE}
