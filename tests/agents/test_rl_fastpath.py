"""The numpy fast path of rl: agents picks exactly the actions of SB3 ``predict(deterministic=True)``."""

from __future__ import annotations

import io
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from agents.rl import NumpyNet, export_numpy, load_numpy_net, load_rl_policy, read_meta
from envs.core.dice import Rng
from envs.core.errors import UserError
from training.train import save_model

OBS, ACTS = 23, 11


class MaskedBox(gym.Env):
    """A minimal env with a Box observation and a Discrete action space with masks (only for building models)."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (OBS,), np.float32)
        self.action_space = spaces.Discrete(ACTS)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(OBS, np.float32), {}

    def step(self, action):
        return np.zeros(OBS, np.float32), 0.0, True, False, {}

    def action_masks(self):
        return np.ones(ACTS, bool)


def _model(algo: str, act: str):
    from agents.rl import algo_class
    from training.train import policy_kwargs

    kwargs = {"policy_kwargs": policy_kwargs({"net_arch": [40, 17], "activation_fn": act})}
    if algo == "dqn":
        kwargs["learning_starts"] = 0
    model = algo_class(algo)("MlpPolicy", MaskedBox(), seed=3, device="cpu", **kwargs)
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():  # spread-out weights: the output layer is initialised tiny, which would only test ties
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.7)
    return model


def _obs_masks(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    obs = rng.uniform(-1, 1, (n, OBS)).astype(np.float32)
    masks = rng.random((n, ACTS)) < 0.4
    masks[np.arange(n), rng.integers(0, ACTS, n)] = True  # at least one legal action
    return obs, masks


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_maskable_ppo_fast_path_equals_predict_with_masks(act):
    model = _model("maskable-ppo", act)
    net = export_numpy(model)
    obs, masks = _obs_masks(4000)
    batched = net.act_batch(obs, masks)
    one_by_one = [
        int(model.predict(o, deterministic=True, action_masks=m)[0])
        for o, m in zip(obs[:600], masks[:600], strict=True)
    ]
    ref_batch = model.predict(obs, deterministic=True, action_masks=masks)[0]
    assert np.array_equal(batched, ref_batch)
    assert batched[:600].tolist() == one_by_one
    assert all(masks[i, a] for i, a in enumerate(batched))  # legal
    assert len(set(batched.tolist())) > 3  # a real test: many different actions chosen


@pytest.mark.parametrize("algo", ["ppo", "a2c", "dqn"])
def test_unmasked_algorithms_fast_path_equals_predict(algo):
    model = _model(algo, "relu" if algo == "dqn" else "tanh")
    net = export_numpy(model)
    obs, _ = _obs_masks(3000, seed=1)
    ref = model.predict(obs, deterministic=True)[0]
    assert np.array_equal(net.act_batch(obs), ref)
    assert len(set(ref.tolist())) > 3


def test_saved_zip_reads_without_pickle_and_matches(tmp_path, toy):
    from sb3_contrib import MaskablePPO

    from envs.core.gym_adapter import GameEnv

    model = MaskablePPO("MlpPolicy", GameEnv(toy, "race"), seed=0, device="cpu")
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    meta = {"ruleset": "toy_pig", "scenario": "race", "observation_size": 4, "num_actions": 2, "algo": "maskable-ppo"}
    path = save_model(model, tmp_path / "model.zip", meta)
    net, got = load_numpy_net(path, "toy_pig", "race")
    assert got["num_timesteps"] == 0 and got["architecture"] == {"kind": "logits", "activation": "tanh"}
    rng = np.random.default_rng(2)
    obs = rng.uniform(0, 2, (2000, 4)).astype(np.float32)
    masks = np.ones((2000, 2), bool)
    assert np.array_equal(net.act_batch(obs, masks), model.predict(obs, deterministic=True, action_masks=masks)[0])
    # The Policy plays a real state: the observation of the seat to move, clipped to the scenario's bounds.
    pol = load_rl_policy(str(tmp_path), "toy_pig", "race")
    state = toy.new_game(toy.default_config(), "race")
    a = pol.act(state, np.array([True, True]), Rng(0))
    expect = int(model.predict(state.observation(0), deterministic=True, action_masks=np.array([True, True]))[0])
    assert a == expect
    assert pol.act(state, np.array([False, True]), Rng(0)) == 1  # never an illegal action


def _toy_zip(tmp_path, toy):
    from sb3_contrib import MaskablePPO

    from envs.core.gym_adapter import GameEnv

    model = MaskablePPO("MlpPolicy", GameEnv(toy, "race"), seed=0, device="cpu")
    meta = {"ruleset": "toy_pig", "scenario": "race", "observation_size": 4, "num_actions": 2, "algo": "maskable-ppo"}
    return model, save_model(model, tmp_path / "model.zip", meta)


def test_truncated_zip_is_refused(tmp_path, toy):
    _, path = _toy_zip(tmp_path, toy)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(UserError, match="truncated or corrupt"):
        load_rl_policy(str(path), "toy_pig", "race")


def test_foreign_zip_without_metadata_is_refused_before_unpickling(tmp_path, toy):
    model, _ = _toy_zip(tmp_path, toy)
    foreign = tmp_path / "foreign.zip"
    model.save(foreign)  # a plain SB3 zip: could come from anywhere
    with pytest.raises(UserError, match="not a rulebreaker model"):
        load_rl_policy(str(foreign), "toy_pig", "race")


def test_wrong_ruleset_scenario_or_sizes_are_refused(tmp_path, toy):
    _, path = _toy_zip(tmp_path, toy)
    with pytest.raises(UserError, match="ruleset 'toy_pig', not 'blackbird'"):
        load_rl_policy(str(path), "blackbird", None)
    with pytest.raises(UserError, match="scenario 'race', not 'sprint'"):
        load_rl_policy(str(path), "toy_pig", "sprint")
    # Rewrite the metadata as if the engine's observation had grown since training.
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "rulebreaker.json":
                meta = read_meta(path)
                meta["observation_size"] = 7
                data = __import__("json").dumps(meta).encode()
            dst.writestr(item, data)
    odd = tmp_path / "odd.zip"
    odd.write_bytes(buf.getvalue())
    with pytest.raises(UserError, match="observation size 7"):
        load_rl_policy(str(odd), "toy_pig", "race")


def test_missing_model_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no trained model"):
        load_rl_policy(str(tmp_path / "nothing"), "toy_pig", "race")


def test_sample_respects_mask_and_follows_softmax():
    net = NumpyNet([np.zeros((2, 3), np.float32)], [np.array([0.0, np.log(3.0), 5.0], np.float32)], "tanh", "logits")
    rng = Rng(1)
    mask = np.array([True, True, False])
    draws = [net.sample(np.zeros(2, np.float32), mask, rng) for _ in range(4000)]
    assert 2 not in draws
    share = draws.count(1) / len(draws)  # softmax of (0, ln 3) over the legal two: 3/4
    assert abs(share - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 4000)


def test_a_mask_cut_to_the_legal_list_gives_the_same_action():
    """The exact solver hands policies masks as long as the largest legal id + 1: the RL policy reads them at its
    own width (missing ids illegal), choosing what it chooses on the full mask."""
    from agents.rl import RLPolicy

    class Obs:
        def __init__(self, o):
            self.o = o

        def current_player(self):
            return 0

        def observation(self, seat):
            return self.o

    net = export_numpy(_model("maskable-ppo", "tanh"))
    pol = RLPolicy(net, "rl:test")
    obs, masks = _obs_masks(200, seed=5)
    for o, m in zip(obs, masks, strict=True):
        short = m[: int(np.flatnonzero(m).max()) + 1]
        assert pol.act(Obs(o), short, Rng(0)) == pol.act(Obs(o), m, Rng(0))  # type: ignore[arg-type]
