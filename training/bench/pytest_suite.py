"""The benchmarks as a pytest-benchmark suite (timings reported, never asserted).

Run: ``pytest --benchmark-only -p no:cacheprovider training/bench/pytest_suite.py`` (add
``--benchmark-group-by=param:env_id`` or ``--benchmark-json out.json`` as pytest-benchmark allows). The file is
outside ``tests/`` so the test suite never collects it. Each env's step benchmark sits beside Blackjack-v1's,
measured through the same loop as ``rulebreaker bench envs``; compare within one run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from envs.core.registry import get_ruleset
from training.bench.speed import (
    ADAPTER_FLOOR,
    REFERENCE_ENV,
    _burn,
    _persona_jobs,
    _Stepper,
    _timed_run,
    clone_pool,
    scenario_ids,
    trivial_env,
)
from training.runner import play_game, run_games

IDS = scenario_ids()
STEPS_PER_ROUND = 256


def _steps(stepper: _Stepper) -> None:
    env, mask, rnd = stepper.env, stepper.mask, stepper.rnd
    for _ in range(STEPS_PER_ROUND):
        legal = mask().nonzero()[0]  # np.flatnonzero's ids (1-d), as the bench picks them
        _, _, term, trunc, _ = env.step(legal[int(rnd.random() * len(legal))])
        if term or trunc:
            env.reset()


@pytest.mark.parametrize("env_id", [REFERENCE_ENV, *(i[2] for i in IDS)])
def test_env_steps(benchmark: Any, env_id: str) -> None:
    """256 random legal steps of one env through gymnasium.make (Blackjack-v1 is the reference)."""
    stepper = _Stepper(env_id, 0)
    benchmark.group = "env steps (256 per round)"
    benchmark(_steps, stepper)
    stepper.close()


def test_adapter_floor_steps(benchmark: Any) -> None:
    """256 steps of a trivial engine through GameEnv and gym's wrappers: the adapter's own cost."""
    stepper = _Stepper(ADAPTER_FLOOR, 0, env=trivial_env())
    benchmark.group = "env steps (256 per round)"
    benchmark(_steps, stepper)
    stepper.close()


@pytest.mark.parametrize(("ruleset", "scenario"), [(i[0], i[1]) for i in IDS])
def test_clone(benchmark: Any, ruleset: str, scenario: str) -> None:
    """clone() of 64 decision states of the scenario reached by random play."""
    pool = clone_pool(ruleset, scenario)
    benchmark.group = "clone (64 states per round)"
    benchmark(lambda: [s.clone() for s in pool])


@pytest.mark.parametrize(("ruleset", "scenario"), [(i[0], i[1]) for i in IDS])
def test_persona_game(benchmark: Any, ruleset: str, scenario: str) -> None:
    """One persona game (the first matchup of evaluate's jobs) played to the end."""
    job = _persona_jobs(ruleset, scenario, 1, 0)[0]
    benchmark.group = "persona game"
    benchmark(play_game, job)


@pytest.mark.parametrize("workers", [1, 2])
def test_run_games_workers(benchmark: Any, workers: int) -> None:
    """A mixed batch of persona games (every scenario's first matchups, 4 seeds each) with 1 and 2 workers."""
    jobs = [j for r, s, _ in IDS for j in _persona_jobs(r, s, 4, 0)[:8]]
    benchmark.group = "run_games batch"
    benchmark.pedantic(run_games, args=(jobs,), kwargs={"workers": workers}, rounds=3)


def test_plain_two_processes_games(benchmark: Any) -> None:
    """The same batch cut in two halves, each played serially by a plain forked process, both at once (no pool)."""
    jobs = [j for r, s, _ in IDS for j in _persona_jobs(r, s, 4, 0)[:8]]
    benchmark.group = "run_games batch"
    benchmark.pedantic(_timed_run, args=(jobs, 0, len(jobs) // 2), rounds=3)


@pytest.mark.parametrize("processes", [1, 2])
def test_machine_capacity(benchmark: Any, processes: int) -> None:
    """The same CPU burner in 1 or 2 processes: what the machine gives a second process right now."""
    from concurrent.futures import ProcessPoolExecutor

    work = [2_000_000 // processes] * processes
    with ProcessPoolExecutor(max_workers=processes) as pool:
        list(pool.map(_burn, [1] * processes))
        benchmark.group = "machine capacity (same total work)"
        benchmark.pedantic(lambda: list(pool.map(_burn, work)), rounds=3)


@pytest.fixture(scope="module")
def trained() -> Any:
    from training.bench.registry import BenchOptions, pick_scenario
    from training.bench.rl import _scenario_model
    from training.train import set_torch_threads

    set_torch_threads(1)  # as rulebreaker bench and training do
    ruleset, scenario = pick_scenario(BenchOptions())
    model = _scenario_model(ruleset, scenario, 2, "dummy", 0)
    model.learn(512)
    model.get_env().close()
    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    state = clone_pool(ruleset, scenario, size=1)[0]
    mask = np.zeros(sc.action_count(rs.default_config()), dtype=bool)
    mask[state.legal_actions()] = True
    return model, sc, state, mask


def test_predict_sb3(benchmark: Any, trained: Any) -> None:
    """SB3 MaskablePPO.predict of one observation (the reference of the numpy path)."""
    model, sc, state, mask = trained
    obs = np.clip(np.asarray(state.observation(state.current_player()), np.float32), *sc.observation_bounds)
    benchmark.group = "trained-agent decision"
    benchmark(model.predict, obs, deterministic=True, action_masks=mask)


def test_predict_numpy(benchmark: Any, trained: Any) -> None:
    """The numpy RLPolicy's decision, observation from the state included."""
    from agents.rl import RLPolicy, export_numpy
    from envs.core.dice import Rng

    model, sc, state, mask = trained
    pol = RLPolicy(export_numpy(model), "rl:bench", sc.observation_bounds)
    rng = Rng(0)
    benchmark.group = "trained-agent decision"
    benchmark(pol.act, state, mask, rng)


def test_odds_tables(benchmark: Any) -> None:
    """Every exact odds table of results.odds once."""
    from results.odds import odds_benchmarks

    tables = odds_benchmarks()
    benchmark.group = "odds"
    benchmark(lambda: [fn() for fn in tables.values()])
