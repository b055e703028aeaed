"""Engine and batch-play speed: ``envs`` (steps/s ÷ Blackjack-v1, ``clone()`` cost), ``search`` and ``games``.

Every figure is a ratio to something measured in the same process, interleaved with it, so that a change
in the machine's load hits both sides alike:

* ``envs``: each registered env is stepped through ``gymnasium.make`` with uniformly random *legal*
  actions (from ``action_masks()``), and Gymnasium's ``Blackjack-v1`` is stepped with the same loop (its
  two actions are always legal). Rounds alternate short timed blocks — Blackjack, the env, ``clone()`` of
  states of the env's scenario — and the figures are the medians over the rounds of the per-round ratios.
  ``clone()`` cost is reported in units of that env's own step time (its goal: at most 3 steps).
* ``search``: searched decisions/s of the search agent in every seat
  (:func:`agents.search.measure_decisions_per_second`).
* ``games``: persona games/s on one core per scenario (every persona against every other, as ``evaluate``
  plays them: no action lists kept), and the speed-up of ``run_games(workers=2)`` over ``workers=1`` on the
  same jobs, alternated over rounds (medians), with the CPU seconds of the parent and of the workers. Beside it
  two references: a pure-Python burner in 1 and 2 processes (what the cores allow at all), and the same games
  split in two halves of equal estimated cost, each played serially in a plain forked process, both at once
  (what two processes allow on *these* games, with no pool, hand-over or pickling: the runner's own overhead
  is the gap between it and ``run_games(workers=2)``).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.registry import agent_names
from envs.core.config import RulesModel
from envs.core.dice import Rng
from envs.core.game import TERMINAL, EndReason, Outcome, Ruleset, Scenario, State
from envs.core.policy import UniformRandom, legal_mask
from envs.core.registry import all_rulesets, get_ruleset
from training.bench.registry import BenchOptions, register_benchmark
from training.evaluate import matchup_jobs
from training.runner import run_games

REFERENCE_ENV = "Blackjack-v1"
WORKERS_SECONDS = (1.0, 6.0)  # (quick, full) one-core seconds of the --workers batch
QUIET_LOAD_PER_CORE = 0.5  # above this 1-minute load per core the --workers figures are provisional
BLOCK_SECONDS = (0.15, 0.4)  # (quick, full) length of one timed block
ROUNDS = (3, 5)  # (quick, full) rounds of alternating blocks per env
CLONE_POOL = 64  # states per scenario whose clone() is timed
WORKERS_SPAN = 2  # the --workers timing replays about this many scenarios' worth of one-core time, thinned


def register() -> None:
    register_benchmark("envs", "env steps/s ÷ Blackjack-v1 (same loop, interleaved) and clone() cost in env steps")(
        bench_envs
    )
    register_benchmark("search", "search-agent decisions/s per scenario (agents.search)")(bench_search)
    register_benchmark("games", "persona games/s per core per scenario; run_games --workers 2 vs 1")(bench_games)


def scenario_ids() -> list[tuple[str, str, str]]:
    """(ruleset, scenario, env id) of every registered scenario, in a fixed order."""
    return [(name, sc, rs.env_id(sc)) for name, rs in sorted(all_rulesets().items()) for sc in rs.scenarios]


def _selected(opts: BenchOptions) -> list[tuple[str, str, str]]:
    ids = scenario_ids()
    if opts.ruleset:
        ids = [i for i in ids if i[0] == opts.ruleset and (opts.scenario is None or i[1] == opts.scenario)]
    return ids


def _tick(opts: BenchOptions, stage: str, done: int, total: int) -> None:
    if opts.on_progress is not None:
        opts.on_progress(stage, done, total)


# -- envs ---------------------------------------------------------------------------------------------
class _Stepper:
    """One env stepped with uniformly random legal actions; episodes run on across timed blocks."""

    def __init__(self, env_id: str, seed: int, env: gym.Env[Any, Any] | None = None) -> None:
        self.env = env if env is not None else gym.make(env_id)
        self.env.reset(seed=seed)
        base = self.env.unwrapped
        n = int(self.env.action_space.n)  # type: ignore[attr-defined]
        always = np.ones(n, dtype=bool)
        masks = getattr(base, "action_masks", None)
        self.mask: Callable[[], np.ndarray] = masks if masks is not None else (lambda: always)
        self.rnd = random.Random(seed)

    def rate(self, seconds: float) -> float:
        """Steps per second over a block of about ``seconds``."""
        env, mask, rnd = self.env, self.mask, self.rnd
        steps = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        while True:
            for _ in range(32):
                # The agent's part of a step, the same for every env: nonzero() gives np.flatnonzero's ids for a
                # 1-d mask at a quarter of its cost (np.flatnonzero's ravel and dispatch were ~9k instructions,
                # a sixth of the adapter floor, and diluted every ratio towards 1).
                legal = mask().nonzero()[0]
                _, _, term, trunc, _ = env.step(legal[int(rnd.random() * len(legal))])
                if term or trunc:
                    env.reset()
            steps += 32
            now = time.perf_counter()
            if now >= end:
                return steps / (now - t0)

    def run(self, steps: int) -> None:
        """``steps`` steps of the same loop, untimed (what ``python -m training.bench.instructions`` counts)."""
        env, mask, rnd = self.env, self.mask, self.rnd
        for _ in range(steps):
            legal = mask().nonzero()[0]
            _, _, term, trunc, _ = env.step(legal[int(rnd.random() * len(legal))])
            if term or trunc:
                env.reset()

    def close(self) -> None:
        self.env.close()


ADAPTER_FLOOR = "adapter floor (a trivial engine through GameEnv)"
"""The name of the trivial env the ``envs`` benchmark steps beside the real ones."""


class _TrivialState(State):
    """A game with no rules to speak of: two seats alternate picking one of three actions for 40 moves.

    Stepped through :class:`~envs.core.gym_adapter.GameEnv` it shows what the adapter and the gym wrappers
    cost on their own: the most any engine could reach through them.
    """

    MOVES = 40

    def __init__(self) -> None:
        super().__init__(2)
        self.moves = 0
        self._obs = np.zeros(8, dtype=np.float32)

    def current_player(self) -> int:
        return TERMINAL if self._outcome is not None else self.moves % 2

    def legal_actions(self) -> list[int]:
        return [] if self._outcome is not None else [0, 1, 2]

    def apply_action(self, action: int) -> None:
        self.moves += 1
        if self.moves >= self.MOVES:
            self._outcome = Outcome(0, EndReason.COMPLETED, (1.0, -1.0))

    def action_label(self, action: int) -> str:
        return str(action)

    def apply_chance(self, outcome: Any) -> None:  # pragma: no cover - no chance nodes
        raise ValueError("no chance in the trivial game")

    def observation(self, seat: int) -> np.ndarray:
        return self._obs.copy()


class _TrivialRules(RulesModel):
    pass


def trivial_env() -> gym.Env[Any, Any]:
    """The trivial game as an env, wrapped as ``gymnasium.make`` wraps the registered ones (``TimeLimit`` only: they
    register without ``OrderEnforcing`` and ``PassiveEnvChecker``, see :func:`envs.core.registry.register_ruleset`)."""
    from gymnasium.wrappers import TimeLimit

    from envs.core.gym_adapter import GameEnv

    sc = Scenario("trivial", "Trivial", "bench only", 2, 3, 8, lambda _cfg: _TrivialState(), max_episode_steps=1000)
    rs = Ruleset("bench_trivial", "BenchTrivial", "bench only", _TrivialRules, Path("/dev/null"), {"trivial": sc})
    env = GameEnv(rs, "trivial", config=_TrivialRules())
    return TimeLimit(env, sc.max_episode_steps)


def clone_pool(ruleset: str, scenario: str, size: int = CLONE_POOL, seed: int = 0) -> list[State]:
    """Decision states of a scenario reached by random play (copies, taken along several games)."""
    rs = get_ruleset(ruleset)
    sc = rs.scenario(scenario)
    cfg = rs.default_config()
    n = sc.action_count(cfg)
    rng = Rng(seed)
    rnd = UniformRandom()
    pool: list[State] = []
    for _ in range(1000):
        st = sc.new_game(cfg)
        k = 0
        while not st.is_terminal() and len(pool) < size:
            if st.is_chance():
                st.apply_chance(st.sample_chance(rng))
                continue
            if k % 3 == 0:
                pool.append(st.clone())
            k += 1
            st.apply_action(rnd.act(st, legal_mask(st, n), rng))
        if len(pool) >= size:
            break
    return pool


def _clone_rate(pool: list[State], seconds: float) -> float:
    clones = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        for s in pool:
            s.clone()
        clones += len(pool)
        now = time.perf_counter()
        if now >= end:
            return clones / (now - t0)


def bench_envs(opts: BenchOptions) -> dict[str, Any]:
    block = BLOCK_SECONDS[0 if opts.quick else 1]
    rounds = ROUNDS[0 if opts.quick else 1]
    ids = _selected(opts)
    ref = _Stepper(REFERENCE_ENV, opts.seed)
    ref.rate(0.05)  # warm-up
    per_env: dict[str, Any] = {}
    ref_rates: list[float] = []
    for i, (ruleset, scenario, env_id) in enumerate(ids):
        _tick(opts, f"envs: {env_id}", i, len(ids))
        st = _Stepper(env_id, opts.seed)
        pool = clone_pool(ruleset, scenario, seed=opts.seed)
        st.rate(0.05)
        _clone_rate(pool, 0.02)
        rates, refs, ratios, clone_steps, clone_rates = [], [], [], [], []
        for _ in range(rounds):
            r0 = ref.rate(block)
            r = st.rate(block)
            c = _clone_rate(pool, block / 2)
            refs.append(r0)
            rates.append(r)
            ratios.append(r / r0)
            clone_rates.append(c)
            clone_steps.append(r / c)  # one clone's time in steps of this env
        st.close()
        ref_rates.extend(refs)
        per_env[env_id] = {
            "ruleset": ruleset,
            "scenario": scenario,
            "steps_per_s": round(statistics.median(rates), 1),
            "reference_steps_per_s": round(statistics.median(refs), 1),
            "ratio": round(statistics.median(ratios), 3),
            "ratio_min": round(min(ratios), 3),
            "ratio_max": round(max(ratios), 3),
            "clones_per_s": round(statistics.median(clone_rates), 1),
            "clone_in_steps": round(statistics.median(clone_steps), 3),
        }
    # the adapter's own ceiling: a trivial engine through the same adapter and wrappers, same loop
    floor = _Stepper(ADAPTER_FLOOR, opts.seed, env=trivial_env())
    floor.rate(0.05)
    floor_ratios, floor_rates = [], []
    for _ in range(rounds):
        r0 = ref.rate(block / 2)
        r = floor.rate(block / 2)
        floor_ratios.append(r / r0)
        floor_rates.append(r)
    floor.close()
    ref.close()
    _tick(opts, "envs", len(ids), len(ids))
    return {
        "reference": f"{REFERENCE_ENV} through gymnasium.make, same random-legal-action loop, interleaved blocks",
        "reference_steps_per_s": round(statistics.median(ref_rates), 1) if ref_rates else 0.0,
        "rounds": rounds,
        "block_seconds": block,
        "envs": per_env,
        "adapter_floor": {
            "steps_per_s": round(statistics.median(floor_rates), 1),
            "ratio": round(statistics.median(floor_ratios), 3),
            "ratio_min": round(min(floor_ratios), 3),
            "ratio_max": round(max(floor_ratios), 3),
        },
    }


# -- search -------------------------------------------------------------------------------------------
def bench_search(opts: BenchOptions) -> dict[str, Any]:
    from agents.search import measure_decisions_per_second  # lazy: the search agent is only needed here

    seconds = 1.0 if opts.quick else 3.0
    ids = _selected(opts)
    out: dict[str, Any] = {}
    for i, (ruleset, scenario, _) in enumerate(ids):
        _tick(opts, f"search: {ruleset} {scenario}", i, len(ids))
        m = measure_decisions_per_second(ruleset, scenario, opts.search_spec, seconds=seconds, seed=opts.seed)
        out[f"{ruleset} {scenario}"] = {
            "decisions_per_s": round(m["decisions_per_second"], 2),
            "searched_per_s": round(m["searched_per_second"], 2),
            "decisions": int(m["decisions"]),
        }
    return {"spec": opts.search_spec, "seconds_per_scenario": seconds, "scenarios": out}


# -- games --------------------------------------------------------------------------------------------
def _persona_jobs(ruleset: str, scenario: str, games: int, seed: int) -> list[Any]:
    """Every persona against every other, as ``evaluate`` deals them (and, as it does, no action lists kept)."""
    rs = get_ruleset(ruleset)
    agents = [a for a in agent_names(ruleset) if a != "random"] or ["random"]
    jobs, _ = matchup_jobs(rs, scenario, rs.default_config(), agents, max(1, games), seed)
    return [replace(j, keep_actions=False) for j in jobs]


def _games_rate(jobs: list[Any], workers: int) -> float:
    return _timed_games(jobs, workers)[0]


def _cpu_used() -> float:
    """CPU seconds of this process and its reaped worker processes so far."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _timed_games(jobs: list[Any], workers: int) -> tuple[float, float]:
    """(games per wall second, CPU seconds of this process and its workers) of ``run_games`` on ``jobs``."""
    got = _timed_run(jobs, workers)
    return len(jobs) / got["wall"], got["parent"] + got["children"]


