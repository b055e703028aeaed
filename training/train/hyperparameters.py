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
            why = " ".join(str(e).split())
            raise UserError(f"--hp {key}: cannot parse '{value}' as YAML: {why}") from None
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
    check_hyperparams(hp)
    return hp


# -- the values a run can be built from --------------------------------------------------------------
_INT_RANGES: dict[str, tuple[int, int]] = {
    "n_envs": (1, 64),
    "n_timesteps": (1, 10**12),
    "eval_freq": (1, 10**12),
    "eval_episodes": (1, 100_000),
    "checkpoint_freq": (1, 10**12),
    "keep_checkpoints": (0, 1000),
    "snapshot_freq": (1, 10**12),
    "pool_size": (1, 1000),
    "final_eval_games": (1, 100_000),
    "torch_threads": (0, 256),
    "n_steps": (1, 1_000_000),
    "batch_size": (1, 1_000_000),
    "n_epochs": (1, 1000),
    "buffer_size": (1, 10_000_000),
    "learning_starts": (0, 10**12),
    "gradient_steps": (-1, 10_000),
    "target_update_interval": (1, 10**12),
    "stats_window_size": (1, 1_000_000),
}
"""Integer hyperparameters and their bounds (sizes are capped so that no value allocates without bound)."""
_FLOAT_RANGES: dict[str, tuple[float, float, bool]] = {  # (low, high, low is excluded)
    "learning_rate": (0.0, 10.0, True),
    "gamma": (0.0, 1.0, False),
    "gae_lambda": (0.0, 1.0, False),
    "clip_range": (0.0, 10.0, True),
    "ent_coef": (0.0, 100.0, False),
    "vf_coef": (0.0, 100.0, False),
    "max_grad_norm": (0.0, 1e6, True),
    "mix_persona_prob": (0.0, 1.0, False),
    "exploration_fraction": (0.0, 1.0, False),
    "exploration_initial_eps": (0.0, 1.0, False),
    "exploration_final_eps": (0.0, 1.0, False),
    "tau": (0.0, 1.0, True),
    "rms_prop_eps": (0.0, 1.0, True),
}
_OPTIONAL_FLOATS = {"clip_range_vf": (0.0, 10.0, True), "target_kl": (0.0, 100.0, True)}
_BOOLS = ("normalize_advantage", "use_sde", "use_rms_prop", "optimize_memory_usage")
MAX_LAYERS = 16
MAX_WIDTH = 4096


def _check_int(key: str, value: Any, low: int, high: int) -> None:
    if type(value) is not int or not low <= value <= high or (key == "gradient_steps" and value == 0):
        allowed = "-1 or 1.." + str(high) if key == "gradient_steps" else f"an integer {low}..{high}"
        raise UserError(f"hyperparameter {key}={value!r:.40}: expected {allowed}")


def _check_float(key: str, value: Any, low: float, high: float, open_low: bool) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok and (value < low or value > high or (open_low and value == low)):
        ok = False
    if not ok:
        lo = f"> {low:g}" if open_low else f">= {low:g}"
        raise UserError(f"hyperparameter {key}={value!r:.40}: expected a number {lo} and <= {high:g}")


def _check_net_arch(arch: Any) -> None:
    layers = arch if isinstance(arch, list) else None
    if isinstance(arch, dict):
        if not set(arch) <= {"pi", "vf", "qf"} or not arch:
            raise UserError(f"policy_kwargs.net_arch {arch!r:.60}: a dict has pi/vf (or qf) lists of layer widths")
        for part in arch.values():
            _check_net_arch(part)
        return
    if layers is None or len(layers) > MAX_LAYERS or any(type(w) is not int or not 1 <= w <= MAX_WIDTH for w in layers):
        raise UserError(
            f"policy_kwargs.net_arch {arch!r:.60}: expected a list of at most {MAX_LAYERS} layer widths, "
            f"each an integer 1..{MAX_WIDTH}"
        )


def check_hyperparams(hp: dict[str, Any]) -> None:
    """Refuse a value SB3 would crash on (``n_steps=0``, ``learning_rate=abc``, a zero-width layer…), naming it."""
    for key, value in hp.items():
        if key in _INT_RANGES:
            _check_int(key, value, *_INT_RANGES[key])
        elif key in _FLOAT_RANGES:
            _check_float(key, value, *_FLOAT_RANGES[key])
        elif key in _OPTIONAL_FLOATS and value is not None:
            _check_float(key, value, *_OPTIONAL_FLOATS[key])
        elif key in _BOOLS and type(value) is not bool:
            raise UserError(f"hyperparameter {key}={value!r:.40}: expected true or false")
        elif key == "train_freq":
            ok = type(value) is int and value >= 1
            ok = ok or (
                isinstance(value, list)
                and len(value) == 2
                and type(value[0]) is int
                and value[0] >= 1
                and value[1] in ("step", "episode")
            )
            if not ok:
                raise UserError(
                    f"hyperparameter train_freq={value!r:.40}: expected an integer >= 1 or [n, step|episode]"
                )
        elif key == "policy" and value != "MlpPolicy":
            raise UserError(f"hyperparameter policy={value!r:.40}: only MlpPolicy is supported (rl agents are MLPs)")
        elif key == "policy_kwargs" and value is not None:
            if not isinstance(value, dict):
                raise UserError(f"hyperparameter policy_kwargs={value!r:.40}: expected a mapping")
            if "net_arch" in value:
                _check_net_arch(value["net_arch"])


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
    if act is not None and not isinstance(act, str):
        raise UserError(f"policy_kwargs.activation_fn {act!r:.40} unknown; valid: {', '.join(_ACT_FNS)}")
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
