"""Run records: every command that plays games can write one, atomically, under ``runs/``.

A record holds the resolved config and its hash, the seed, package versions and the metrics, so any
number in a report can be regenerated. Writes go to a temporary file in the same folder and are then
renamed, so an interrupted write never leaves a half-written record.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

RECORD_NAME = "record.json"
RECORD_VERSION = 1
_PACKAGES = ("rulebreaker", "gymnasium", "stable-baselines3", "sb3-contrib", "torch", "numpy", "icepool")


class CorruptRecordError(ValueError):
    pass


def package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")


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


def write_record(run_dir: Path, *, command: str, ruleset: str, scenario: str, config: dict[str, Any],
                 rules_hash: str, seed: int, metrics: dict[str, Any], extra: dict[str, Any] | None = None) -> Path:
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