def _split_by_cost(costs: list[float]) -> int:
    """Where to cut a list of jobs so that both runs of consecutive jobs cost about the same (estimated seconds)."""
    half, acc = sum(costs) / 2, 0.0
    for i, c in enumerate(costs):
        if acc + c / 2 >= half:
            return max(1, i)
        acc += c
    return len(costs) - 1


def _play_serially(jobs: list[Any]) -> None:
    run_games(jobs, workers=1)


def _timed_run(jobs: list[Any], mode: int, cut: int | None = None) -> dict[str, float]:
    """Wall seconds and CPU seconds of this process and of its children for one way of playing ``jobs``.

    ``mode`` 1 or 2: ``run_games`` with that many workers; 0: the jobs cut at ``cut`` into two runs of
    consecutive jobs, each played by ``run_games(workers=1)`` in a plain forked process, both at once.
    """
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    if mode == 0:
        ctx = multiprocessing.get_context("fork")
        procs = [ctx.Process(target=_play_serially, args=(part,)) for part in (jobs[:cut], jobs[cut:])]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    else:
        run_games(jobs, workers=mode)
    wall = time.perf_counter() - t0
    me2 = resource.getrusage(resource.RUSAGE_SELF)
    kids2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall": wall,
        "parent": me2.ru_utime + me2.ru_stime - me.ru_utime - me.ru_stime,
        "children": kids2.ru_utime + kids2.ru_stime - kids.ru_utime - kids.ru_stime,
    }


