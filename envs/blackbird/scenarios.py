"""The Blackbird scenarios: Session (one character, a run of obstacles) and Duel (two combatants)."""

from __future__ import annotations

from envs.blackbird.duel import DUEL_ACTIONS, new_duel
from envs.blackbird.duel import OBS_SIZE as DUEL_OBS
from envs.blackbird.session import OBS_SIZE as SESSION_OBS
from envs.blackbird.session import SESSION_ACTIONS, new_session
from envs.core.game import Scenario

SPEND_GROUPS = ("spend_0_pool", "spend_some_pool", "spend_all_pool")

SESSION = Scenario(
    name="session",
    title="Session",
    description=("A sample character meets session.obstacles_per_session obstacles drawn from a table in each "
                 "of session.sessions sessions: pick the trait, take the helper's die or not, spend pool dice, "
                 "retry after a failure. Return: the share of the stakes won (critical stakes weigh more)."),
    num_players=1,
    num_actions=SESSION_ACTIONS,
    observation_size=SESSION_OBS,
    new_game=new_session,
    max_episode_steps=1000,
    player_names=("character",),
    observation_bounds=(-1.0, 1.0),
    option_groups=(*SPEND_GROUPS, "use_trait", "no_trait", "accept_help", "decline_help", "retry", "give_up"),
)

DUEL = Scenario(
    name="duel",
    title="Duel",
    description=("Two combatants trade maneuvers (attack, called shot, aim, all-out attack/defence, move & attack, "
                 "move, ready, cover) and spend pool dice on attack and defence; wounds, consciousness checks, "
                 "death at -4 HP. Return ±1, 0 at duel.max_turns."),
    num_players=2,
    num_actions=DUEL_ACTIONS,
    observation_size=DUEL_OBS,
    new_game=new_duel,
    max_episode_steps=1000,
    player_names=("first fighter", "second fighter"),
    observation_bounds=(-1.0, 1.0),
    option_groups=(*SPEND_GROUPS, "attack", "called_shot", "aim", "all_out_attack", "all_out_defense",
                   "move_attack", "move", "ready", "cover"),
)

SCENARIOS = {"session": SESSION, "duel": DUEL}
