"""Shared helpers for the wicked_age tests: full sheets for the seed's characters and forced dice."""

from __future__ import annotations

from pydantic import BaseModel

from envs.core.dice import Rng
from envs.core.game import CHANCE
from envs.core.policy import UniformRandom, legal_mask
from envs.wicked_age import RULESET
from envs.wicked_age.actions import Act, Ctx
from envs.wicked_age.config import WickedAgeConfig
from envs.wicked_age.conflict import WickedAgeState, npc, pc

AMEK, MEKHA = 0, 1


def amek():
    """Amek: d12 With Violence, d10 Directly (the rest of his sheet is ours)."""
    return pc("Amek", with_violence=12, directly=10, covertly=8, for_myself=6, for_others=6, with_love=4)


def mekha():
    """Mekha: d10 For Myself, d8 Directly (the rest is ours)."""
    return pc("Mekha", for_myself=10, directly=8, covertly=6, for_others=4, with_love=6, with_violence=12)


def seed_four():
    """Example D's four parties: Mekha, Taye, Amek (PCs) and Esan (NPC)."""
    return [
        pc("Mekha", with_love=12, covertly=6, directly=8, for_myself=10, for_others=4, with_violence=6),
        pc("Taye", for_myself=12, covertly=8, directly=6, for_others=4, with_love=10, with_violence=6),
        pc("Amek", directly=10, for_others=6, with_violence=12, covertly=8, for_myself=6, with_love=4),
        npc("Esan", action=(12, 8), maneuvering=(10, 6), self_protection=(6, 4)),
    ]


def roll(state: WickedAgeState, who: int, faces: tuple[int, ...], adv: int = 0, cash: int = 0) -> None:
    """Pass any offer window and owe-list prompt (cashing ``cash`` entries), then force ``who``'s dice."""
    while state.current_player() != CHANCE:
        assert state.node in (Ctx.WINDOW, Ctx.PRE_ROLL), f"expected a roll, got {state.decision_context()}"
        if state.node == Ctx.PRE_ROLL and cash > 0:
            assert state.actor == who
            state.apply_action(Act.CASH_OWE)
            cash -= 1
        else:
            state.apply_action(Act.ROLL)
    assert cash == 0, "no owe-list prompt came to cash the entry"
    assert state.actor == who, f"expected {state.names[who]} to roll, not {state.names[state.actor]}"
    state.apply_chance((tuple(faces), adv))


def challenge(state: WickedAgeState, *targets: int) -> None:
    assert state.node == Ctx.CHALLENGE
    state.apply_action(Act.CHALLENGE_1 - 1 + sum(1 << t for t in targets))


def default_consequence(state: WickedAgeState, exhausted: bool) -> None:
    """The loser takes the whip; the winner picks exhausted or injured."""
    assert state.node == Ctx.CONSEQ_OFFER
    state.apply_action(Act.TAKE_DEFAULT)
    assert state.node == Ctx.CONSEQ_DEFAULT
    state.apply_action(Act.EXHAUST if exhausted else Act.INJURE)


def config(**sections) -> WickedAgeConfig:
    data = WickedAgeConfig().model_dump()
    for sec, vals in sections.items():
        data[sec].update(vals)
    return WickedAgeConfig.model_validate(data)


def new_game(scenario: str, cfg: BaseModel) -> WickedAgeState:
    state = RULESET.scenario(scenario).new_game(cfg)
    assert isinstance(state, WickedAgeState)
    return state


def random_step(state: WickedAgeState, rng: Rng, actions: int) -> None:
    """One step of random play: a chance outcome sampled, or a uniformly random legal action."""
    if state.current_player() == CHANCE:
        state.apply_chance(state.sample_chance(rng))
    else:
        state.apply_action(UniformRandom().act(state, legal_mask(state, actions), rng))