def _burn(iterations: int) -> int:
    """A pure-Python CPU burner (no memory traffic, no I/O): what one core can do, for the capacity figure."""
    x = 0
    for i in range(iterations):
        x = (x + i * i) % 1_000_003
    return x


def _burn_capacity(seconds: float) -> dict[str, float]:
    """How much faster two processes burn the same work than one, right now: the machine's spare parallelism.

    The same burner, the same total work, once in this process and once split over a two-process pool (its
    start-up timed apart). On a free 2-core machine this is about 2; with other processes (or, with
    ``sched_autogroup``, other sessions) taking the cores it falls toward 1, and no ``--workers 2`` can do
    better than it. ``pool_start_s`` is the fixed cost of a two-process pool: fork, hand-over, shut down.
    """
    from concurrent.futures import ProcessPoolExecutor

    n = 200_000
    t0 = time.perf_counter()
    _burn(n)
    n = max(n, int(n * seconds / max(time.perf_counter() - t0, 1e-3)))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(_burn, [1, 1]))
    pool_start = time.perf_counter() - t0
    t0 = time.perf_counter()
    _burn(n)
    _burn(n)
    serial = time.perf_counter() - t0
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(_burn, [1, 1]))  # workers up before the clock starts
        t0 = time.perf_counter()
        list(pool.map(_burn, [n, n]))
        parallel = time.perf_counter() - t0
    return {"capacity": serial / parallel, "pool_start_s": pool_start}


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - no load average on this platform
        return []


