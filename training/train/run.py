"""Training RL agents on a scenario: the driver of ``rulebreaker train`` (read top to bottom).

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

import datetime as _dt
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.registry import agent_names
from agents.rl import ALGOS, MODEL_NAME, NumpyNet, algo_class, check_meta, export_numpy, read_meta
from envs.core.config import config_dict, config_hash, load_config, validate_config
from envs.core.errors import UserError
from envs.core.registry import get_ruleset
from results.records import CorruptRecordError, new_run_dir, read_record, write_record
from training.train.checkpoints import StopFlag, graceful_signals, read_pool, save_model, write_pool
from training.train.config import (
    DEFAULT_VEC,
    OPPONENT_MODES,
    STATE_NAME,
    VEC_KINDS,
    TrainConfig,
    TrainResult,
    load_state,
    write_state,
)
from training.train.evaluation import PersonaEvaluator, final_evaluation, plot_curves, read_curves, write_curves
from training.train.hyperparameters import (
    DEFAULT_TORCH_THREADS,
    check_hyperparams,
    load_hyperparams,
    policy_kwargs,
    set_torch_threads,
    split_hp,
)
from training.train.vec import make_opponents, make_vec_env


def _make_callback(run: _Run) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback  # lazy: SB3 (and torch) load only to train

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

    def __init__(
        self,
        run_dir: Path,
        state: dict[str, Any],
        settings: dict[str, Any],
        evaluator: PersonaEvaluator,
        vec_env: Any,
        meta: dict[str, Any],
        log: Callable[[str], None],
    ) -> None:
        self.run_dir = run_dir
        self.state = state
        self.settings = settings
        self.evaluator = evaluator
        self.vec_env = vec_env
        self.meta = meta
        self.log = log
        self.stop = StopFlag()
        self.boundary = int(state.get("num_timesteps", 0))
        # A curve point past the model being continued belongs to a model that was lost: never mix the two.
        self.curves: list[dict[str, Any]] = [
            c
            for c in read_curves(run_dir)
            if isinstance(c, dict) and type(c.get("step")) is int and c["step"] <= self.boundary and "vs" in c
        ]
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
        self.pool = self.pool[-int(self.settings.get("pool_size", 10)) :]
        self.vec_env.env_method("add_snapshot", net)
        if persist:
            self.save_pool()

    def save_pool(self) -> None:
        self.state["pool"] = write_pool(self.run_dir, self.pool)

    def load_pool(self) -> None:
        for net in read_pool(self.run_dir, self.state.get("pool") or {}):
            self.add_snapshot(net, persist=False)

    def evaluate(self, model: Any, n: int) -> None:
        t = time.perf_counter()
        vs = self.evaluator(model)
        point = {"step": int(n), "vs": vs}
        self.curves.append(point)
        for name, m in vs.items():
            model.logger.record(f"eval/{name}/mean_return", m["mean_return"])
            model.logger.record(f"eval/{name}/win_rate", m["win_rate"])
        write_curves(self.run_dir, self.curves)
        self.log(
            f"eval at {n} steps ({time.perf_counter() - t:.1f}s): "
            + ", ".join(
                f"{k} {v['mean_return']:+.3f}"
                + (f" / win {v['win_rate']:.2f}" if self.evaluator.num_players > 1 else "")
                for k, v in vs.items()
            )
        )

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
        write_state(self.run_dir, self.state)

    def checkpoint(self, model: Any, n: int) -> None:
        self.save_model(model, n, checkpoint=True)


# -- the driver ---------------------------------------------------------------------------------------
def train(cfg: TrainConfig) -> TrainResult:
    """Train (or resume) one run; returns its status. Raises UserError for bad input."""
    resumed = cfg.resume is not None
    if resumed:
        run_dir = Path(cfg.resume)  # type: ignore[arg-type]
        state = load_state(run_dir)
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
        check_hyperparams(hp)
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
        if not 1 <= n_envs <= 64:
            raise UserError(f"--n-envs must be 1..64, got {n_envs}")
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

    for folder in ("checkpoints", "tb"):  # a file in the way would stop the run after its first rollout
        if (run_dir / folder).exists() and not (run_dir / folder).is_dir():
            raise UserError(f"{run_dir / folder} is a file; the run keeps a folder there: move the file away")
    sc = rs.scenario(sc_name)
    num_players = sc.players(config)
    env_id = rs.env_id(sc_name)
    kwargs, settings = split_hp(hp)
    policy = kwargs.pop("policy", "MlpPolicy")
    kwargs["policy_kwargs"] = policy_kwargs(kwargs.get("policy_kwargs"))
    if cfg.opponent not in OPPONENT_MODES and cfg.opponent not in agent_names(rs.name):
        raise UserError(
            f"unknown --opponent '{cfg.opponent}' for {rs.name}; valid: "
            f"{', '.join([*agent_names(rs.name), 'self', 'mix'])}"
        )
    if not state:
        state = {
            "ruleset": rs.name,
            "scenario": sc_name,
            "env_id": env_id,
            "algo": cfg.algo,
            "opponent": cfg.opponent,
            "seed": cfg.seed,
            "target": target,
            "n_envs": n_envs,
            "vec": vec,
            "hyperparameters": hp,
            "config": config_dict(config),
            "rules_hash": config_hash(config),
            "observation_size": sc.observation_length(config),
            "num_actions": sc.action_count(config),
            "num_players": num_players,
            "num_timesteps": 0,
            "status": "running",
            "checkpoints": [],
            "created": _dt.datetime.now().isoformat(timespec="seconds"),
        }
        write_state(run_dir, state)
    meta = {
        k: state[k]
        for k in (
            "ruleset",
            "scenario",
            "env_id",
            "algo",
            "observation_size",
            "num_actions",
            "rules_hash",
            "config",
            "opponent",
            "seed",
        )
    }

    # Resume: check the checkpoint before anything unpickles it.
    model_zip = run_dir / MODEL_NAME
    source = _resume_source(run_dir, state, rs.name, sc_name, cfg.log) if resumed else None
    from_checkpoint = source is not None and source != model_zip
    last_saved = int(state.get("num_timesteps", 0))  # replay_buffer.pkl was written with the model of this step
    if source is not None:
        state["num_timesteps"] = int(read_meta(source)["num_timesteps"])
    if from_checkpoint:  # later checkpoints (invalid, or the list of a lost model) are dropped
        state["checkpoints"] = [c for c in state.get("checkpoints", []) if _step_of(c) <= state["num_timesteps"]]
    elif resumed and source is None:  # nothing was ever saved: the run starts again from its first step
        state["num_timesteps"], state["checkpoints"] = 0, []

    opponents = make_opponents(cfg, n_envs, settings, sc.observation_bounds) if num_players > 1 else [None] * n_envs
    vec_env = make_vec_env(rs.name, sc_name, config, opponents, vec)
    masked = cfg.algo == "maskable-ppo"
    evaluator = PersonaEvaluator(
        rs.name, sc_name, config, int(settings.get("eval_episodes", 40)), cfg.seed + 12345, masked
    )
    cls = algo_class(cfg.algo)
    if cfg.algo == "maskable-ppo":  # sb3-contrib's, its masked distributions built without a discarded step
        from training.train.masked import MaskablePPO  # lazy: SB3 (and torch) load only to train

        cls = MaskablePPO
    set_torch_threads(int(settings.get("torch_threads", DEFAULT_TORCH_THREADS)))
    tb = str(run_dir / "tb")
    try:
        if source is not None:
            try:
                model = cls.load(source, env=vec_env, device="cpu", tensorboard_log=tb)
            except Exception as e:  # noqa: BLE001 - a checkpoint that does not load is bad input
                raise UserError(f"cannot load checkpoint {source}: {type(e).__name__}: {e}") from None
            model.num_timesteps = int(state["num_timesteps"])
            # The replay buffer (a pickle, see docs/training.md) belongs to the last save: not to an older checkpoint.
            same_model = not from_checkpoint or state["num_timesteps"] == last_saved
            if cfg.algo == "dqn" and same_model and (run_dir / "replay_buffer.pkl").exists():
                model.load_replay_buffer(run_dir / "replay_buffer.pkl")
            model.set_random_seed(cfg.seed + model.num_timesteps)  # fresh games, not a replay of the first ones
        else:
            model = cls(policy, vec_env, seed=cfg.seed, device="cpu", tensorboard_log=tb, verbose=0, **kwargs)
    except (TypeError, ValueError, AssertionError) as e:
        raise UserError(f"bad hyperparameters for {cfg.algo}: {e}") from None

    run = _Run(run_dir, state, settings, evaluator, vec_env, meta, cfg.log)
    if run.self_play and not from_checkpoint:  # the pool saved with a lost model.zip is not reloaded
        run.load_pool()
    done_before = int(state["num_timesteps"])
    state["status"] = "running"
    write_state(run_dir, state)
    t0 = time.perf_counter()
    interrupted_by = None
    try:
        if done_before < target:
            from stable_baselines3.common.callbacks import CallbackList  # lazy: SB3 (and torch) load only to train

            callback = CallbackList([_make_callback(run), *cfg.callbacks])
            with graceful_signals(run.stop):
                try:
                    model.learn(
                        total_timesteps=target - done_before,
                        callback=callback,
                        reset_num_timesteps=done_before == 0 and not resumed,
                        tb_log_name=cfg.algo,
                        progress_bar=cfg.progress_bar,
                    )
                except KeyboardInterrupt:  # a second Ctrl-C or SIGTERM: the step in progress is abandoned
                    interrupted_by = signal.Signals(run.stop.signal).name if run.stop.signal is not None else "SIGINT"
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
    metrics: dict[str, Any] = {
        "status": status,
        "num_timesteps": done,
        "target": target,
        "timesteps_this_session": done - done_before,
        "steps_per_second": round((done - done_before) / elapsed, 1) if elapsed > 0 else None,
    }
    if interrupted_by:
        metrics["interrupted_by"] = interrupted_by
    metrics["curves"] = run.curves[-1] if run.curves else None
    state["status"] = status
    state["num_timesteps"] = done
    write_state(run_dir, state)
    # A finished run resumed (e.g. with --no-final-eval) keeps the final evaluation of this very model.
    kept = _kept_final_evaluation(run_dir, done) if status == "completed" else None
    if kept is not None:
        metrics["final_evaluation"] = kept
        if num_players == 1:
            baselines = {k: v["persona_mean_return"] for k, v in kept["vs"].items()}
    _write_run_record(run_dir, state, metrics)  # now, so a Ctrl-C in the final evaluation loses nothing
    if status == "completed" and cfg.final_eval:
        fe = final_evaluation(
            run_dir, rs.name, sc_name, config, int(settings.get("final_eval_games", 200)), cfg.seed + 999, cfg.workers
        )
        metrics["final_evaluation"] = fe
        if num_players == 1:
            baselines = {k: v["persona_mean_return"] for k, v in fe["vs"].items()}
    against = f"vs {cfg.opponent}" if num_players > 1 else "one seat"
    write_error = None
    try:
        plot_curves(run_dir, f"{env_id} {cfg.algo} {against} (seed {cfg.seed})", baselines)
        _write_run_record(run_dir, state, metrics)
    except OSError as e:  # the results are returned all the same; the command reports the path
        write_error = f"{e.filename or run_dir}: {e.strerror or e}"
    return TrainResult(run_dir, status, done, target, metrics, write_error)


def _step_of(name: str) -> int:
    """The timestep count in a checkpoint name ``step_<N>.zip`` (-1 if the name is not one)."""
    stem = Path(name).stem
    return int(stem[5:]) if stem.startswith("step_") and stem[5:].isdigit() else -1


def _resume_source(
    run_dir: Path, state: dict[str, Any], ruleset: str, scenario: str, log: Callable[[str], None]
) -> Path | None:
    """The zip a resume continues: ``model.zip``, else the newest valid checkpoint; None if nothing was trained.

    A checkpoint is valid when its metadata matches the run (ruleset, scenario, sizes, algorithm, rules). With no
    ``model.zip`` and no valid checkpoint, a run that had trained is refused, never restarted from 0.
    """
    model_zip = run_dir / MODEL_NAME
    if model_zip.exists():
        _check_zip(model_zip, state, ruleset, scenario)
        return model_zip
    ck_dir = run_dir / "checkpoints"
    found = sorted((p for p in ck_dir.glob("step_*.zip") if _step_of(p.name) >= 0), key=lambda p: -_step_of(p.name))
    for ck in found:
        try:
            _check_zip(ck, state, ruleset, scenario)
        except UserError as e:
            log(f"note: skipping checkpoint {ck.name}: {e}")
            continue
        log(f"note: {model_zip} is missing; resuming from the newest valid checkpoint, {ck}")
        return ck
    done = int(state.get("num_timesteps", 0))
    if done > 0 or found:
        raise UserError(
            f"{model_zip} is missing and {ck_dir} holds no valid checkpoint: cannot resume this run "
            f"({done} timesteps done); start a new run"
        )
    return None


def _check_zip(path: Path, state: dict[str, Any], ruleset: str, scenario: str) -> None:
    zmeta = read_meta(path)
    check_meta(zmeta, path, ruleset, scenario)
    for k in ("algo", "rules_hash"):
        if zmeta.get(k) != state[k]:
            raise UserError(f"{path} was saved with {k}={zmeta.get(k)!r}, the run says {state[k]!r}")
    if not isinstance(zmeta.get("num_timesteps"), int) or zmeta["num_timesteps"] < 0:
        raise UserError(f"{path} has no valid timestep count in its metadata")


def _kept_final_evaluation(run_dir: Path, done: int) -> dict[str, Any] | None:
    """The final evaluation in the run's record, if it was made of the model at ``done`` timesteps."""
    try:
        rec = read_record(run_dir)
    except CorruptRecordError:
        return None
    m = rec.get("metrics") or {}
    fe = m.get("final_evaluation") if isinstance(m, dict) else None
    if rec.get("command") == "train" and isinstance(fe, dict) and m.get("num_timesteps") == done:
        return fe
    return None


def _write_run_record(run_dir: Path, state: dict[str, Any], metrics: dict[str, Any]) -> Path:
    extra = {k: state[k] for k in ("algo", "opponent", "target", "n_envs", "vec", "hyperparameters", "env_id")}
    extra["files"] = {
        "model": MODEL_NAME,
        "state": STATE_NAME,
        "curves": ["curves.json", "curves.csv", "curves.png"],
        "tensorboard": "tb",
        "checkpoints": state.get("checkpoints", []),
    }
    return write_record(
        run_dir,
        command="train",
        ruleset=state["ruleset"],
        scenario=state["scenario"],
        config=state["config"],
        rules_hash=state["rules_hash"],
        seed=int(state["seed"]),
        metrics=metrics,
        extra=extra,
    )
