"""The PettingZoo AEC adapter: PettingZoo's own API and seed tests on every scenario, and the same
trajectory as the Gymnasium adapter for the same seed and policies."""

import warnings
import zlib

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import envs
from envs.aec import env as aec_env
from envs.aec import raw_env
from envs.core.game import IllegalActionError
from envs.core.gym_adapter import GameEnv

SCENARIOS = [(r, s) for r, rs in sorted(envs.all_rulesets().items()) for s in rs.scenarios]

# PettingZoo's api_test allow-lists its own classic games (chess, go, connect four…) by name for these two
# warnings, which every env with the classic {"observation", "action_mask"} dict observation raises.
# Every other warning is an error.
CLASSIC_DICT_OBSERVATION = ("Observation is not a NumPy array", "Observation space for each agent probably should be")


def _strict_warnings() -> None:
    warnings.simplefilter("error")
    for message in CLASSIC_DICT_OBSERVATION:
        warnings.filterwarnings("ignore", message=message)


def pick(obs: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic policy that needs no rng: a legal action chosen by a checksum of the observation."""
    legal = np.flatnonzero(mask)
    return int(legal[zlib.crc32(np.asarray(obs, dtype=np.float32).tobytes()) % len(legal)])


class Picker:
    name = "picker"

    def act(self, state, mask, rng):
        return pick(state.observation(state.current_player()), mask)


@pytest.mark.parametrize(("ruleset", "scenario"), SCENARIOS)
def test_pettingzoo_api_and_seed_tests(ruleset, scenario):
    with warnings.catch_warnings():
        _strict_warnings()
        api_test(aec_env(ruleset, scenario), num_cycles=300)
        seed_test(lambda: aec_env(ruleset, scenario), num_cycles=300)


@pytest.mark.parametrize(("ruleset", "scenario"), SCENARIOS)
def test_max_cycles_truncates_every_agent(ruleset, scenario):
    # PettingZoo's max_cycles_test needs a parallel env, which a turn-based game has not; this checks the
    # same promise on the AEC env: no seat acts more than max_cycles times, then every agent is done.
    env = aec_env(ruleset, scenario, max_cycles=3)
    env.reset(seed=0)
    live_steps = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter(10_000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        live_steps[agent] += 1
        env.step(pick(obs["observation"], obs["action_mask"]))
    assert not env.agents
    assert max(live_steps.values()) <= 3


@pytest.mark.parametrize(("ruleset", "scenario"), SCENARIOS)
def test_same_seed_same_trajectory_as_the_gymnasium_env(ruleset, scenario):
    for seed in (0, 7):
        gym_env = GameEnv(ruleset, scenario, seat=0, opponents=Picker())
        obs, info = gym_env.reset(seed=seed)
        gym_traj = []
        while True:
            a = pick(obs, info["action_mask"])
            gym_traj.append((obs.tobytes(), a))
            obs, reward, terminated, truncated, info = gym_env.step(a)
            if terminated or truncated:
                gym_return = reward
                break
        env = aec_env(ruleset, scenario)
        env.reset(seed=seed)
        first = env.possible_agents[0]
        aec_traj, aec_return = [], None
        for agent in env.agent_iter(100_000):
            o, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                if agent == first:
                    aec_return = reward
                env.step(None)
                continue
            a = pick(o["observation"], o["action_mask"])
            if agent == first:
                aec_traj.append((o["observation"].tobytes(), a))
            env.step(a)
        assert aec_traj == gym_traj
        assert aec_return == pytest.approx(gym_return)


def test_illegal_move_ends_the_game_with_a_penalty_for_its_maker():
    env = aec_env("hallownest", "duel")
    env.reset(seed=1)
    agent = env.agent_selection
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo logs the illegal move as a warning
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[agent] == -1.0
    assert all(r == 0 for a, r in env.rewards.items() if a != agent)
    raw = raw_env("hallownest", "duel")
    raw.reset(seed=1)
    with pytest.raises(IllegalActionError):
        raw.step(illegal)


def test_agents_are_named_by_seat_and_render_narrates():
    env = raw_env("hallownest", "duel", render_mode="ansi")
    assert env.possible_agents == ["nailbug_0", "greatbug_1"]
    env.reset(seed=3)
    text = env.render()
    assert isinstance(text, str)
    obs = env.observe(env.agent_selection)
    env.step(pick(obs["observation"], obs["action_mask"]))
    assert env.render()  # the narration of what just happened
    other = next(a for a in env.agents if a != env.agent_selection)
    assert not env.observe(other)["action_mask"].any()  # only the agent to move has legal actions


@pytest.mark.training
def test_maskable_ppo_trains_both_seats_through_the_aec_env():
    from sb3_contrib import MaskablePPO

    from envs.core.aec_adapter import SharedSeatsEnv

    shared = SharedSeatsEnv(aec_env("hallownest", "duel"))
    model = MaskablePPO("MlpPolicy", shared, n_steps=128, batch_size=64, n_epochs=2, seed=0, verbose=0)
    model.learn(512)
    assert model.num_timesteps >= 512
    # the trained policy plays both seats of a whole game through the AEC env, legally
    env = aec_env("hallownest", "duel")
    env.reset(seed=5)
    seats_played = set()
    for agent in env.agent_iter(10_000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action, _ = model.predict(obs["observation"], action_masks=obs["action_mask"].astype(bool), deterministic=True)
        assert obs["action_mask"][int(action)] == 1
        seats_played.add(agent)
        env.step(int(action))
    assert seats_played == set(env.possible_agents)
