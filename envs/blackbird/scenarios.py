"""The Blackbird scenarios: Session (one character, a run of obstacles) and Duel (two combatants).

Their setups (the sample character, the obstacle table, the fighters) are config defaults in
:mod:`envs.blackbird.config`; here are the scenario records, their option groups and the rule knobs
that discovery perturbs.
"""

from __future__ import annotations

from envs.blackbird.actions import duel_action_count, session_action_count
from envs.blackbird.duel import new_duel
from envs.blackbird.observation import DUEL_OBS_SIZE as DUEL_OBS
from envs.blackbird.observation import SESSION_OBS_SIZE as SESSION_OBS
from envs.blackbird.session import new_session
from envs.core.game import Knob, Scenario

SPEND_GROUPS = ("spend_0_pool", "spend_some_pool", "spend_all_pool")
"""Option groups of the "spend k pool dice" actions: none, some, all."""

SESSION = Scenario(
    name="session",
    title="Session",
    description=(
        "A sample character meets session.obstacles_per_session obstacles drawn from a table in each "
        "of session.sessions sessions: pick the trait, take the helper's die or not, spend pool dice, "
        "retry after a failure. Return: the share of the stakes won (critical stakes weigh more)."
    ),
    num_players=1,
    num_actions=session_action_count,  # the spend range follows pool.cap
    observation_size=SESSION_OBS,
    new_game=new_session,
    max_episode_steps=1000,
    player_names=("character",),
    observation_bounds=(-1.0, 1.0),
    observation_in_bounds=True,
    clone_start=True,
    option_groups=(*SPEND_GROUPS, "use_trait", "no_trait", "accept_help", "decline_help", "retry", "give_up"),
    core_options=("use_trait", "retry"),  # the game's intended core: a trait die and a retry help by design
    option_rules={
        **dict.fromkeys(SPEND_GROUPS, "5"),
        **dict.fromkeys(("use_trait", "no_trait"), "2"),
        **dict.fromkeys(("accept_help", "decline_help"), "6"),
        **dict.fromkeys(("retry", "give_up"), "4"),
    },
)

DUEL = Scenario(
    name="duel",
    title="Duel",
    description=(
        "Two combatants trade maneuvers (attack, called shot, aim, all-out attack/defence, move & attack, "
        "move, ready, cover) and spend pool dice on attack and defence; wounds, consciousness checks, "
        "death at -4 HP. Return ±1, 0 at duel.max_turns."
    ),
    num_players=2,
    num_actions=duel_action_count,  # the spend range follows pool.cap
    observation_size=DUEL_OBS,
    new_game=new_duel,
    max_episode_steps=1000,
    player_names=("first fighter", "second fighter"),
    observation_bounds=(-1.0, 1.0),
    observation_in_bounds=True,
    option_groups=(
        *SPEND_GROUPS,
        "attack",
        "called_shot",
        "aim",
        "all_out_attack",
        "all_out_defense",
        "move_attack",
        "move",
        "ready",
        "cover",
    ),
    option_rules={
        **dict.fromkeys(SPEND_GROUPS, "5"),
        **dict.fromkeys(("attack", "called_shot"), "13"),
        **dict.fromkeys(("aim", "all_out_attack", "all_out_defense", "move_attack", "move", "ready", "cover"), "14"),
    },
)

SCENARIOS = {"session": SESSION, "duel": DUEL}

KNOBS = [
    Knob("pool.failure_bonus", (0, 2), "a failed roll gives no extra pool die / two extra pool dice"),
    Knob("pool.session_reset", (4, 10), "the pool resets lower / to full between sessions", ("session",)),
    Knob("pool.cap", (7, 15), "a tighter / looser pool cap"),
    Knob("dice.success_on", (3, 5), "successes on 3+ / 5+ instead of 4+"),
    Knob("difficulty.default", (2, 4), "ordinary obstacles are easy / hard instead of medium", ("session",)),
    Knob("help.returned_on_failure", (False,), "the helper's die is lost even when the roll fails", ("session",)),
    Knob("combat.hit_points", (4, 8), "fewer / more hit points", ("duel",)),
    Knob("combat.aim_max", (1, 5), "aiming stores at most 1 / 5 dice", ("duel",)),
]
"""Rule knobs for sensitivity analysis (each value replayed on the rules-as-written seeds)."""
