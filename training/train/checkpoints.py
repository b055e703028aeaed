"""Checkpoints: model zips (with their ``rulebreaker.json`` entry), the self-play pool, and the signals that
stop a run so that it saves where it is.

Interruption: SIGTERM or a first Ctrl-C sets a :class:`StopFlag`; the training callback stops at the next
step and the run saves a checkpoint (see :mod:`training.train.run`). A second SIGTERM or Ctrl-C raises
``KeyboardInterrupt`` at once, so a step that never returns cannot keep the run from saving and exiting.
"""

from __future__ import annotations

import contextlib
import io
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.rl import NumpyNet, model_zip_bytes
from envs.core.errors import UserError
from results.records import atomic_write_bytes
from training.train.config import POOL_NAME


def save_model(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    """Save an SB3 model atomically, with a ``rulebreaker.json`` entry inside the zip (see agents.rl)."""
    return atomic_write_bytes(path, model_zip_bytes(model, meta))


def write_pool(run_dir: Path, pool: list[NumpyNet]) -> dict[str, Any]:
    """Write the self-play pool as ``pool.npz`` (numpy weights, no pickle); returns what the state file keeps."""
    arrays: dict[str, Any] = {f"s{k}_{name}": a for k, net in enumerate(pool) for name, a in net.to_arrays().items()}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(run_dir / POOL_NAME, buf.getvalue())
    return {"snapshots": len(pool), "activation": pool[0].activation, "kind": pool[0].kind} if pool else {}


def read_pool(run_dir: Path, info: dict[str, Any]) -> list[NumpyNet]:
    """The snapshots of ``pool.npz`` described by ``info`` (the state file's ``pool`` entry), oldest first."""
    p = run_dir / POOL_NAME
    if not p.exists() or not info:
        return []
    try:
        with np.load(p, allow_pickle=False) as z:
            return [
                NumpyNet.from_arrays(
                    {name.split("_", 1)[1]: z[name] for name in z.files if name.startswith(f"s{k}_")},
                    info["activation"],
                    info["kind"],
                )
                for k in range(int(info["snapshots"]))
            ]
    except (OSError, ValueError, KeyError) as e:
        raise UserError(f"{p} (self-play pool) is corrupt: {e}") from None


class StopFlag:
    """Set by SIGTERM / the first SIGINT; the training callback stops at the next step."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None


@contextlib.contextmanager
def graceful_signals(flag: StopFlag) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: Any) -> None:
        if flag:  # a second SIGTERM: a step that does not end (a stuck engine loop) is abandoned now
            raise KeyboardInterrupt
        flag.signal = signum

    def on_int(signum: int, frame: Any) -> None:
        if flag:  # second Ctrl-C: stop now
            raise KeyboardInterrupt
        flag.signal = signum

    old_term = signal.signal(signal.SIGTERM, on_term)
    old_int = signal.signal(signal.SIGINT, on_int)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
