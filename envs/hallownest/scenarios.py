"""Hallownest scenarios: the stamina-investment duel."""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.game import Scenario
from envs.hallownest.config import HallownestConfig
from envs.hallownest.engine import NUM_ACTIONS, OBSERVATION_SIZE, OPTION_GROUPS, DuelState


def new_duel(config: BaseModel) -> DuelState:
    """A fresh duel (deterministic: initiative is the first chance node)."""
    assert isinstance(config, HallownestConfig)
    return DuelState(config)


class HallownestDuelCard:
    """Two bugs fight to the death: ``rulebreaker/HallownestDuel-v0``.

    ## Description
    A duel of the Unofficial Hollow Knight RPG's combat chapter (docs/rules/hallownest.md). By default
    a Medium bug with a Nail (seat 0, the player's side) faces a Medium bug with a Great nail (seat 1,
    enemy side) on a 7-cell track; templates, weapons and the arena (``arena.kind = "track" | "grid"``)
    come from the config. Each round both bugs act in initiative order (summed Grace dice).

    ## Action Space
    ``Discrete(82)``, masked. On its turn a bug may attack investing 1-7 Stamina (each further attack
    in the turn costs 1 more: the tax), grapple or pogo (invest 1-3), step / dash / retreat in a
    direction (2 on a track, 8 on a grid), clear Imbalance, delayed damage or a status, try to escape a
    grapple (invest 0-3), focus 1-7 Soul (ends the turn) or end the turn. When attacked it chooses no
    defense, parry (invest 0-6) or dodge (invest 0-6), and after a dodge whether to move 1 cell; at
    Heart 0 Death's Door or unconscious; when provoked whether to attack (invest 0-6); when grappled
    foe tries to escape, how much to invest resisting.

    ## Observation Space
    ``Box(-1, 1, (80,), float32)``: 30 features of the seat's own bug (Heart, Stamina, Imbalance, Soul,
    states, characteristics, weapon, position...), 30 of the opponent's, 20 shared (relative position,
    round, decision context one-hot, the pending attack's successes and investment).

    ## Rewards
    +1 for the bug left alive, -1 for the dead one; 0 each when the round limit ends the duel.

    ## Episode End
    A bug dies (Heart 0 for an ordinary bug; Stamina 0 at Death's Door or unconscious) or
    ``duel.max_rounds`` (20) rounds pass (``time_limit``).

    ## Arguments
    ``rules`` (a variant TOML) or ``config``; see ``envs/hallownest/rules.toml``.
    """


DUEL = Scenario(
    name="duel",
    title="Duel",
    description="Nail vs Great nail: stamina investment per attack, parry/dodge, Death's Door vs unconscious",
    num_players=2,
    num_actions=NUM_ACTIONS,
    observation_size=OBSERVATION_SIZE,
    new_game=new_duel,
    max_episode_steps=4000,
    player_names=("Nailbug", "Greatbug"),
    observation_bounds=(-1.0, 1.0),
    option_groups=OPTION_GROUPS,
)
