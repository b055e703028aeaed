"""Crossroads scenarios: ``episode`` (Rules 1-13, 2-5 seats by ``episode.players``).

``rulebreaker/CrossroadsEpisode-v0`` — the rules card:

## Description
A whole GM-less episode (docs/rules/crossroads.md). Each player builds a personal character (12 points
over G/KH/M) and presents a faction; then the Admin role rotates left, each Admin framing an
introduction, a deal or a confrontation, until three exits (write-offs) or the scene limit.

## Action Space
``Discrete(67)``, one fixed table (:class:`envs.crossroads.engine.Act`): stat values 1-9 (build), six dice
permutations (assign), spends/outcomes (+1/+2 stat, +C, -C, mark, harm, unmark, kill, Influence), pass,
burn, trade, four scene types, no-opposition, and 18 entity targets (10 character, 8 faction slots).
The decision context (``build``, ``assign``, ``spend``, ``admin_scene``, ``admin_target``,
``admin_opposition``, ``admin_aim``, ``target_aim``, ``deal_faction``, ``deal_against``, ``burn_before``,
``burn_after``, ``loser_trade``, ``buy_outcome``, ``loser_mark``, ``lower_influence``) says which are legal.

## Observation Space
``Box(0, 1, (304,), float32)``: 52 global features (context one-hot, Admin seat relative to the agent,
scene and exit progress, the dice being assigned or spent, successes / spends left / degree, both
confrontation sides' dice, burns, successes and success flags, build step, check purpose), then 10
character slots x 18 (alive, mine, common, owner, stats, +C, -C, wounded, dying, goal boxes, Advantage,
target / opposition markers) and 8 faction slots x 9 (alive, mine, owner, Influence, +C, -C, Advantage,
opposition marker).

## Rewards
At the end: +1 per personal character of the seat that achieved its goal, -1 per one otherwise written
off (sum clipped to +-1), plus 0.25 x mean over its factions of (Influence - 4) / 4 clipped to +-1.

## Episode End
Three exits (``completed``) or ``episode.max_scenes`` = 40 scenes (``time_limit``, a finding-worthy
reason). ``max_episode_steps`` = 3000 agent decisions is never reached in practice.

## Arguments
``episode.players`` (2-5) and every rules key of ``rules.toml`` via ``rules=`` / ``config=``.
"""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.game import Scenario
from envs.crossroads.config import MAX_SEATS, CrossroadsConfig
from envs.crossroads.engine import CONTEXT_NAMES, NUM_ACTIONS, OBS_SIZE, CrossroadsState

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
    assert isinstance(config, CrossroadsConfig)
    return config.episode.players


EPISODE = Scenario(
    name="episode",
    title="Episode",
    description=(
        "A whole GM-less episode for 2-5 players (episode.players, default 3): build a character (12 points over "
        "G/KH/M), present a faction, then take turns as Admin framing introductions, deals and confrontations "
        "until three exits or the scene limit. Reward: +1 goal achieved, -1 personal character written off, "
        "+-0.25 for the faction's Influence change."
    ),
    num_players=episode_players,
    num_actions=NUM_ACTIONS,
    observation_size=OBS_SIZE,
    new_game=new_episode,
    max_episode_steps=3000,
    player_names=tuple(f"Player {i + 1}" for i in range(MAX_SEATS)),
    observation_bounds=(0.0, 1.0),
    option_groups=OPTION_GROUPS,
    progress_resources=("goal_boxes",),
)

SCENARIOS = {"episode": EPISODE}
