"""Run records: every command that plays games can write one, atomically, under ``runs/``.

A record holds the resolved config and its hash, the seed, package versions and the metrics, so any
number in a report can be regenerated. Writes go to a temporary file in the same folder and are then
renamed, so an interrupted write never leaves a half-written record (:func:`atomic_write_bytes` is the
one place that does this; every file rulebreaker writes goes through it).

:class:`GameRecord` is the record of one played game, as the batch runner (``training.runner``)
returns it and as fingerprints, findings and reports read it.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

RECORD_NAME = "record.json"
RECORD_VERSION = 1
_PACKAGES = ("rulebreaker", "gymnasium", "stable-baselines3", "sb3-contrib", "torch", "numpy", "icepool")


class CorruptRecordError(ValueError):
    pass


@dataclass
class GameRecord:
    """One played game: who played, who won and why, and (when traced) its decisions and resources."""

    index: int
    seed: int
    agents: tuple[str, ...]
    winner: int | None
    reason: str
    returns: tuple[float, ...]
    length: int
    decisions: list[tuple[int, str, str]] = field(default_factory=list)  # (seat, context, option)
    resources: list[dict[str, Any]] = field(default_factory=list)  # per decision: seat -> resources
    log: list[str] = field(default_factory=list)
    actions: list[tuple[int, int]] = field(default_factory=list)  # (seat, action) for replays
    available: set[str] = field(default_factory=set)  # option groups that were legal at some decision (trace)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its constructor's arguments, without the empty lists of an untraced game.

        Worker processes send every record back to the parent: a batch game keeps no actions, decisions or log,
        and its record then travels as seven values (a third of the bytes and of the time of the default).
        """
        head = (self.index, self.seed, self.agents, self.winner, self.reason, self.returns, self.length)
        if self.decisions or self.resources or self.log or self.actions or self.available:
            return (GameRecord, (*head, self.decisions, self.resources, self.log, self.actions, self.available))
        return (GameRecord, head)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "seed": self.seed,
            "agents": list(self.agents),
            "winner": self.winner,
            "reason": self.reason,
            "returns": list(self.returns),
            "length": self.length,
        }


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def finite_json(data: Any) -> Any:
    """``data`` with every non-finite float (NaN, ±inf) replaced by ``None``: standard JSON, readable anywhere."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite_json(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [finite_json(v) for v in data]
    return data


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as standard JSON (no ``NaN``/``Infinity``: see :func:`finite_json`), atomically."""
    text = json.dumps(finite_json(data), indent=2, sort_keys=False, default=str, allow_nan=False)
    atomic_write_text(path, text + "\n")


def new_run_dir(ruleset: str, scenario: str, root: Path | str = "runs", kind: str = "") -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{stamp}-{ruleset}-{scenario}{'-' + kind if kind else ''}"
    path = base
    i = 1
    while path.exists():
        i += 1
        path = Path(f"{base}-{i}")
    path.mkdir(parents=True)
    return path


def write_record(
    run_dir: Path,
    *,
    command: str,
    ruleset: str,
    scenario: str,
    config: dict[str, Any],
    rules_hash: str,
    seed: int,
    metrics: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> Path:
    record = {
        "record_version": RECORD_VERSION,
        "command": command,
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "ruleset": ruleset,
        "scenario": scenario,
        "rules_hash": rules_hash,
        "config": config,
        "seed": seed,
        "versions": package_versions(),
        "metrics": metrics,
        **(extra or {}),
    }
    path = run_dir / RECORD_NAME
    atomic_write_json(path, record)
    return path


def read_record(path: Path | str) -> dict[str, Any]:
    """Read a run record, refusing a corrupt or foreign file with a clear message."""
    p = Path(path)
    if p.is_dir():
        p = p / RECORD_NAME
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptRecordError(f"no run record at {p}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptRecordError(f"run record {p} is corrupt (not valid JSON: {e})") from None
    if not isinstance(data, dict) or "record_version" not in data or "ruleset" not in data:
        raise CorruptRecordError(f"{p} is not a rulebreaker run record")
    if data["record_version"] > RECORD_VERSION:
        raise CorruptRecordError(f"run record {p} has version {data['record_version']}, newer than this rulebreaker")
    return data
