"""What every command shares: the two consoles, the common options, loading a ruleset and its rules, and
the checks made before any work (the output folder, the number of workers, the agent list)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape

from envs.core.config import load_config
from envs.core.errors import UserError
from envs.core.game import Ruleset
from envs.core.registry import get_ruleset
from results.records import RECORD_NAME, new_run_dir

out = Console()
err = Console(stderr=True)

SEED_MAX = 2**64 - 1
"""Seeds are 64-bit (``envs.core.dice.seed_for`` reads them modulo 2**64): larger or negative ones are refused."""
TRAIN_STATE = "train_state.json"
"""The file that marks a training run folder (training.train.config.STATE_NAME; jobs are not imported here)."""
TRAIN_SEED_MAX = 2**31 - 1
"""Training seeds go to numpy's legacy seeding (below 2**32) with offsets added: kept below 2**31."""

RulesOpt = Annotated[Path | None, typer.Option("--rules", help="A variant TOML overriding rules.toml.")]
SeedOpt = Annotated[
    int, typer.Option("--seed", min=0, max=SEED_MAX, help="Base seed (0..2**64-1); the same seed gives the same games.")
]


def say(console: Console, text: str) -> None:
    """Print ``text`` as it is: no rich markup, no highlighting (user strings: paths, names, messages)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def shown(value: object) -> str:
    """A user string made safe to embed in a rich markup string (``[red]`` in a path stays literal)."""
    return escape(str(value))


def check_finite(option: str, value: float) -> float:
    """Refuse ``inf``/``nan`` for a float option (click's ranges let them through)."""
    if not math.isfinite(value):
        raise UserError(f"{option} must be a finite number, got {value}")
    return value


def clamp_workers(workers: int, option: str = "--workers") -> int:
    """``workers`` limited to the machine's cores, with a note when it is lowered."""
    cores = os.cpu_count() or 1
    if workers > cores:
        say(err, f"note: {option} {workers} lowered to {cores}, the number of cores on this machine")
        return cores
    return workers


def split_agents(agents: str, option: str = "--agents") -> list[str]:
    """The names of a comma-separated agent list; an empty list or an empty entry is refused."""
    names = [a.strip() for a in agents.split(",")]
    if not agents.strip() or any(not n for n in names):
        raise UserError(f"{option} '{agents}' has an empty name; give comma-separated agent names, e.g. random,random")
    return names


def record_command(folder: Path) -> str | None:
    """The command that wrote ``folder/record.json`` (``"?"`` if it is unreadable), or None if there is none."""
    p = folder / RECORD_NAME
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "?"
    return str(data.get("command", "?")) if isinstance(data, dict) else "?"


def check_out_dir(path: Path, command: str, option: str = "--out") -> Path:
    """Make sure the output folder ``path`` can be written, before any work; refuse another command's run.

    The folder is created if needed and a probe file is written and removed. A file in the way, a folder that
    cannot be created or written, or a folder holding another command's ``record.json`` is refused (exit 2).
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path} is a file, not a folder; give a folder for the run")
    holder = record_command(path) if path.is_dir() else None
    if holder is None and command != "train" and (path / TRAIN_STATE).exists():
        holder = "train"
    if holder == "?" and command == "train" and (path / TRAIN_STATE).exists():
        holder = None  # a training run whose record is damaged: its own record, rewritten at the end
    if holder is not None and holder != command:
        raise UserError(
            f"{option} {path} holds a `{holder}` run; {command} will not write its {RECORD_NAME} there: "
            "give another folder"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"{option} {path} cannot be written: {e.strerror or e}") from None
    return path


def check_out_file(path: Path, option: str) -> Path:
    """Make sure the file ``path`` can be written later (its folder exists or can be made; it is not a folder)."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{option} {path} is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"{option} {path} cannot be written: {e.strerror or e}") from None
    return path


def ruleset_and_config(name: str, rules: Path | None) -> tuple[Ruleset, BaseModel]:
    """The ruleset called ``name`` and its resolved rules (with a variant's overrides)."""
    rs = get_ruleset(name)
    return rs, load_config(rs, rules)


def fresh_run_dir(ruleset: str, scenario: str, kind: str) -> Path:
    """A new ``runs/<stamp>-<ruleset>-<scenario>-<kind>`` folder, made before the work (exit 2 if it cannot be)."""
    try:
        return new_run_dir(ruleset, scenario, kind=kind)
    except OSError as e:
        raise UserError(f"cannot create a run folder under runs/: {e.strerror or e}") from None


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[list[int]]:
    """Within the block SIGTERM interrupts like Ctrl-C (so finished work is kept); yields ``[signal]`` once hit."""
    hit: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield hit
        return

    def on_term(signum: int, frame: object) -> None:
        hit.append(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        yield hit
    finally:
        signal.signal(signal.SIGTERM, old)