def _loaded(*loads: list[float]) -> bool:
    """Whether other work shared the cores (1-minute load above QUIET_LOAD_PER_CORE per core at either end)."""
    cores = os.cpu_count() or 1
    return any(bool(load) and load[0] > QUIET_LOAD_PER_CORE * cores for load in loads)


def bench_games(opts: BenchOptions) -> dict[str, Any]:
    target = 0.5 if opts.quick else 1.5  # seconds of one-core play per scenario
    ids = _selected(opts)
    per: dict[str, Any] = {}
    all_jobs: list[Any] = []
    costs: list[float] = []  # each job's estimated one-core seconds, from its scenario's rate
    mix_seconds = 0.0  # one-core seconds of all_jobs, from each scenario's rate
    for i, (ruleset, scenario, _) in enumerate(ids):
        _tick(opts, f"games: {ruleset} {scenario}", i, len(ids) + 1)
        probe = _persona_jobs(ruleset, scenario, 1, opts.seed)
        t0 = time.perf_counter()
        run_games(probe, workers=1)
        per_game = (time.perf_counter() - t0) / len(probe)
        per_matchup = max(1, int(target / per_game / len(probe)))
        jobs = _persona_jobs(ruleset, scenario, per_matchup, opts.seed)
        rate = _games_rate(jobs, 1)
        per[f"{ruleset} {scenario}"] = {"games": len(jobs), "games_per_s": round(rate, 1)}
        step = max(1, round(len(ids) / WORKERS_SPAN))  # every scenario's jobs, thinned
        all_jobs.extend(jobs[::step])
        costs.extend([1 / rate] * len(jobs[::step]))
        mix_seconds += len(jobs[::step]) / rate
    # The speed-up on every scenario's jobs at once (evaluate's batch shape, mixed lengths), indexed afresh.
    # The batch is long enough (WORKERS_SECONDS of one-core play) that the pool's fixed start-up is a small
    # share of it, and each round times 1 then 2 workers and then 2 then 1, so a load drift cancels out.
    _tick(opts, "games: --workers 2 vs 1", len(ids), len(ids) + 1)
    seconds = WORKERS_SECONDS[0 if opts.quick else 1]
    repeat = max(1, math.ceil(seconds / max(mix_seconds, 1e-3)))  # the mix replayed until it is long enough
    jobs = [replace(j, index=k) for k, j in enumerate(all_jobs * repeat)]
    cut = _split_by_cost(costs * repeat)
    plain = "fork" in multiprocessing.get_all_start_methods()  # the plain two-process reference needs fork
    load_before = _load()
    cap_before = _burn_capacity(0.25 if opts.quick else 1.0)
    one, two, cpu_ratios = [], [], []
    cpu1s, cpu2s, parent2s, plain_speedups, plain_cpu_ratios, own_cpu_ratios = [], [], [], [], [], []
    orders = ((1, 2, 0), (0, 2, 1), (2, 1, 0), (0, 1, 2))[: 2 if opts.quick else 4]
    for order in orders:
        got = {m: _timed_run(jobs, m, cut) for m in order if m or plain}
        cpu = {m: g["parent"] + g["children"] for m, g in got.items()}
        one.append(len(jobs) / got[1]["wall"])
        two.append(len(jobs) / got[2]["wall"])
        cpu1s.append(cpu[1])
        cpu2s.append(cpu[2])
        parent2s.append(got[2]["parent"])
        cpu_ratios.append(2 * cpu[1] / cpu[2])
        if plain:
            plain_speedups.append(got[1]["wall"] / got[0]["wall"])
            plain_cpu_ratios.append(cpu[0] / cpu[1])
            own_cpu_ratios.append(cpu[2] / cpu[0])
    cap_after = _burn_capacity(0.25 if opts.quick else 1.0)
    load_after = _load()
    r1, r2 = statistics.median(one), statistics.median(two)
    capacity = statistics.mean([cap_before["capacity"], cap_after["capacity"]])
    # On a machine whose other processes take the cores (or where the scheduler gives each session one
    # share, as Linux's autogroup does) wall time cannot show the speed-up; CPU time shows the overhead:
    # with cores free, 2 workers finish in about (CPU of the parallel run) / 2 against the serial CPU time.
    # The CPU seconds are those of the same alternated runs (medians of the per-round ratios).
    cpu1, cpu2 = statistics.median(cpu1s), statistics.median(cpu2s)
    ms = 1000 / len(jobs)
    # The same games in two plain processes: the speed-up and the CPU price of two processes on these games
    # (cache and core sharing), against which the runner's own overhead (pool, hand-over, pickling) is the rest.
    reference: dict[str, Any] = {}
    if plain:
        reference = {
            "plain_2_speedup": round(statistics.median(plain_speedups), 3),
            "plain_2_speedups": [round(x, 3) for x in plain_speedups],
            "plain_2_cpu_over_serial": round(statistics.median(plain_cpu_ratios), 3),
            "plain_2_cpu_over_serial_rounds": [round(x, 3) for x in plain_cpu_ratios],
            "workers_2_cpu_over_plain_2": round(statistics.median(own_cpu_ratios), 3),
            "workers_2_cpu_over_plain_2_rounds": [round(x, 3) for x in own_cpu_ratios],
            "workers_2_efficiency_vs_plain_2": round((r2 / r1) / statistics.median(plain_speedups), 3),
        }
    return {
        "agents": "every persona against every other (evaluate's matchups)",
        "scenarios": per,
        "workers_jobs": len(jobs),
        "workers_batch_serial_s": round(len(jobs) / r1, 2),
        "workers_batch_planned_s": round(mix_seconds * repeat, 3),  # one-core seconds it was sized for
        "workers_1_games_per_s": round(r1, 1),
        "workers_2_games_per_s": round(r2, 1),
        "workers_2_speedup": round(r2 / r1, 3),
        "speedups": [round(b / a, 3) for a, b in zip(one, two, strict=True)],
        "machine_capacity_2": round(capacity, 3),
        "machine_capacity_2_before_after": [round(cap_before["capacity"], 3), round(cap_after["capacity"], 3)],
        "workers_2_efficiency": round((r2 / r1) / capacity, 3),
        "pool_start_s": round(statistics.mean([cap_before["pool_start_s"], cap_after["pool_start_s"]]), 3),
        "load_average_before_after": [load_before, load_after],
        "provisional": _loaded(load_before, load_after),
        "serial_cpu_s": round(cpu1, 3),
        "workers_2_cpu_s": round(cpu2, 3),
        "workers_2_speedup_cpu_bound": round(statistics.median(cpu_ratios), 3),
        "workers_2_speedup_cpu_bound_rounds": [round(x, 3) for x in cpu_ratios],
        "serial_cpu_ms_per_game": round(cpu1 * ms, 4),
        "workers_2_cpu_ms_per_game": round(cpu2 * ms, 4),
        "workers_2_parent_cpu_s": round(statistics.median(parent2s), 3),
        **reference,
    }
