"""Hyperparameters in zoo-style YAML (``training/hyperparams/<algo>.yaml``): a ``default`` block, a block per
env id, ``--hp`` overrides; and the sizes they imply (rollout, total timesteps)."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import yaml

from agents.rl import ALGOS, algo_class
from envs.core.errors import UserError

HP_DIR = Path(__file__).resolve().parents[1] / "hyperparams"
SETTINGS_KEYS = (
    "n_envs",
    "n_timesteps",
    "eval_freq",
    "eval_episodes",
    "checkpoint_freq",
    "keep_checkpoints",
    "snapshot_freq",
    "pool_size",
    "mix_persona_prob",
    "final_eval_games",
    "torch_threads",
)
DEFAULT_TORCH_THREADS = 1  # small MLPs on a busy 2-core box: one thread is faster and far steadier
_ACT_FNS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU"}


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
        raise UserError(
            f"unknown hyperparameter(s) for {algo}: {', '.join(unknown)}; valid: {', '.join(sorted(allowed))}"
        )
    return hp


def split_hp(hp: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(algorithm constructor kwargs, rulebreaker settings)."""
    settings = {k: hp[k] for k in SETTINGS_KEYS if k in hp}
    kwargs = {k: v for k, v in hp.items() if k not in SETTINGS_KEYS}
    return kwargs, settings


def policy_kwargs(pk: dict[str, Any] | None) -> dict[str, Any] | None:
    """SB3's ``policy_kwargs`` with an activation named in YAML (``tanh``…) turned into its torch class."""
    if not pk:
        return pk
    import torch.nn as nn  # lazy: torch loads only when a model is built

    out = dict(pk)
    act = out.get("activation_fn")
    if isinstance(act, str):
        if act not in _ACT_FNS:
            raise UserError(f"policy_kwargs.activation_fn '{act}' unknown; valid: {', '.join(_ACT_FNS)}")
        out["activation_fn"] = getattr(nn, _ACT_FNS[act])
    return out


def set_torch_threads(n: int) -> None:
    """Torch intra-op threads (0 keeps torch's default). See DEFAULT_TORCH_THREADS."""
    if n > 0:
        import torch  # lazy: torch loads only when training or a benchmark needs it

        torch.set_num_threads(n)


def rollout_size(state_or_hp: dict[str, Any], n_envs: int, algo: str) -> int:
    """Timesteps per rollout (the granularity of the total: a run ends at the first multiple >= target)."""
    hp = state_or_hp
    if algo == "dqn":
        tf = hp.get("train_freq", 4)
        return int(tf if isinstance(tf, int) else tf[0]) * n_envs
    return int(hp.get("n_steps", 2048 if algo != "a2c" else 5)) * n_envs


def expected_total(target: int, rollout: int) -> int:
    return int(math.ceil(target / rollout) * rollout)
