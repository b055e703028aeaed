"""Crossroads personas: legal actions only, and each one's style shows in its choices."""

from __future__ import annotations

import numpy as np
import pytest

from agents.personas.crossroads import PERSONAS, Attacker, Builder, Schemer
from envs.core.dice import Rng
from envs.core.game import CHANCE
from envs.core.policy import UniformRandom, legal_mask
from envs.crossroads import RULESET
from envs.crossroads.actions import NUM_ACTIONS, Act, Phase
from envs.crossroads.episode import CrossroadsState


def play(lineup, seed, watch=None):
    """Play one episode; ``watch(state, seat, mask, action)`` sees every persona decision before it is applied."""
    st = RULESET.new_game(RULESET.default_config(), "episode")
    rng = Rng(seed)
    while not st.is_terminal():
        if st.current_player() == CHANCE:
            st.apply_chance(st.sample_chance(rng))
            continue
        seat = st.current_player()
        mask = legal_mask(st, NUM_ACTIONS)
        a = lineup[seat].act(st, mask, rng)
        assert mask[a], f"{lineup[seat].name} chose illegal {a} in {st.decision_context()}"
        if watch is not None:
            watch(st, seat, mask, a)
        st.apply_action(a)
    return st


def test_registry_and_docstrings():
    assert set(PERSONAS) == {"builder", "schemer", "attacker"}
    for name, cls in PERSONAS.items():
        assert cls.name == name and cls.__doc__ and len(cls.__doc__.split(".")) <= 3


@pytest.mark.parametrize("name", sorted(PERSONAS))
def test_persona_plays_only_legal_actions(name):
    for seed in range(15):
        lineup = [PERSONAS[name](), UniformRandom(), PERSONAS[name]()]
        st = play(lineup, seed)
        assert st.outcome() is not None


def test_builder_spends_every_success_on_stats():
    seen = {"spend": 0, "stat": 0}

    def watch(st: CrossroadsState, seat, mask, a):
        if seat == 0 and st.phase == Phase.SPEND and st.entity(st.chk_eid).is_char:
            can = any(mask[Act.STAT_UP_G + i] for i in range(3))
            if can:
                seen["spend"] += 1
                seen["stat"] += Act.STAT_UP_G <= a <= Act.STAT_UP_G + 2

    for seed in range(20):
        play([Builder(), UniformRandom(), UniformRandom()], seed, watch)
    assert seen["spend"] > 20 and seen["stat"] == seen["spend"]


def test_schemer_hoards_plus_c_and_burns_them_in_confrontations():
    seen = {"spend_plus": 0, "spend": 0, "burn_chances": 0, "burns": 0}

    def watch(st: CrossroadsState, seat, mask, a):
        if seat != 0:
            return
        if st.phase == Phase.SPEND and mask[Act.GAIN_PLUS_C]:
            seen["spend"] += 1
            seen["spend_plus"] += a == Act.GAIN_PLUS_C
        if st.phase == Phase.BURN_BEFORE and mask[Act.BURN] and st.sides[st.side_i].burned == 0:
            seen["burn_chances"] += 1
            seen["burns"] += a == Act.BURN

    for seed in range(20):
        play([Schemer(), UniformRandom(), Attacker()], seed, watch)
    assert seen["spend"] > 20 and seen["spend_plus"] == seen["spend"]
    assert seen["burn_chances"] > 3 and seen["burns"] == seen["burn_chances"]


def test_attacker_always_confronts_the_leader():
    seen = {"scenes": 0, "confronts": 0, "targets": 0, "leader": 0}

    def watch(st: CrossroadsState, seat, mask, a):
        if seat != 0:
            return
        if st.phase == Phase.ADMIN_SCENE and mask[Act.SCENE_CONFRONT]:
            seen["scenes"] += 1
            seen["confronts"] += a == Act.SCENE_CONFRONT
        if st.phase == Phase.ADMIN_TARGET:
            legal = [st.chars[int(x) - Act.TARGET_0] for x in np.flatnonzero(mask)]
            best = max((sum(c.goals), sum(c.stats)) for c in legal)
            chosen = st.chars[a - Act.TARGET_0]
            seen["targets"] += 1
            seen["leader"] += (sum(chosen.goals), sum(chosen.stats)) == best

    for seed in range(20):
        play([Attacker(), Builder(), Schemer()], seed, watch)
    assert seen["scenes"] > 20 and seen["confronts"] == seen["scenes"]
    assert seen["targets"] == seen["confronts"] and seen["leader"] == seen["targets"]
