"""Vectorised training environments: one env per opponent object, in-process or in subprocesses."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from gymnasium.wrappers import TimeLimit

from agents.registry import make_agent
from envs.core.errors import UserError
from envs.core.game import Ruleset
from envs.core.registry import get_ruleset, register_ruleset
from training.train.config import DEFAULT_VEC, VEC_KINDS, TrainConfig
from training.train.selfplay import RotatingSeatEnv, pool_opponent_for


def env_factory(
    ruleset: Any, scenario: str, config: Any, opponent: Any, rank: int, max_steps: int, in_subprocess: bool
) -> Callable[[], Any]:
    def thunk() -> Any:
        if in_subprocess:  # Ctrl-C goes to the main process only; it stops training and saves
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        from stable_baselines3.common.monitor import Monitor  # lazy: SB3 (and torch) load only to train

        if isinstance(ruleset, Ruleset):  # a worker process: the ruleset may not be a built-in one
            register_ruleset(ruleset)
        rs = get_ruleset(ruleset.name if isinstance(ruleset, Ruleset) else ruleset)
        env = RotatingSeatEnv(rs, scenario, config=config, opponents=opponent, seat_offset=rank)
        return Monitor(TimeLimit(env, max_episode_steps=max_steps))

    return thunk


def lean_dummy_vec_env(fns: list[Callable[[], Any]]) -> Any:
    """SB3's DummyVecEnv without its two deep copies per step (same observations, rewards and infos).

    DummyVecEnv deep-copies every step's info dicts and its observation buffer, in case an env reuses
    them. The rulebreaker adapter returns a fresh info dict and a fresh observation array on every step,
    so a copy of each info dict and of the observation array hand the learner the same values; on the
    blackbird session the deep copies were ~7% of MaskablePPO's training time (issue 16).
    """
    from stable_baselines3.common.vec_env import DummyVecEnv  # lazy: SB3 loads only to train
    from stable_baselines3.common.vec_env.util import dict_to_obs

    class LeanDummyVecEnv(DummyVecEnv):
        def step_wait(self) -> Any:
            for i, env in enumerate(self.envs):
                obs, reward, terminated, truncated, info = env.step(self.actions[i])
                done = terminated or truncated
                info["TimeLimit.truncated"] = truncated and not terminated
                if done:  # the episode's last observation goes in its info; the env starts the next one
                    info["terminal_observation"] = obs
                    obs, self.reset_infos[i] = env.reset()
                self.buf_rews[i], self.buf_dones[i], self.buf_infos[i] = reward, done, info
                self._save_obs(i, obs)
            infos = [dict(info) for info in self.buf_infos]
            return self._obs_from_buf(), self.buf_rews.copy(), self.buf_dones.copy(), infos

        def _obs_from_buf(self) -> Any:
            return dict_to_obs(self.observation_space, {k: v.copy() for k, v in self.buf_obs.items()})

    return LeanDummyVecEnv(fns)


def make_vec_env(ruleset: str, scenario: str, config: Any, opponents: list[Any], vec: str = DEFAULT_VEC) -> Any:
    """One env per opponent object (self-play pools are per env), DummyVecEnv or SubprocVecEnv."""
    from stable_baselines3.common.vec_env import SubprocVecEnv  # lazy: SB3 loads only to train

    if vec not in VEC_KINDS:
        raise UserError(f"unknown --vec '{vec}'; valid: {', '.join(VEC_KINDS)}")
    rs = get_ruleset(ruleset)
    max_steps = rs.scenario(scenario).max_episode_steps
    fns = [
        env_factory(rs if vec == "subproc" else ruleset, scenario, config, opp, i, max_steps, vec == "subproc")
        for i, opp in enumerate(opponents)
    ]
    return SubprocVecEnv(fns) if vec == "subproc" and len(fns) > 1 else lean_dummy_vec_env(fns)


def make_opponents(cfg: TrainConfig, n_envs: int, settings: dict[str, Any], bounds: tuple[float, float]) -> list[Any]:
    """The opponent of each env: a self-play pool (``self``/``mix``) or a persona, one object per env."""
    if cfg.opponent in ("self", "mix"):
        return [
            pool_opponent_for(
                cfg.ruleset,
                cfg.scenario,
                cfg.opponent,
                float(settings.get("mix_persona_prob", 0.5)),
                int(settings.get("pool_size", 10)),
                bounds,
                cfg.seed * 1000 + i,
            )
            for i in range(n_envs)
        ]
    make_agent(cfg.ruleset, cfg.opponent, cfg.scenario)  # validates the name (UserError lists valid ones)
    return [make_agent(cfg.ruleset, cfg.opponent, cfg.scenario) for _ in range(n_envs)]
