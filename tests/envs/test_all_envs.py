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
