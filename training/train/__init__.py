"""Training RL agents: ``rulebreaker train`` (the driver is :mod:`training.train.run`).

:mod:`~training.train.config` the settings and the state file; :mod:`~training.train.hyperparameters` the
zoo-style YAML; :mod:`~training.train.vec` and :mod:`~training.train.selfplay` the vectorised envs and the
self-play opponents; :mod:`~training.train.checkpoints` model zips, the snapshot pool and interruption;
:mod:`~training.train.evaluation` the periodic and final evaluations and the learning curves.
"""

from training.train.checkpoints import save_model
from training.train.config import DEFAULT_VEC, TrainConfig, TrainResult
from training.train.evaluation import PersonaEvaluator, final_evaluation
from training.train.hyperparameters import (
    HP_DIR,
    expected_total,
    load_hyperparams,
    parse_hp_overrides,
    policy_kwargs,
    rollout_size,
    set_torch_threads,
)
from training.train.run import train
from training.train.vec import make_vec_env

__all__ = [
    "DEFAULT_VEC",
    "HP_DIR",
    "PersonaEvaluator",
    "TrainConfig",
    "TrainResult",
    "expected_total",
    "final_evaluation",
    "load_hyperparams",
    "make_vec_env",
    "parse_hp_overrides",
    "policy_kwargs",
    "rollout_size",
    "save_model",
    "set_torch_threads",
    "train",
]
