"""Training RL agents on a scenario: ``rulebreaker train`` (read top to bottom).

A run directory holds everything a run needs to be resumed, replayed and reported::

    train_state.json     settings (ruleset, scenario, algorithm, opponent, seed, hyperparameters, config)
                         and progress (timesteps done, target, status, checkpoints)
    model.zip            the latest model (SB3 zip + a rulebreaker.json entry; see agents.rl)
    checkpoints/         periodic checkpoints, step_<N>.zip
    pool.npz             the self-play snapshot pool (numpy weights, no pickle)
    tb/                  TensorBoard logs
    curves.json/.csv/.png learning curves: reward and win rate against each persona over steps
    record.json          the run record (results.records), written atomically

Interruption: SIGTERM or a first Ctrl-C asks the training loop to stop at the next step; the model is
saved with the timestep count of the last *completed* rollout (the partial rollout was never trained
on), so ``--resume`` continues from exactly there and ends at the same total as an uninterrupted run.
A second Ctrl-C raises ``KeyboardInterrupt``, which is handled the same way.

Resuming unpickles the SB3 model (``BaseAlgorithm.load``), which can run arbitrary code: only resume
from run directories you created. ``rl:`` agents (agents.rl) read weights only and run no pickle.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.rl import ALGOS, MODEL_NAME, NumpyNet, algo_class, check_meta, export_numpy, read_meta, save_model
from envs.core.errors import UserError

HP_DIR = Path(__file__).with_name("hyperparams")
STATE_NAME = "train_state.json"
POOL_NAME = "pool.npz"
OPPONENT_MODES = ("random", "self", "mix")
VEC_KINDS = ("dummy", "subproc")
DEFAULT_VEC = "dummy"  # measured on the 2-core box: see docs/training.md ("Vectorised envs")
SETTINGS_KEYS = ("n_envs", "n_timesteps", "eval_freq", "eval_episodes", "checkpoint_freq", "keep_checkpoints",
                 "snapshot_freq", "pool_size", "mix_persona_prob", "final_eval_games", "torch_threads")
DEFAULT_TORCH_THREADS = 1  # small MLPs on a busy 2-core box: one thread is faster and far steadier
_ACT_FNS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU"}


# -- hyperparameters ------------------------------------------------------------------------------
def hp_file(algo: str) -> Path:
    return HP_DIR / f"{algo}.yaml"


def parse_hp_overrides(items: list[str] | None) -> dict[str, Any]:
    """``key=value`` strings from ``--hp``; values are parsed as YAML (numbers, lists, dicts)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--hp expects key=value, got '{item}'")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as e:
            raise UserError(f"--hp {key}: cannot parse '{value}': {e}") from None
    return out


