"""Hallownest scenarios: the stamina-investment duel (its rules card is the docstring of ``duel.py``)."""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.game import Scenario
from envs.hallownest.actions import OPTION_GROUPS
from envs.hallownest.config import HallownestConfig
from envs.hallownest.duel import DuelState, duel_action_count, new_duel_state
from envs.hallownest.observation import OBSERVATION_SIZE


def action_count(config: BaseModel) -> int:
    """The duel's action ids under ``config``: the first rows of the table, or all (``actions.py``)."""
    assert isinstance(config, HallownestConfig)
    return duel_action_count(config)


def new_duel(config: BaseModel) -> DuelState:
    """A fresh duel (deterministic: initiative is the first chance node)."""
    assert isinstance(config, HallownestConfig)
    return new_duel_state(config)


DUEL = Scenario(
    name="duel",
    title="Duel",
    description="Nail vs Great nail: stamina investment per attack, parry/dodge, Death's Door vs unconscious",
    num_players=2,
    num_actions=action_count,  # 82 unless the bugs may invest more than 7 Stamina or Soul
    observation_size=OBSERVATION_SIZE,
    new_game=new_duel,
    max_episode_steps=4000,
    player_names=("Nailbug", "Greatbug"),
    observation_bounds=(-1.0, 1.0),
    observation_in_bounds=True,
    option_groups=OPTION_GROUPS,
    option_rules={  # the rule of docs/rules/hallownest.md each option plays (named by the report)
        **dict.fromkeys(("invest_all", "invest_1", "invest_some", "multi_attack"), "11"),
        **dict.fromkeys(("grapple", "escape", "resist"), "16"),
        "pogo": "21",
        **dict.fromkeys(("move", "dash", "retreat", "decline_provoked", "provoked_attack"), "15"),
        **dict.fromkeys(("clear_imbalance", "end_turn"), "10"),
        "clear_delayed": "17",
        "clear_status": "18",
        "focus": "20",
        **dict.fromkeys(("no_defense", "parry", "dodge", "dodge_move", "dodge_stay"), "12"),
        **dict.fromkeys(("deaths_door", "unconscious"), "14"),
    },
)
