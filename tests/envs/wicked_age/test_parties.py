"""Melees of more than four parties: the action table and the observation grow with ``melee.parties``.

The rules set no maximum number of parties ("two on one and more"); ``melee.parties`` is bounded by the
[decision] ``config.MAX_PARTIES``. Up to four parties the table is the fixed 45 ids of ``actions.Act`` (the
fingerprint of /work/tools/trace_fp.py pins that); beyond, every seat's offer target and every subset of
opponents a mover may name (Rule 9) gets an id of its own.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agents.personas.wicked_age import PERSONAS
from envs.core.dice import Rng
from envs.core.game import CHANCE, TERMINAL, EndReason
from envs.core.policy import UniformRandom, legal_mask
from envs.wicked_age import RULESET
from envs.wicked_age.actions import (
    NUM_ACTIONS,
    Act,
    Ctx,
    action_count,
    challenge_action,
    challenge_targets,
    is_challenge,
    is_target,
    option_of,
    target_action,
)
from envs.wicked_age.config import MAX_PARTIES, WickedAgeConfig
from envs.wicked_age.conflict import WickedAgeState
from envs.wicked_age.observation import OBS_SIZE, PARTY_FEATURES
from tests.envs.wicked_age.helpers import config

MELEE = RULESET.scenario("melee")


def _melee(cfg: WickedAgeConfig) -> WickedAgeState:
    state = RULESET.new_game(cfg, "melee")
    assert isinstance(state, WickedAgeState)
    return state


def test_the_bound_is_the_decision_and_the_table_counts_every_subset_of_opponents() -> None:
    assert MAX_PARTIES == 8
    assert [action_count(p) for p in range(2, 5)] == [NUM_ACTIONS] * 3 == [45] * 3
    # 26 fixed ids below the challenges, one challenge per non-empty subset of seats, one target per seat
    assert [action_count(p) for p in range(5, 9)] == [26 + (2**p - 1) + p for p in range(5, 9)]
    assert MELEE.action_count(config(melee={"parties": 6})) == 26 + 63 + 6
    assert MELEE.observation_length(config(melee={"parties": 6})) == OBS_SIZE + 2 * PARTY_FEATURES
    assert MELEE.action_count(config()) == NUM_ACTIONS and MELEE.observation_length(config()) == OBS_SIZE


def test_more_parties_than_the_bound_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match=r"melee\.parties[\s\S]*less than or equal to 8"):
        config(melee={"parties": MAX_PARTIES + 1})


@pytest.mark.parametrize("parties", range(2, MAX_PARTIES + 1))
def test_every_challenge_id_names_its_subset_and_nothing_else(parties: int) -> None:
    n = action_count(parties)
    seen: dict[int, tuple[int, ...]] = {}
    for r in range(1, parties + 1):
        for subset in itertools.combinations(range(parties), r):
            a = challenge_action(subset, parties)
            assert 0 <= a < n and a not in seen
            assert is_challenge(a, parties) and not is_target(a, parties)
            assert challenge_targets(a, parties) == subset
            seen[a] = subset
    targets = {target_action(t) for t in range(parties)}
    assert all(is_target(a, parties) and not is_challenge(a, parties) for a in targets)
    assert not targets & set(seen)
    # the four-party ids never move: a larger table only appends
    for subset in itertools.chain.from_iterable(itertools.combinations(range(min(parties, 4)), r) for r in (1, 2)):
        assert challenge_action(subset, parties) == Act.CHALLENGE_1 - 1 + sum(1 << t for t in subset)
    assert {target_action(t) for t in range(4)} == set(range(Act.TARGET_0, Act.TARGET_3 + 1))


def _play(state, n_actions: int, policies, rng: Rng) -> int:
    steps = 0
    while (p := state.current_player()) != TERMINAL:
        if p == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        mask = legal_mask(state, n_actions)
        assert mask.shape == (n_actions,) and list(np.flatnonzero(mask)) == sorted(legal)
        obs = state.observation(p)
        assert obs.shape == (MELEE.observation_length(state.cfg),) and obs.min() >= 0.0 and obs.max() <= 1.0
        names = state.names
        for a in legal:
            assert state.option_of(a) is not None and state.action_label(a)
            if state.node == Ctx.CHALLENGE:
                assert set(challenge_targets(a, state.num_players)) <= set(range(state.num_players)) - {p}
                assert state.action_label(a) == "challenge_" + "+".join(
                    names[t] for t in challenge_targets(a, state.num_players)
                )
        a = policies[p].act(state, mask, rng)
        assert mask[a]
        state.apply_action(a)
        steps += 1
        assert steps < 20_000
    return steps


@pytest.mark.parametrize("parties", [5, 6, MAX_PARTIES])
def test_large_melees_play_to_the_end_with_random_and_persona_seats(parties: int) -> None:
    cfg = config(melee={"parties": parties, "max_conflicts": 3})
    n = MELEE.action_count(cfg)
    personas = [UniformRandom(), *(cls() for cls in PERSONAS.values())]
    reasons = set()
    for g in range(4):
        state = _melee(cfg)
        assert state.num_players == parties and state.chars[-1].npc and not any(c.npc for c in state.chars[:-1])
        assert len({c.name for c in state.chars}) == parties
        seats = [personas[(g + k) % len(personas)] for k in range(parties)]
        _play(state, n, seats, Rng(100 + g))
        out = state.outcome()
        assert out is not None and len(out.returns) == parties
        reasons.add(out.reason)
    assert reasons <= {EndReason.KNOCKOUT, EndReason.TIME_LIMIT}


def test_a_mover_may_name_any_subset_of_the_opponents_in_a_large_melee() -> None:
    cfg = config(melee={"parties": 6, "build_phase": False})
    state = _melee(cfg)
    rng = Rng(3)
    while state.current_player() == CHANCE or state.node != Ctx.CHALLENGE:
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        else:
            legal = state.legal_actions()
            state.apply_action(Act.ROLL if Act.ROLL in legal else legal[0])
        assert state.current_player() != TERMINAL
    mover = state.actor
    opponents = [t for t in range(6) if t != mover and state.in_conflict[t]]
    named = {challenge_targets(a, 6) for a in state.legal_actions()}
    assert len(named) == 2 ** len(opponents) - 1
    assert named == {c for r in range(1, len(opponents) + 1) for c in itertools.combinations(opponents, r)}
    everyone = challenge_action(opponents, 6)
    assert option_of(everyone, state.node, [c.npc for c in state.chars], None) == (
        "challenge_several" if len(opponents) > 1 else "challenge_npc"
    )
    state.apply_action(everyone)
    assert state.answerers == [t for t in state.order if t in opponents]
