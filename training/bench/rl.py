"""Training and inference throughput: ``train``, ``inference`` and ``vec``, as ratios to SB3 in the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import FlattenObservation

from agents.registry import make_agent
from agents.rl import RLPolicy, export_numpy
from envs.core.dice import Rng
from envs.core.game import State
from envs.core.policy import UniformRandom, legal_mask
from envs.core.registry import get_ruleset
from training.bench.registry import BenchOptions, pick_scenario, register_benchmark
from training.train import make_vec_env, set_torch_threads
from training.train.hyperparameters import DEFAULT_TORCH_THREADS


def register() -> None:
    register_benchmark("train", "training steps/s: MaskablePPO on a scenario vs SB3 PPO on Blackjack-v1")(bench_train)
    register_benchmark("inference", "decisions/s of rl: agents (numpy fast path) vs SB3 predict")(bench_inference)
    register_benchmark("vec", "training steps/s with DummyVecEnv vs SubprocVecEnv (2, 4, 8 envs)")(bench_vec)


# -- shared pieces ------------------------------------------------------------------------------------
PPO_HP: dict[str, Any] = {
    "n_steps": 256,
    "batch_size": 256,
    "n_epochs": 10,
    "learning_rate": 3e-4,
    "gamma": 0.99,
    "ent_coef": 0.01,
}
NET = [128, 128]


def _learn_rate(model: Any, steps: int, warm: bool = True, cpu: bool = False) -> float:
    """Timesteps per second of ``model.learn`` (per CPU second of this process with ``cpu``)."""
    if warm:
        model.learn(min(steps, 1024))  # warm-up (first rollout, torch kernels)
    clock = time.process_time if cpu else time.perf_counter
    t = clock()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (clock() - t)


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """Torch intra-op threads set to ``n`` inside the block (as ``rulebreaker train`` sets them), restored after."""
    import torch  # lazy: torch loads only when a benchmark runs

    before = torch.get_num_threads()
    set_torch_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _scenario_model(ruleset: str, scenario: str, n_envs: int, vec: str, seed: int) -> Any:
    # the class `rulebreaker train` trains with: sb3-contrib's, its masked distributions built without a
    # discarded step (training.train.masked; bit-identical training)
    from training.train.masked import MaskablePPO  # lazy: torch and SB3 load only when a benchmark runs

    rs = get_ruleset(ruleset)
    cfg = rs.default_config()
    n = rs.scenario(scenario).players(cfg)
    opps = [make_agent(ruleset, "random", scenario) if n > 1 else None for _ in range(n_envs)]
    env = make_vec_env(ruleset, scenario, cfg, opps, vec)
    return MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs={"net_arch": NET}, **PPO_HP)


def bench_train(opts: BenchOptions) -> dict[str, Any]:
    # lazy: torch and SB3 load only when a benchmark runs
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env as sb3_vec

    ruleset, scenario = pick_scenario(opts)
    # Blackjack's observation is a Tuple of Discretes, which SB3 does not take: flattened to one-hot.
    ref_env = sb3_vec(lambda: FlattenObservation(gym.make("Blackjack-v1")), n_envs=opts.n_envs, seed=opts.seed)
    ref = PPO("MlpPolicy", ref_env, seed=opts.seed, device="cpu", policy_kwargs={"net_arch": NET}, **PPO_HP)
    model = _scenario_model(ruleset, scenario, opts.n_envs, "dummy", opts.seed)
    # Both with the torch threads `rulebreaker train` uses (one: torch's default of one thread per core spins
    # on a busy machine, and made each small-network op up to 15x slower under load, hitting the masked
    # distribution's extra ops hardest), timed in CPU seconds of this process, alternated (each warmed up
    # once) so that a change of the machine's load hits both alike.
    ref_rates, rates = [], []
    with _torch_threads(DEFAULT_TORCH_THREADS):
        for r in range(1 if opts.quick else 3):
            ref_rates.append(_learn_rate(ref, opts.steps, warm=r == 0, cpu=True))
            rates.append(_learn_rate(model, opts.steps, warm=r == 0, cpu=True))
    ref_env.close()
    model.get_env().close()
    ratios = [a / b for a, b in zip(rates, ref_rates, strict=True)]
    return {
        "scenario": f"{ruleset} {scenario}",
        "steps": opts.steps,
        "n_envs": opts.n_envs,
        "n_steps": PPO_HP["n_steps"],
        "reference": "SB3 PPO on Blackjack-v1 (flattened observation; same n_envs, n_steps, hyperparameters and "
        "torch threads), timesteps per CPU second",
        "torch_threads": DEFAULT_TORCH_THREADS,
        "reference_steps_per_s": round(statistics.median(ref_rates), 1),
        "steps_per_s": round(statistics.median(rates), 1),
        "ratio": round(statistics.median(ratios), 3),
        "ratios": [round(x, 3) for x in ratios],
    }


def bench_inference(opts: BenchOptions) -> dict[str, Any]:
    # SB3's predict with the one torch thread of `rulebreaker train` too: its default threads spin on a busy
    # machine, which would flatter the numpy path
    with _torch_threads(DEFAULT_TORCH_THREADS):
        return _bench_inference(opts)


def _bench_inference(opts: BenchOptions) -> dict[str, Any]:
    ruleset, scenario = pick_scenario(opts)
    model = _scenario_model(ruleset, scenario, opts.n_envs, "dummy", opts.seed)
    model.learn(min(opts.steps, 4096))  # a (briefly) trained agent; speed does not depend on the weights
    model.get_env().close()
    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    cfg = rs.default_config()
    # Real decision points: states reached by random play.
    rng = Rng(opts.seed)
    states: list[State] = []
    masks: list[np.ndarray] = []
    rnd = UniformRandom()
    while len(states) < opts.decisions:
        st = sc.new_game(cfg)
        while not st.is_terminal() and len(states) < opts.decisions:
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            m = legal_mask(st, sc.action_count(cfg))
            states.append(st.clone())
            masks.append(m)
            st.apply_action(rnd.act(st, m, rng))
    seats = [s.current_player() for s in states]
    low, high = sc.observation_bounds
    obs = np.stack(
        [np.clip(s.observation(p), low, high).astype(np.float32) for s, p in zip(states, seats, strict=True)]
    )
    mask_arr = np.stack(masks)

    t = time.perf_counter()
    ref = [int(model.predict(o, deterministic=True, action_masks=m)[0]) for o, m in zip(obs, mask_arr, strict=True)]
    ref_rate = len(obs) / (time.perf_counter() - t)

    pol = RLPolicy(export_numpy(model), "rl:bench", sc.observation_bounds)
    t = time.perf_counter()
    fast = [pol.act(s, m, rng) for s, m in zip(states, mask_arr, strict=True)]  # includes state.observation()
    fast_rate = len(obs) / (time.perf_counter() - t)
    t = time.perf_counter()
    batched = pol.act_batch(obs, mask_arr)
    batch_rate = len(obs) / (time.perf_counter() - t)
    t = time.perf_counter()
    ref_batch = model.predict(obs, deterministic=True, action_masks=mask_arr)[0]
    ref_batch_rate = len(obs) / (time.perf_counter() - t)
    same = float(np.mean(np.asarray(fast) == np.asarray(ref)))
    return {
        "scenario": f"{ruleset} {scenario}",
        "decisions": len(obs),
        "reference": "SB3 MaskablePPO.predict(deterministic=True, action_masks=...) one observation at a time, "
        "one torch thread",
        "predict_decisions_per_s": round(ref_rate, 1),
        "fast_decisions_per_s": round(fast_rate, 1),
        "ratio": round(fast_rate / ref_rate, 2),
        "batched_decisions_per_s": round(batch_rate, 1),
        "batched_ratio": round(batch_rate / ref_rate, 2),
        "predict_batched_decisions_per_s": round(ref_batch_rate, 1),
        "same_actions_as_predict": same,
        "same_actions_batched": float(np.mean(batched == np.asarray(ref_batch))),
    }


def bench_vec(opts: BenchOptions) -> dict[str, Any]:
    ruleset, scenario = pick_scenario(opts)
    rows: dict[str, float] = {}
    for n in (2, 4, 8):
        for vec in ("dummy", "subproc"):
            model = _scenario_model(ruleset, scenario, n, vec, opts.seed)
            rows[f"{vec}_{n}"] = round(_learn_rate(model, opts.steps), 1)
            model.get_env().close()
    best = max(rows, key=lambda k: rows[k])
    return {
        "scenario": f"{ruleset} {scenario}",
        "steps": opts.steps,
        "steps_per_s": rows,
        "fastest": best,
        "subproc_over_dummy": {n: round(rows[f"subproc_{n}"] / rows[f"dummy_{n}"], 3) for n in (2, 4, 8)},
    }
