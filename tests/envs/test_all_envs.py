"""Every registered id: both checkers with warnings as errors, and long random masked play."""

import os
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import envs  # noqa: F401  (registers the ids)

IDS = sorted(i for i in gym.registry if i.startswith("rulebreaker/"))
RANDOM_STEPS = int(os.environ.get("RULEBREAKER_RANDOM_STEPS", "100000"))


def test_every_ruleset_registers_ids():
    assert IDS, "no rulebreaker ids registered"


@pytest.mark.parametrize("env_id", IDS)
def test_checkers_pass_without_warnings(env_id):
    env = gym.make(env_id).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_random_masked_steps_every_episode_ends(env_id):
    """Random legal play for RANDOM_STEPS steps: no error, no illegal mask, every episode ends."""
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    episodes = 0
    ep_len = 0
    limit = env.spec.max_episode_steps
    for _ in range(RANDOM_STEPS):
        mask = env.unwrapped.action_masks()
        assert mask.any(), "no legal action at a decision"
        assert env.observation_space.contains(obs)
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not info["illegal_action"]
        ep_len += 1
        if term or trunc:
            if term:
                assert "outcome" in info
            episodes += 1
            ep_len = 0
            obs, info = env.reset()
        assert ep_len <= limit
    assert episodes > 0


IN_BOUNDS_STEPS = int(os.environ.get("RULEBREAKER_IN_BOUNDS_STEPS", "5000"))


def _scenarios():
    from envs.core.registry import RULESET_NAMES, get_ruleset

    return [(get_ruleset(name), sc) for name in RULESET_NAMES for sc in get_ruleset(name).scenarios.values()]


@pytest.mark.parametrize("rs, sc", _scenarios(), ids=lambda x: x.name)
def test_observations_in_bounds_as_declared(rs, sc):
    """Every built-in scenario declares ``observation_in_bounds`` (the adapter then skips its clip), and it holds.

    Random play from many deals: every seat's observation at every node is a float32 vector of the declared
    length within the bounds (no NaN), writable, and fresh: it shares no memory with the next call's, and a
    kept observation does not change when the game moves on.
    """
    from envs.core.dice import Rng
    from envs.core.policy import UniformRandom, legal_mask

    assert sc.observation_in_bounds, f"{rs.name}/{sc.name} does not declare observation_in_bounds"
    cfg = rs.default_config()
    low, high = sc.observation_bounds
    size, n, players = sc.observation_length(cfg), sc.action_count(cfg), sc.players(cfg)
    rng, pick = Rng(11), UniformRandom()
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    steps = 0
    while steps < IN_BOUNDS_STEPS:
        state = sc.new_game(cfg)
        state.narrating = False
        while not state.is_terminal() and steps < IN_BOUNDS_STEPS:
            if state.is_chance():
                state.apply_chance(state.sample_chance(rng))
                continue
            for seat in range(players):
                obs = state.observation(seat)
                assert type(obs) is np.ndarray and obs.dtype == np.float32 and obs.shape == (size,)
                assert obs.flags.writeable
                assert bool(np.all(obs >= low)) and bool(np.all(obs <= high)), f"out of [{low}, {high}]: {obs}"
                again = state.observation(seat)
                assert not np.shares_memory(obs, again)
                np.testing.assert_array_equal(obs, again)
                if steps % 97 == 0:
                    kept.append((obs, obs.copy()))
            state.apply_action(pick.act(state, legal_mask(state, n), rng))
            steps += 1
    for obs, copy in kept:
        np.testing.assert_array_equal(obs, copy)


LEGAL_TUPLE_STEPS = int(os.environ.get("RULEBREAKER_LEGAL_TUPLE_STEPS", "3000"))


@pytest.mark.parametrize("rs, sc", _scenarios(), ids=lambda x: x.name)
def test_legal_tuple_is_the_legal_list_as_a_tuple(rs, sc):
    """``legal_tuple()`` (the adapter's mask key and uniform opponents' ids) holds ``legal_actions()``'s ids in order.

    Random play with clones, at every node (chance and the end included), asking either one first (engines work
    their legal ids out on the first ask); a list from ``legal_actions()`` changed by its caller changes neither.
    """
    from envs.core.dice import Rng

    cfg = rs.default_config()
    rng = Rng(5)
    steps = 0
    while steps < LEGAL_TUPLE_STEPS:
        state = sc.new_game(cfg)
        state.narrating = False
        while steps < LEGAL_TUPLE_STEPS:
            if steps % 7 == 0:
                state = state.clone()
            if steps % 2:
                first = state.legal_tuple()
                listed = state.legal_actions()
            else:
                listed = state.legal_actions()
                first = state.legal_tuple()
            assert type(first) is tuple and first == tuple(listed)
            listed.append(-1)
            assert state.legal_tuple() == first and state.legal_actions() == listed[:-1]
            steps += 1
            if state.is_terminal():
                assert first == ()
                break
            if state.is_chance():
                assert first == ()
                state.apply_chance(state.sample_chance(rng))
            else:
                state.apply_action(first[int(rng.random() * len(first))])
