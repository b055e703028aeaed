"""Invariants of the duel under random play (hypothesis), the protocol hooks and config errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import envs  # noqa: F401
from envs.core.config import load_config
from envs.core.dice import Rng
from envs.core.errors import ConfigError
from envs.core.game import CHANCE, TERMINAL
from envs.hallownest import RULESET
from envs.hallownest.actions import NUM_ACTIONS, OPTION_GROUPS
from envs.hallownest.duel import DuelState
from envs.hallownest.observation import OBSERVATION_SIZE
from tests.envs.hallownest.helpers import config

GRID = {
    "arena": {"kind": "grid", "width": 5, "height": 5, "start": [[1, 2], [3, 2]], "cover": [[2, 1, 2]]},
    "duel": {
        "bugs": [
            {"name": "A", "weapon": "infected_nail", "appendages": 2, "grace": 3.5},
            {"name": "B", "weapon": "venom_pin", "template": "small", "shield_quality": 1},
        ]
    },
}


def play_random(st: DuelState, seed: int, check: bool = True) -> tuple[DuelState, set[str], set[str], int]:
    rng = Rng(seed)
    contexts: set[str] = set()
    options: set[str] = set()
    steps = 0
    while st.current_player() != TERMINAL:
        p = st.current_player()
        if p == CHANCE:
            outs = st.chance_outcomes()
            if check:
                assert math.isclose(sum(pr for _, pr in outs), 1.0, abs_tol=1e-9)
            o = st.sample_chance(rng)
            if check:
                assert o in {x for x, _ in outs}
            st.apply_chance(o)
            continue
        legal = st.legal_actions()
        assert legal, "a decision without legal actions"
        assert all(0 <= a < NUM_ACTIONS for a in legal)
        if check:
            for seat in (0, 1):
                obs = st.observation(seat)
                assert obs.shape == (OBSERVATION_SIZE,) and obs.dtype == np.float32
                assert np.all(obs >= -1.0) and np.all(obs <= 1.0)
            for b in st.bugs:
                assert 0 <= b.heart <= b.p.heart
                assert 0 <= b.stamina <= 7
                assert 0 <= b.imbalance <= st.cfg.imbalance.max
                assert 0 <= b.soul <= b.p.soul
        contexts.add(st.decision_context())
        a = legal[int(rng.random() * len(legal))]
        opt = st.option_of(a)
        assert opt in OPTION_GROUPS
        options.add(opt)
        st.apply_action(a)
        steps += 1
        assert steps < 4000
    return st, contexts, options, steps


@settings(max_examples=40, deadline=None)
@given(hs.integers(0, 10**6), hs.booleans())
def test_random_play_keeps_invariants_and_ends(seed: int, grid: bool) -> None:
    st = DuelState(config(**GRID) if grid else config())
    st, _, _, _ = play_random(st, seed)
    out = st.outcome()
    assert out is not None and sum(out.returns) == 0


@settings(max_examples=25, deadline=None)
@given(hs.integers(0, 10**6))
def test_clone_and_key_follow_the_same_game(seed: int) -> None:
    st = DuelState(config())
    rng = Rng(seed)
    for _ in range(60):
        if st.is_terminal():
            break
        twin = st.clone()
        assert twin.key() == st.key()
        if st.is_chance():
            o = st.sample_chance(rng)
            st.apply_chance(o)
            twin.apply_chance(o)
        else:
            legal = st.legal_actions()
            a = legal[int(rng.random() * len(legal))]
            st.apply_action(a)
            twin.apply_action(a)
        assert twin.key() == st.key()
        assert len(twin.log) == len(st.log)


def test_decisions_and_options_are_reachable() -> None:
    contexts: set[str] = set()
    options: set[str] = set()
    for seed in range(150):
        _, c, o, _ = play_random(DuelState(config()), seed, check=False)
        contexts |= c
        options |= o
        _, c, o, _ = play_random(DuelState(config(**GRID)), seed, check=False)
        contexts |= c
        options |= o
    assert contexts == {"turn", "defense", "heart_zero", "dodge_move", "provoked", "resist_escape"}
    expected = {
        "invest_all",
        "invest_1",
        "invest_some",
        "multi_attack",
        "parry",
        "dodge",
        "no_defense",
        "deaths_door",
        "unconscious",
        "focus",
        "retreat",
        "dash",
        "move",
        "grapple",
        "pogo",
        "escape",
        "resist",
        "clear_imbalance",
        "clear_delayed",
        "clear_status",
        "provoked_attack",
        "decline_provoked",
        "dodge_move",
        "dodge_stay",
        "end_turn",
    }
    assert expected <= options


def test_resources_are_named() -> None:
    st = DuelState(config())
    assert set(st.resources(0)) >= {"stamina", "heart", "imbalance", "soul"}


def test_env_reset_step_and_reward() -> None:
    env = gym.make("rulebreaker/HallownestDuel-v0")
    obs, info = env.reset(seed=3)
    assert obs.shape == (OBSERVATION_SIZE,)
    rng = np.random.default_rng(0)
    total = 0.0
    for _ in range(4000):
        mask = env.unwrapped.action_masks()
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += r
        if term or trunc:
            break
    assert term and total in (-1.0, 0.0, 1.0)


def test_new_game_is_deterministic() -> None:
    a = DuelState(config())
    b = DuelState(config())
    assert a.key() == b.key()


def test_bad_config_names_key_and_allowed_values(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[duel.bugs]]\nweapon = "spoon"\n[[duel.bugs]]\nweapon = "nail"\n')
    with pytest.raises(ConfigError, match="spoon.*valid: nail"):
        load_config(RULESET, bad)
    bad.write_text("[stamina]\ntax_per_attack = 9\n")
    with pytest.raises(ConfigError, match="stamina.tax_per_attack"):
        load_config(RULESET, bad)
    bad.write_text("[stamina]\ntaxes = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'stamina.taxes'"):
        load_config(RULESET, bad)
    bad.write_text('[[duel.bugs]]\nweapon = "great_nail"\nshield_quality = 1\n[[duel.bugs]]\n')
    with pytest.raises(ConfigError, match="two-handed"):
        load_config(RULESET, bad)


def test_every_variant_loads() -> None:
    assert RULESET.variants_dir is not None
    files = sorted(RULESET.variants_dir.glob("*.toml"))
    assert len(files) >= 3
    for f in files:
        load_config(RULESET, f)


def test_every_knob_value_validates() -> None:
    from envs.core.config import with_override

    assert 4 <= len(RULESET.knobs) <= 8
    cfg = RULESET.default_config()
    for knob in RULESET.knobs:
        for v in knob.values:
            with_override(cfg, knob.key, v)