def load_hyperparams(algo: str, env_id: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``default`` block, then the env id's block, then ``--hp`` overrides; unknown keys are refused."""
    import inspect

    path = hp_file(algo)
    if not path.exists():
        raise UserError(f"no hyperparameter file for '{algo}' ({path}); valid algorithms: {', '.join(ALGOS)}")
    table = yaml.safe_load(path.read_text()) or {}
    hp: dict[str, Any] = dict(table.get("default", {}))
    hp.update(table.get(env_id, {}) or {})
    hp.update(overrides or {})
    reserved = {"self", "env", "tensorboard_log", "seed", "device", "verbose", "_init_setup_model"}
    allowed = set(inspect.signature(algo_class(algo).__init__).parameters) - reserved
    allowed |= set(SETTINGS_KEYS) | {"policy"}
    unknown = sorted(set(hp) - allowed)
    if unknown:
        raise UserError(f"unknown hyperparameter(s) for {algo}: {', '.join(unknown)}; "
                        f"valid: {', '.join(sorted(allowed))}")
    return hp


def split_hp(hp: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(algorithm constructor kwargs, rulebreaker settings)."""
    settings = {k: hp[k] for k in SETTINGS_KEYS if k in hp}
    kwargs = {k: v for k, v in hp.items() if k not in SETTINGS_KEYS}
    return kwargs, settings


def _policy_kwargs(pk: dict[str, Any] | None) -> dict[str, Any] | None:
    if not pk:
        return pk
    import torch.nn as nn

    out = dict(pk)
    act = out.get("activation_fn")
    if isinstance(act, str):
        if act not in _ACT_FNS:
            raise UserError(f"policy_kwargs.activation_fn '{act}' unknown; valid: {', '.join(_ACT_FNS)}")
        out["activation_fn"] = getattr(nn, _ACT_FNS[act])
    return out


# -- settings of a run ------------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """Everything ``rulebreaker train`` takes. ``None`` means "from the hyperparameter file"."""

    ruleset: str
    scenario: str
    algo: str = "maskable-ppo"
    steps: int | None = None  # total timesteps (the target, also when resuming)
    opponent: str = "random"  # random | a persona | self | mix
    seed: int = 0
    out: Path | None = None
    resume: Path | None = None
    n_envs: int | None = None
    vec: str = DEFAULT_VEC
    hp: dict[str, Any] = field(default_factory=dict)  # --hp overrides
    rules: Path | None = None
    progress_bar: bool = False
    final_eval: bool = True  # evaluate against every persona at the end (fast numpy path)
    workers: int = 1  # processes for the final evaluation
    callbacks: list[Any] = field(default_factory=list)  # extra SB3 callbacks (tests simulate interrupts here)
    log: Callable[[str], None] = lambda s: None


@dataclass
class TrainResult:
    run_dir: Path
    status: str  # completed | interrupted
    num_timesteps: int
    target: int
    metrics: dict[str, Any]


def _load_state(run_dir: Path) -> dict[str, Any]:
    p = run_dir / STATE_NAME
    if not run_dir.is_dir() or not p.exists():
        raise UserError(f"{run_dir} is not a training run directory (no {STATE_NAME}); "
                        "--resume only accepts directories written by `rulebreaker train`")
    try:
        state = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{p} is corrupt: {e}") from None
    need = ("ruleset", "scenario", "algo", "target", "hyperparameters", "config", "rules_hash")
    if not isinstance(state, dict) or any(k not in state for k in need):
        raise UserError(f"{p} is not a rulebreaker training state")
    return state


def _write_state(run_dir: Path, state: dict[str, Any]) -> None:
    from results.records import atomic_write_json

    state["updated"] = _dt.datetime.now().isoformat(timespec="seconds")
    atomic_write_json(run_dir / STATE_NAME, state)


def set_torch_threads(n: int) -> None:
    """Torch intra-op threads (0 keeps torch's default). See DEFAULT_TORCH_THREADS."""
    if n > 0:
        import torch

        torch.set_num_threads(n)


# -- environments ---------------------------------------------------------------------------------
def _env_factory(ruleset: Any, scenario: str, config: Any, opponent: Any, rank: int, max_steps: int,
                 in_subprocess: bool) -> Callable[[], Any]:
    def thunk() -> Any:
        if in_subprocess:  # Ctrl-C goes to the main process only; it stops training and saves
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        from gymnasium.wrappers import TimeLimit
        from stable_baselines3.common.monitor import Monitor

        from envs.core.game import Ruleset
        from envs.core.registry import get_ruleset, register_ruleset
        from training.selfplay import RotatingSeatEnv

        if isinstance(ruleset, Ruleset):  # a worker process: the ruleset may not be a built-in one
            register_ruleset(ruleset)
        rs = get_ruleset(ruleset.name if isinstance(ruleset, Ruleset) else ruleset)
        env = RotatingSeatEnv(rs, scenario, config=config, opponents=opponent, seat_offset=rank)
        return Monitor(TimeLimit(env, max_episode_steps=max_steps))

    return thunk


def make_vec_env(ruleset: str, scenario: str, config: Any, opponents: list[Any], vec: str = DEFAULT_VEC) -> Any:
    """One env per opponent object (self-play pools are per env), DummyVecEnv or SubprocVecEnv."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from envs.core.registry import get_ruleset

    if vec not in VEC_KINDS:
        raise UserError(f"unknown --vec '{vec}'; valid: {', '.join(VEC_KINDS)}")
    rs = get_ruleset(ruleset)
    max_steps = rs.scenario(scenario).max_episode_steps
    fns = [_env_factory(rs if vec == "subproc" else ruleset, scenario, config, opp, i, max_steps, vec == "subproc")
           for i, opp in enumerate(opponents)]
    return SubprocVecEnv(fns) if vec == "subproc" and len(fns) > 1 else DummyVecEnv(fns)


def _opponents(cfg: TrainConfig, n_envs: int, settings: dict[str, Any], bounds: tuple[float, float]) -> list[Any]:
    from agents.registry import make_agent
    from training.selfplay import pool_opponent_for

    if cfg.opponent in ("self", "mix"):
        return [pool_opponent_for(cfg.ruleset, cfg.scenario, cfg.opponent, float(settings.get("mix_persona_prob", 0.5)),
                                  int(settings.get("pool_size", 10)), bounds, cfg.seed * 1000 + i)
                for i in range(n_envs)]
    make_agent(cfg.ruleset, cfg.opponent, cfg.scenario)  # validates the name (UserError lists valid ones)
    return [make_agent(cfg.ruleset, cfg.opponent, cfg.scenario) for _ in range(n_envs)]


# -- interruption ---------------------------------------------------------------------------------
class StopFlag:
    """Set by SIGTERM / the first SIGINT; the training callback stops at the next step."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None


@contextlib.contextmanager
def graceful_signals(flag: StopFlag) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        flag.signal = signum

    def on_int(signum: int, frame: Any) -> None:
        if flag:  # second Ctrl-C: stop now
            raise KeyboardInterrupt
        flag.signal = signum

    old_term = signal.signal(signal.SIGTERM, on_term)
    old_int = signal.signal(signal.SIGINT, on_int)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)


# -- periodic evaluation ---------------------------------------------------------------------------
def _ci(values: list[float]) -> tuple[float, list[float]]:
    from results.stats import mean_interval

    mi = mean_interval(values)
    return round(mi.value, 6), [round(mi.low, 6), round(mi.high, 6)]


class PersonaEvaluator:
    """Plays the current model against each persona with SB3's (maskable) ``evaluate_policy``."""

    def __init__(self, ruleset: str, scenario: str, config: Any, episodes: int, seed: int, masked: bool) -> None:
        from agents.registry import agent_names, make_agent
        from envs.core.registry import get_ruleset

        self.num_players = get_ruleset(ruleset).scenario(scenario).players(config)
        self.names = agent_names(ruleset)
        self.episodes = episodes
        self.seed = seed
        self.masked = masked
        n_eval = max(1, min(8, episodes))
        self.envs: dict[str, Any] = {}
        if self.num_players == 1:
            self.names = ["solo"]
            self.envs["solo"] = make_vec_env(ruleset, scenario, config, [None] * n_eval)
        else:
            for name in self.names:
                opps = [make_agent(ruleset, name, scenario) for _ in range(n_eval)]
                self.envs[name] = make_vec_env(ruleset, scenario, config, opps)

    def __call__(self, model: Any) -> dict[str, Any]:
        from results.stats import wilson

        if self.masked:
            from sb3_contrib.common.maskable.evaluation import evaluate_policy
        else:
            from stable_baselines3.common.evaluation import evaluate_policy
        out: dict[str, Any] = {}
        for name, env in self.envs.items():
            env.seed(self.seed)  # the same deals and seats at every evaluation: curves compare like with like
            for i in range(env.num_envs):
                env.env_method("restart_rotation", i, indices=[i])
            wins = [0]

            def count(loc: dict[str, Any], _glob: dict[str, Any], wins: list[int] = wins) -> None:
                info = loc["info"]
                if loc["done"] and "outcome" in info and info["outcome"]["winner"] == info.get("learner_seat"):
                    wins[0] += 1

            rewards, _lengths = evaluate_policy(model, env, n_eval_episodes=self.episodes, deterministic=True,
                                                return_episode_rewards=True, callback=count)
            mean, ci = _ci([float(r) for r in rewards])
            wi = wilson(wins[0], len(rewards))
            out[name] = {"episodes": len(rewards), "mean_return": mean, "return_ci": ci,
                         "win_rate": round(wi.value, 6), "win_ci": wi.as_list()}
        return out

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


# -- the training callback --------------------------------------------------------------------------
def _make_callback(run: _Run) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class RunCallback(BaseCallback):
        """Stops on a signal; at each rollout start: checkpoints, self-play snapshots, evaluations."""

        def _on_rollout_start(self) -> None:
            n = self.model.num_timesteps
            run.boundary = n  # every step before this one has been trained on
            run.at_boundary(self.model, n)

        def _on_step(self) -> bool:
            return not run.stop

    return RunCallback()


class _Run:
    """The mutable side of one training run (state file, curves, checkpoints, pool)."""

    def __init__(self, run_dir: Path, state: dict[str, Any], settings: dict[str, Any], evaluator: PersonaEvaluator,
                 vec_env: Any, meta: dict[str, Any], log: Callable[[str], None]) -> None:
        self.run_dir = run_dir
        self.state = state
        self.settings = settings
        self.evaluator = evaluator
        self.vec_env = vec_env
        self.meta = meta
        self.log = log
        self.stop = StopFlag()
        self.boundary = int(state.get("num_timesteps", 0))
        self.curves: list[dict[str, Any]] = _read_curves(run_dir)
        self.pool: list[NumpyNet] = []
        self.self_play = state["opponent"] in ("self", "mix")
        self.next_eval = self._next(self.curves[-1]["step"] if self.curves else -1, "eval_freq")
        self.next_ckpt = self._next(self.boundary, "checkpoint_freq")
        self.next_snap = self._next(self.boundary, "snapshot_freq")

    def _next(self, done: int, key: str) -> int:
        every = max(1, int(self.settings.get(key, 20000)))
        return 0 if done < 0 else (done // every + 1) * every

    def at_boundary(self, model: Any, n: int) -> None:
        if self.self_play and (n >= self.next_snap or not self.pool):
            self.add_snapshot(export_numpy(model))
            self.next_snap = self._next(n, "snapshot_freq")
        if n >= self.next_eval:
            self.evaluate(model, n)
            self.next_eval = self._next(n, "eval_freq")
        if n >= self.next_ckpt and n > 0:
            self.checkpoint(model, n)
            self.next_ckpt = self._next(n, "checkpoint_freq")

    def add_snapshot(self, net: NumpyNet, persist: bool = True) -> None:
        self.pool.append(net)
        self.pool = self.pool[-int(self.settings.get("pool_size", 10)):]
        self.vec_env.env_method("add_snapshot", net)
        if persist:
            self.save_pool()

    def save_pool(self) -> None:
        import io
        import os
        import tempfile

        arrays = {f"s{k}_{name}": a for k, net in enumerate(self.pool) for name, a in net.to_arrays().items()}
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        fd, tmp = tempfile.mkstemp(dir=self.run_dir, prefix=".pool.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(buf.getvalue())
        os.replace(tmp, self.run_dir / POOL_NAME)
        self.state["pool"] = {"snapshots": len(self.pool), "activation": self.pool[0].activation,
                              "kind": self.pool[0].kind} if self.pool else {}

    def load_pool(self) -> None:
        p = self.run_dir / POOL_NAME
        info = self.state.get("pool") or {}
        if not p.exists() or not info:
            return
        try:
            with np.load(p, allow_pickle=False) as z:
                for k in range(int(info["snapshots"])):
                    arrays = {name.split("_", 1)[1]: z[name] for name in z.files if name.startswith(f"s{k}_")}
                    self.add_snapshot(NumpyNet.from_arrays(arrays, info["activation"], info["kind"]), persist=False)
        except (OSError, ValueError, KeyError) as e:
            raise UserError(f"{p} (self-play pool) is corrupt: {e}") from None

    def evaluate(self, model: Any, n: int) -> None:
        t = time.perf_counter()
        point = {"step": int(n), "vs": self.evaluator(model)}
        self.curves.append(point)
        for name, m in point["vs"].items():
            model.logger.record(f"eval/{name}/mean_return", m["mean_return"])
            model.logger.record(f"eval/{name}/win_rate", m["win_rate"])
        _write_curves(self.run_dir, self.curves)
        self.log(f"eval at {n} steps ({time.perf_counter() - t:.1f}s): " + ", ".join(
            f"{k} {v['mean_return']:+.3f}" + (f" / win {v['win_rate']:.2f}" if self.evaluator.num_players > 1 else "")
            for k, v in point["vs"].items()))

    def save_model(self, model: Any, n: int, checkpoint: bool) -> None:
        saved_n = model.num_timesteps
        model.num_timesteps = n
        try:
            save_model(model, self.run_dir / MODEL_NAME, self.meta)
            if checkpoint:
                ck = self.run_dir / "checkpoints" / f"step_{n}.zip"
                save_model(model, ck, self.meta)
                cks = [c for c in self.state.get("checkpoints", []) if c != ck.name] + [ck.name]
                keep = int(self.settings.get("keep_checkpoints", 3))
                for old in cks[:-keep] if keep > 0 else []:
                    (self.run_dir / "checkpoints" / old).unlink(missing_ok=True)
                self.state["checkpoints"] = cks[-keep:] if keep > 0 else []
            if self.state["algo"] == "dqn" and getattr(model, "replay_buffer", None) is not None:
                model.save_replay_buffer(self.run_dir / "replay_buffer.pkl")
        finally:
            model.num_timesteps = saved_n
        self.state["num_timesteps"] = int(n)
        _write_state(self.run_dir, self.state)

    def checkpoint(self, model: Any, n: int) -> None:
        self.save_model(model, n, checkpoint=True)


# -- learning curves --------------------------------------------------------------------------------
def _read_curves(run_dir: Path) -> list[dict[str, Any]]:
    p = run_dir / "curves.json"
    if not p.exists():
        return []
    try:
        return list(json.loads(p.read_text())["points"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _write_curves(run_dir: Path, points: list[dict[str, Any]]) -> None:
    from results.records import atomic_write_json, atomic_write_text

    atomic_write_json(run_dir / "curves.json", {"points": points})
    rows = ["step,opponent,episodes,mean_return,return_low,return_high,win_rate,win_low,win_high"]
    for pt in points:
        for name, m in pt["vs"].items():
            rows.append(",".join(str(x) for x in (pt["step"], name, m["episodes"], m["mean_return"], *m["return_ci"],
                                                  m["win_rate"], *m["win_ci"])))
    atomic_write_text(run_dir / "curves.csv", "\n".join(rows) + "\n")


def plot_curves(run_dir: Path, title: str, baselines: dict[str, float] | None = None) -> Path | None:
    """curves.png: mean return (and, with opponents, win rate) against each opponent over timesteps."""
    points = _read_curves(run_dir)
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(points[0]["vs"])
    solo = names == ["solo"]
    fig, axes = plt.subplots(1, 1 if solo else 2, figsize=(6 if solo else 11, 4), squeeze=False)
    steps = [p["step"] for p in points]
    ax = axes[0][0]
    for name in names:
        ys = [p["vs"][name]["mean_return"] for p in points]
        lo = [p["vs"][name]["return_ci"][0] for p in points]
        hi = [p["vs"][name]["return_ci"][1] for p in points]
        line = ax.plot(steps, ys, marker="o", ms=3, label="agent" if solo else f"vs {name}")[0]
        ax.fill_between(steps, lo, hi, alpha=0.15, color=line.get_color())
    for i, (name, value) in enumerate((baselines or {}).items()):
        ax.axhline(value, ls="--", lw=1, label=f"{name} (persona alone)", color=f"C{(i + 1) % 10}")
    ax.set_xlabel("timesteps")
    ax.set_ylabel("mean return")
    ax.set_title("reward")
    ax.legend(fontsize=7)
    if not solo:
        ax = axes[0][1]
        for name in names:
            ys = [p["vs"][name]["win_rate"] for p in points]
            lo = [p["vs"][name]["win_ci"][0] for p in points]
            hi = [p["vs"][name]["win_ci"][1] for p in points]
            line = ax.plot(steps, ys, marker="o", ms=3, label=f"vs {name}")[0]
            ax.fill_between(steps, lo, hi, alpha=0.15, color=line.get_color())
        ax.set_xlabel("timesteps")
        ax.set_ylabel("win rate (Wilson 95%)")
        ax.set_ylim(0, 1)
        ax.set_title("win rate")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    out = run_dir / "curves.png"
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# -- final evaluation (fast numpy path, paired seeds) --------------------------------------------------
def final_evaluation(run_dir: Path, ruleset: str, scenario: str, config: Any, games: int, seed: int,
                     workers: int = 1) -> dict[str, Any]:
    """The trained agent against every persona; "beats" needs the interval to clear parity.

    Two or more seats: win rate against a field of the persona, Wilson 95% low end above the fair share
    (1/seats); also the return edge (agent's return minus the persona seats' mean, 95% interval), which
    matters where games often end without a single winner. One seat: the agent's mean-return interval
    lies wholly above the persona's (also reported: the paired edge over the same deal seeds).
    """
    from agents.registry import agent_names
    from envs.core.registry import get_ruleset
    from results.stats import paired_difference
    from training import runner
    from training.evaluate import evaluate

    rs = get_ruleset(ruleset)
    n = rs.scenario(scenario).players(config)
    me = f"rl:{run_dir}"
    # runner caches agents by name; a run resumed in this process must not be judged by its old weights.
    runner._AGENT_CACHE.pop((ruleset, scenario, me), None)
    out: dict[str, Any] = {"games": games, "seed": seed, "num_players": n, "vs": {}}
    if n == 1:
        ev = evaluate(rs, scenario, config, [me, *agent_names(ruleset)], games, seed, workers=workers)
        per = ev.metrics()["agents"]
        mine = per[me]
        out["agent"] = mine
        by_agent: dict[str, list[float]] = {}
        for r in ev.records:  # in job order: game g of every agent is played on the same deal seed
            by_agent.setdefault(r.agents[0], []).append(r.returns[0])
        for name in agent_names(ruleset):
            other = per[name]
            edge = paired_difference(by_agent[name], by_agent[me])
            out["vs"][name] = {"agent_mean_return": mine["mean_return"], "agent_return_ci": mine["return_ci"],
                               "persona_mean_return": other["mean_return"], "persona_return_ci": other["return_ci"],
                               "beats": mine["return_ci"][0] > other["return_ci"][1],
                               "paired_edge": round(edge.value, 6), "paired_edge_ci": edge.as_list()}
    else:
        fair = 1.0 / n
        for name in agent_names(ruleset):
            ev = evaluate(rs, scenario, config, [me, name], games, seed, workers=workers)
            m = ev.metrics()["matrix"][me][name]
            # Return edge: per game, the agent's return minus the mean return of the persona seats.
            edges = [r.returns[seat] - sum(x for k, x in enumerate(r.returns) if k != seat) / (n - 1)
                     for r, (fa, _fb, seat) in zip(ev.records, ev.matchups, strict=True) if fa == me]
            edge, edge_ci = _ci(edges)
            out["vs"][name] = {**m, "fair_share": round(fair, 6), "beats": m["win_ci"][0] > fair,
                               "return_edge": edge, "return_edge_ci": edge_ci, "beats_on_return": edge_ci[0] > 0}
    out["beats_all"] = all(v["beats"] for v in out["vs"].values())
    out["not_beaten"] = [k for k, v in out["vs"].items() if not v["beats"]]
    return out


# -- the driver ---------------------------------------------------------------------------------------
def train(cfg: TrainConfig) -> TrainResult:
    """Train (or resume) one run; returns its status. Raises UserError for bad input."""
    from envs.core.config import config_dict, config_hash, load_config, validate_config
    from envs.core.registry import get_ruleset
    from results.records import new_run_dir

    resumed = cfg.resume is not None
    if resumed:
        run_dir = Path(cfg.resume)  # type: ignore[arg-type]
        state = _load_state(run_dir)
        rs = get_ruleset(state["ruleset"])
        sc_name = state["scenario"]
        rs.scenario(sc_name)
        config = validate_config(rs.config_model, state["config"], f"{run_dir / STATE_NAME} config")
        if config_hash(config) != state["rules_hash"]:
            raise UserError(f"{run_dir}: the stored rules config no longer matches its hash (engine changed?)")
        if cfg.steps is not None and cfg.steps != state["target"]:
            cfg.log(f"note: --steps {cfg.steps} given; the run's target stays {state['target']} (resume continues it)")
        cfg.ruleset, cfg.scenario, cfg.algo = state["ruleset"], sc_name, state["algo"]
        cfg.opponent, cfg.seed = state["opponent"], int(state["seed"])
        hp = dict(state["hyperparameters"])
        target = int(state["target"])
        n_envs = int(state["n_envs"])
        vec = state.get("vec", DEFAULT_VEC)
    else:
        if cfg.algo not in ALGOS:
            raise UserError(f"unknown algorithm '{cfg.algo}'; valid: {', '.join(ALGOS)}")
        rs = get_ruleset(cfg.ruleset)
        sc_name = cfg.scenario
        rs.scenario(sc_name)
        config = load_config(rs, cfg.rules)
        hp = load_hyperparams(cfg.algo, rs.env_id(sc_name), cfg.hp)
        target = int(cfg.steps if cfg.steps is not None else hp.get("n_timesteps", 200_000))
        if target < 1:
            raise UserError(f"--steps must be positive, got {target}")
        n_envs = int(cfg.n_envs or hp.get("n_envs", 4))
        if n_envs < 1:
            raise UserError(f"--n-envs must be positive, got {n_envs}")
        vec = cfg.vec
        if vec not in VEC_KINDS:
            raise UserError(f"unknown --vec '{vec}'; valid: {', '.join(VEC_KINDS)}")
        if cfg.out is not None and (Path(cfg.out) / STATE_NAME).exists():
            raise UserError(f"{cfg.out} already holds a training run; continue it with --resume {cfg.out}")
        if cfg.out is not None:
            run_dir = Path(cfg.out)
            run_dir.mkdir(parents=True, exist_ok=True)
        else:
            run_dir = new_run_dir(rs.name, sc_name, kind="train")
        state = {}

    sc = rs.scenario(sc_name)
    num_players = sc.players(config)
    env_id = rs.env_id(sc_name)
    kwargs, settings = split_hp(hp)
    policy = kwargs.pop("policy", "MlpPolicy")
    kwargs["policy_kwargs"] = _policy_kwargs(kwargs.get("policy_kwargs"))
    if cfg.opponent not in OPPONENT_MODES:
        from agents.registry import agent_names

        if cfg.opponent not in agent_names(rs.name):
            raise UserError(f"unknown --opponent '{cfg.opponent}' for {rs.name}; valid: "
                            f"{', '.join([*agent_names(rs.name), 'self', 'mix'])}")
    if not state:
        state = {"ruleset": rs.name, "scenario": sc_name, "env_id": env_id, "algo": cfg.algo,
                 "opponent": cfg.opponent, "seed": cfg.seed, "target": target, "n_envs": n_envs, "vec": vec,
                 "hyperparameters": hp, "config": config_dict(config), "rules_hash": config_hash(config),
                 "observation_size": sc.observation_size, "num_actions": sc.num_actions, "num_players": num_players,
                 "num_timesteps": 0, "status": "running", "checkpoints": [],
                 "created": _dt.datetime.now().isoformat(timespec="seconds")}
        _write_state(run_dir, state)
    meta = {k: state[k] for k in ("ruleset", "scenario", "env_id", "algo", "observation_size", "num_actions",
                                  "rules_hash", "opponent", "seed")}

    # Resume: check the checkpoint before anything unpickles it.
    model_zip = run_dir / MODEL_NAME
    if resumed and model_zip.exists():
        zmeta = read_meta(model_zip)
        check_meta(zmeta, model_zip, rs.name, sc_name)
        for k in ("algo", "rules_hash"):
            if zmeta.get(k) != state[k]:
                raise UserError(f"{model_zip} was saved with {k}={zmeta.get(k)!r}, the run says {state[k]!r}")
        state["num_timesteps"] = int(zmeta["num_timesteps"])

    opponents = _opponents(cfg, n_envs, settings, sc.observation_bounds) if num_players > 1 else [None] * n_envs
    vec_env = make_vec_env(rs.name, sc_name, config, opponents, vec)
    masked = cfg.algo == "maskable-ppo"
    evaluator = PersonaEvaluator(rs.name, sc_name, config, int(settings.get("eval_episodes", 40)),
                                 cfg.seed + 12345, masked)
    cls = algo_class(cfg.algo)
    set_torch_threads(int(settings.get("torch_threads", DEFAULT_TORCH_THREADS)))
    tb = str(run_dir / "tb")
    try:
        if resumed and model_zip.exists():
            try:
                model = cls.load(model_zip, env=vec_env, device="cpu", tensorboard_log=tb)
            except Exception as e:  # noqa: BLE001 - a checkpoint that does not load is bad input
                raise UserError(f"cannot load checkpoint {model_zip}: {type(e).__name__}: {e}") from None
            model.num_timesteps = int(state["num_timesteps"])
            if cfg.algo == "dqn" and (run_dir / "replay_buffer.pkl").exists():
                model.load_replay_buffer(run_dir / "replay_buffer.pkl")
            model.set_random_seed(cfg.seed + model.num_timesteps)  # fresh games, not a replay of the first ones
        else:
            model = cls(policy, vec_env, seed=cfg.seed, device="cpu", tensorboard_log=tb, verbose=0, **kwargs)
    except TypeError as e:
        raise UserError(f"bad hyperparameters for {cfg.algo}: {e}") from None
    except ValueError as e:
        raise UserError(f"bad hyperparameters for {cfg.algo}: {e}") from None

    run = _Run(run_dir, state, settings, evaluator, vec_env, meta, cfg.log)
    if run.self_play:
        run.load_pool()
    done_before = int(state["num_timesteps"])
    state["status"] = "running"
    _write_state(run_dir, state)
    t0 = time.perf_counter()
    interrupted_by = None
    try:
        if done_before < target:
            from stable_baselines3.common.callbacks import CallbackList

            callback = CallbackList([_make_callback(run), *cfg.callbacks])
            with graceful_signals(run.stop):
                try:
                    model.learn(total_timesteps=target - done_before, callback=callback,
                                reset_num_timesteps=done_before == 0 and not resumed, tb_log_name=cfg.algo,
                                progress_bar=cfg.progress_bar)
                except KeyboardInterrupt:
                    interrupted_by = "SIGINT"
            if run.stop and interrupted_by is None:
                interrupted_by = signal.Signals(run.stop.signal).name  # type: ignore[arg-type]
        elapsed = time.perf_counter() - t0
        status = "interrupted" if interrupted_by else "completed"
        done = run.boundary if interrupted_by else int(model.num_timesteps)
        run.save_model(model, done, checkpoint=True)
        if status == "completed" and (not run.curves or run.curves[-1]["step"] < done):
            run.evaluate(model, done)
    finally:
        vec_env.close()
        evaluator.close()

    baselines = None
    metrics: dict[str, Any] = {"status": status, "num_timesteps": done, "target": target,
                               "timesteps_this_session": done - done_before,
                               "steps_per_second": round((done - done_before) / elapsed, 1) if elapsed > 0 else None}
    if interrupted_by:
        metrics["interrupted_by"] = interrupted_by
    metrics["curves"] = run.curves[-1] if run.curves else None
    state["status"] = status
    state["num_timesteps"] = done
    _write_state(run_dir, state)
    _write_run_record(run_dir, state, metrics)  # now, so a Ctrl-C in the final evaluation loses nothing
    if status == "completed" and cfg.final_eval:
        fe = final_evaluation(run_dir, rs.name, sc_name, config, int(settings.get("final_eval_games", 200)),
                              cfg.seed + 999, cfg.workers)
        metrics["final_evaluation"] = fe
        if num_players == 1:
            baselines = {k: v["persona_mean_return"] for k, v in fe["vs"].items()}
    against = f"vs {cfg.opponent}" if num_players > 1 else "one seat"
    plot_curves(run_dir, f"{env_id} {cfg.algo} {against} (seed {cfg.seed})", baselines)
    _write_run_record(run_dir, state, metrics)
    return TrainResult(run_dir, status, done, target, metrics)


def _write_run_record(run_dir: Path, state: dict[str, Any], metrics: dict[str, Any]) -> Path:
    from results.records import write_record

    extra = {k: state[k] for k in ("algo", "opponent", "target", "n_envs", "vec", "hyperparameters", "env_id")}
    extra["files"] = {"model": MODEL_NAME, "state": STATE_NAME, "curves": ["curves.json", "curves.csv", "curves.png"],
                      "tensorboard": "tb", "checkpoints": state.get("checkpoints", [])}
    return write_record(run_dir, command="train", ruleset=state["ruleset"], scenario=state["scenario"],
                        config=state["config"], rules_hash=state["rules_hash"], seed=int(state["seed"]),
                        metrics=metrics, extra=extra)


def rollout_size(state_or_hp: dict[str, Any], n_envs: int, algo: str) -> int:
    """Timesteps per rollout (the granularity of the total: a run ends at the first multiple >= target)."""
    hp = state_or_hp
    if algo == "dqn":
        tf = hp.get("train_freq", 4)
        return int(tf if isinstance(tf, int) else tf[0]) * n_envs
    return int(hp.get("n_steps", 2048 if algo != "a2c" else 5)) * n_envs


def expected_total(target: int, rollout: int) -> int:
    return int(math.ceil(target / rollout) * rollout)
