"""Behaviour fingerprints: one hash per env of what its games do, to show that speed work changes no result.

``python -m training.bench.fingerprint [--steps N] [--games N] [env-substring ...]`` prints, for every registered
env, two SHA-256 digests (shortened):

* ``steps``: ``N`` seeded uniformly random legal steps through ``gymnasium.make`` (the bench's own loop and seed:
  observations, rewards, ends, masks and outcomes, byte for byte);
* ``games``: persona games of every pairing of the scenario's personas (as ``evaluate`` deals them), traced and
  narrated: each record's winner, returns, reason, length, decisions, trajectories and event log.

Two commits with the same lines play the same games for the same seeds. Nothing is asserted here: compare the
output of the commit before a change with the output after it (``diff``).
"""

from __future__ import annotations

import argparse
import hashlib
import random
from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np

from agents.registry import agent_names
from envs.core.registry import all_rulesets, get_ruleset
from training.evaluate import matchup_jobs
from training.runner import run_games


def steps_digest(env_id: str, steps: int, seed: int = 0) -> str:
    """The digest of ``steps`` random legal steps of ``env_id`` from ``reset(seed=seed)``."""
    env = gym.make(env_id)
    h = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    h.update(np.asarray(obs).tobytes())
    base: Any = env.unwrapped
    rnd = random.Random(seed)
    for _ in range(steps):
        mask = base.action_masks()
        h.update(mask.tobytes())
        legal = mask.nonzero()[0]
        obs, reward, term, trunc, info = env.step(legal[int(rnd.random() * len(legal))])
        h.update(np.asarray(obs).tobytes())
        h.update(repr((float(reward), bool(term), bool(trunc), info.get("outcome"))).encode())
        if term or trunc:
            obs, info = env.reset()
            h.update(np.asarray(obs).tobytes())
    env.close()
    return h.hexdigest()[:16]


def games_digest(ruleset: str, scenario: str, games: int, seed: int = 0, max_pairs: int = 40) -> str:
    """The digest of traced, narrated persona games of every pairing (at most ``max_pairs``) of the scenario."""
    rs = get_ruleset(ruleset)
    agents = [a for a in agent_names(ruleset) if a != "random"] or ["random"]
    jobs, _ = matchup_jobs(rs, scenario, rs.default_config(), agents, games, seed, trace=True)
    per_pair = max(1, games)
    jobs = [replace(j, narrate=True) for j in jobs[: max_pairs * per_pair]]
    h = hashlib.sha256()
    for rec in run_games(jobs):
        fields = sorted((k, sorted(v) if isinstance(v, set | frozenset) else v) for k, v in vars(rec).items())
        h.update(repr(fields).encode())
    return h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--games", type=int, default=30)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("only", nargs="*", help="substrings of env ids to keep")
    a = p.parse_args(argv)
    for name, rs in sorted(all_rulesets().items()):
        for sc in rs.scenarios:
            env_id = rs.env_id(sc)
            if a.only and not any(s in env_id for s in a.only):
                continue
            print(env_id, "steps", steps_digest(env_id, a.steps, a.seed), flush=True)
            print(env_id, "games", games_digest(name, sc, a.games, a.seed), flush=True)


if __name__ == "__main__":
    main()
