"""The settings of a training run (:class:`TrainConfig`), its result, and the run's state file."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.core.errors import UserError
from results.records import atomic_write_json

STATE_NAME = "train_state.json"
POOL_NAME = "pool.npz"
OPPONENT_MODES = ("random", "self", "mix")
VEC_KINDS = ("dummy", "subproc")
DEFAULT_VEC = "dummy"  # measured on the 2-core box: see docs/training.md ("Vectorised envs")


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
    write_error: str | None = None  # the last record/plot could not be written (the path and why)


def load_state(run_dir: Path) -> dict[str, Any]:
    p = run_dir / STATE_NAME
    if not run_dir.is_dir() or not p.exists():
        raise UserError(
            f"{run_dir} is not a training run directory (no {STATE_NAME}); "
            "--resume only accepts directories written by `rulebreaker train`"
        )
    try:
        state = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{p} is corrupt: {e}") from None
    need = ("ruleset", "scenario", "algo", "target", "hyperparameters", "config", "rules_hash")
    if not isinstance(state, dict) or any(k not in state for k in need):
        raise UserError(f"{p} is not a rulebreaker training state")
    for key, kind, required in STATE_FIELDS:
        if key not in state:
            if required:
                raise UserError(f"{p} lacks '{key}': not a complete training state")
            continue
        value = state[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UserError(f"{p}: '{key}' is {value!r:.40}, not a valid value (a damaged training state)")
        if isinstance(value, int) and value < (1 if key in ("target", "n_envs") else 0):
            raise UserError(f"{p}: '{key}' is {value}, out of range (a damaged training state)")
    if not all(isinstance(c, str) for c in state.get("checkpoints", [])):
        raise UserError(f"{p}: 'checkpoints' must list file names (a damaged training state)")
    return state


STATE_FIELDS: tuple[tuple[str, type, bool], ...] = (
    ("ruleset", str, True),
    ("scenario", str, True),
    ("algo", str, True),
    ("target", int, True),
    ("hyperparameters", dict, True),
    ("config", dict, True),
    ("rules_hash", str, True),
    ("seed", int, True),
    ("n_envs", int, True),
    ("opponent", str, True),
    ("num_timesteps", int, False),
    ("vec", str, False),
    ("checkpoints", list, False),
    ("pool", dict, False),
    ("status", str, False),
)
"""The fields of ``train_state.json``, their JSON types, and whether a resume needs them."""


def write_state(run_dir: Path, state: dict[str, Any]) -> None:
    state["updated"] = _dt.datetime.now().isoformat(timespec="seconds")
    atomic_write_json(run_dir / STATE_NAME, state)
