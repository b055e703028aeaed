"""Throughput benchmarks (``rulebreaker bench``): figures as ratios to a reference measured in the same run.

A benchmark is a function ``fn(opts: BenchOptions) -> dict`` registered under a name with
:func:`register_benchmark`. Other modules add theirs the same way (odds, solve…): list the module in
:data:`BENCH_MODULES` (missing modules are skipped) or import it before calling
:func:`run_benchmarks`. Results are plain dicts; ratios are what to compare across machines, since the
absolute rates depend on the machine and its load. Nothing here is asserted by tests.

Built-in benchmarks:
* ``train``: MaskablePPO training steps/s on a rulebreaker scenario ÷ SB3 PPO steps/s on Gymnasium's
  Blackjack-v1, same hyperparameters, same process.
* ``inference``: a trained agent's decisions/s through the numpy fast path (per decision, and batched)
  ÷ SB3 ``predict(obs, deterministic=True, action_masks=mask)`` one observation at a time.
* ``vec``: MaskablePPO training steps/s with DummyVecEnv vs SubprocVecEnv for 2, 4 and 8 envs.
* ``odds``: median milliseconds per exact odds table (``results.odds.odds_benchmarks``).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from envs.core.errors import UserError

BENCH_MODULES: tuple[str, ...] = ("training.bench_odds", "training.bench_solve", "training.bench_regress")
PREFERRED_SCENARIOS: tuple[tuple[str, str], ...] = (("blackbird", "session"), ("storyteller", "heist"),
                                                    ("blackbird", "duel"), ("hallownest", "duel"))


@dataclass
class BenchOptions:
    ruleset: str | None = None
    scenario: str | None = None
    steps: int = 16_384  # training timesteps per measurement
    decisions: int = 5_000  # decisions per inference measurement
    n_envs: int = 4
    seed: int = 0
    torch_threads: int = 1


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    fn: Callable[[BenchOptions], dict[str, Any]]


BENCHMARKS: dict[str, Benchmark] = {}


def register_benchmark(name: str, description: str) -> Callable[[Callable[[BenchOptions], dict[str, Any]]],
                                                                Callable[[BenchOptions], dict[str, Any]]]:
    """Decorator: ``@register_benchmark("odds", "exact odds tables per second")``."""

    def deco(fn: Callable[[BenchOptions], dict[str, Any]]) -> Callable[[BenchOptions], dict[str, Any]]:
        BENCHMARKS[name] = Benchmark(name, description, fn)
        return fn

    return deco


def load_benchmark_modules() -> None:
    for name in BENCH_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise


def pick_scenario(opts: BenchOptions) -> tuple[str, str]:
    from envs.core.registry import all_rulesets

    rss = all_rulesets()
    if opts.ruleset:
        if opts.ruleset not in rss:
            raise UserError(f"unknown ruleset '{opts.ruleset}'; valid: {', '.join(sorted(rss))}")
        rs = rss[opts.ruleset]
        return rs.name, rs.scenario(opts.scenario or next(iter(rs.scenarios))).name
    for r, s in PREFERRED_SCENARIOS:
        if r in rss and s in rss[r].scenarios:
            return r, s
    if not rss:
        raise UserError("no ruleset is registered to benchmark")
    name = sorted(rss)[0]
    return name, next(iter(rss[name].scenarios))


def run_benchmarks(names: list[str] | None, opts: BenchOptions) -> dict[str, Any]:
    load_benchmark_modules()
    names = names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise UserError(f"unknown benchmark(s): {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)}")
    from training.train import set_torch_threads

    set_torch_threads(opts.torch_threads)
    return {n: BENCHMARKS[n].fn(opts) for n in names}


# -- shared pieces ------------------------------------------------------------------------------------
PPO_HP: dict[str, Any] = {"n_steps": 256, "batch_size": 256, "n_epochs": 10, "learning_rate": 3e-4,
                          "gamma": 0.99, "ent_coef": 0.01}
NET = [128, 128]


def _learn_rate(model: Any, steps: int) -> float:
    model.learn(min(steps, 1024))  # warm-up (first rollout, torch kernels)
    t = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - t)


def _scenario_model(ruleset: str, scenario: str, n_envs: int, vec: str, seed: int) -> Any:
    from sb3_contrib import MaskablePPO

    from agents.registry import make_agent
    from envs.core.registry import get_ruleset
    from training.train import make_vec_env

    rs = get_ruleset(ruleset)
    cfg = rs.default_config()
    n = rs.scenario(scenario).players(cfg)
    opps = [make_agent(ruleset, "random", scenario) if n > 1 else None for _ in range(n_envs)]
    env = make_vec_env(ruleset, scenario, cfg, opps, vec)
    return MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs={"net_arch": NET}, **PPO_HP)


@register_benchmark("train", "training steps/s: MaskablePPO on a scenario vs SB3 PPO on Blackjack-v1")
def bench_train(opts: BenchOptions) -> dict[str, Any]:
    import gymnasium as gym
    from gymnasium.wrappers import FlattenObservation
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env as sb3_vec

    ruleset, scenario = pick_scenario(opts)
    # Blackjack's observation is a Tuple of Discretes, which SB3 does not take: flattened to one-hot.
    ref_env = sb3_vec(lambda: FlattenObservation(gym.make("Blackjack-v1")), n_envs=opts.n_envs, seed=opts.seed)
    ref = PPO("MlpPolicy", ref_env, seed=opts.seed, device="cpu", policy_kwargs={"net_arch": NET}, **PPO_HP)
    ref_rate = _learn_rate(ref, opts.steps)
    ref_env.close()
    model = _scenario_model(ruleset, scenario, opts.n_envs, "dummy", opts.seed)
    rate = _learn_rate(model, opts.steps)
    model.get_env().close()
    return {"scenario": f"{ruleset} {scenario}", "steps": opts.steps, "n_envs": opts.n_envs,
            "reference": "SB3 PPO on Blackjack-v1 (same hyperparameters)",
            "reference_steps_per_s": round(ref_rate, 1), "steps_per_s": round(rate, 1),
            "ratio": round(rate / ref_rate, 3)}


@register_benchmark("inference", "decisions/s of rl: agents (numpy fast path) vs SB3 predict")
def bench_inference(opts: BenchOptions) -> dict[str, Any]:
    import numpy as np

    from agents.rl import RLPolicy, export_numpy
    from envs.core.dice import Rng
    from envs.core.policy import UniformRandom, legal_mask
    from envs.core.registry import get_ruleset

    ruleset, scenario = pick_scenario(opts)
    model = _scenario_model(ruleset, scenario, opts.n_envs, "dummy", opts.seed)
    model.learn(min(opts.steps, 4096))  # a (briefly) trained agent; speed does not depend on the weights
    model.get_env().close()
    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    cfg = rs.default_config()
    # Real decision points: states reached by random play.
    rng = Rng(opts.seed)
    states, masks = [], []
    rnd = UniformRandom()
    while len(states) < opts.decisions:
        st = sc.new_game(cfg)
        while not st.is_terminal() and len(states) < opts.decisions:
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            m = legal_mask(st, sc.num_actions)
            states.append(st.clone())
            masks.append(m)
            st.apply_action(rnd.act(st, m, rng))
    seats = [s.current_player() for s in states]
    low, high = sc.observation_bounds
    obs = np.stack([np.clip(s.observation(p), low, high).astype(np.float32)
                    for s, p in zip(states, seats, strict=True)])
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
    return {"scenario": f"{ruleset} {scenario}", "decisions": len(obs),
            "reference": "SB3 MaskablePPO.predict(deterministic=True, action_masks=...) one observation at a time",
            "predict_decisions_per_s": round(ref_rate, 1), "fast_decisions_per_s": round(fast_rate, 1),
            "ratio": round(fast_rate / ref_rate, 2),
            "batched_decisions_per_s": round(batch_rate, 1), "batched_ratio": round(batch_rate / ref_rate, 2),
            "predict_batched_decisions_per_s": round(ref_batch_rate, 1),
            "same_actions_as_predict": same,
            "same_actions_batched": float(np.mean(batched == np.asarray(ref_batch)))}


@register_benchmark("vec", "training steps/s with DummyVecEnv vs SubprocVecEnv (2, 4, 8 envs)")
def bench_vec(opts: BenchOptions) -> dict[str, Any]:
    ruleset, scenario = pick_scenario(opts)
    rows: dict[str, float] = {}
    for n in (2, 4, 8):
        for vec in ("dummy", "subproc"):
            model = _scenario_model(ruleset, scenario, n, vec, opts.seed)
            rows[f"{vec}_{n}"] = round(_learn_rate(model, opts.steps), 1)
            model.get_env().close()
    best = max(rows, key=lambda k: rows[k])
    return {"scenario": f"{ruleset} {scenario}", "steps": opts.steps, "steps_per_s": rows, "fastest": best,
            "subproc_over_dummy": {n: round(rows[f"subproc_{n}"] / rows[f"dummy_{n}"], 3) for n in (2, 4, 8)}}


@register_benchmark("odds", "exact odds tables of each ruleset's core mechanic (icepool): median ms per table")
def bench_odds(opts: BenchOptions) -> dict[str, Any]:
    try:
        from results.odds import time_benchmarks
    except ImportError as e:  # the odds module is not there (or not yet)
        return {"skipped": f"results.odds unavailable: {e}"}
    return {"median_ms_per_table": {k: round(v, 3) for k, v in time_benchmarks(repeat=5).items()}}
