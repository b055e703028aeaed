"""Instructions per env step under callgrind: the load-independent figure of speed work.

``python -m training.bench.instructions [--first 2000] [--last 5000] ENV_ID|floor ...`` runs the bench's loop
(uniformly random legal actions through ``gymnasium.make``, seed 0) for ``first`` and then for ``last`` steps,
each in a fresh Python under ``valgrind --tool=callgrind``, and prints the difference of the two instruction
totals divided by ``last - first``: the instructions of one step in the steady state, without start-up and
warm-up. ``floor`` is the bench's trivial engine through the same adapter and wrappers.

Wall-clock rates swing with the machine's load; instruction counts do not (the same binary and inputs give the
same count whatever else runs), so several people can measure on shared cores at once. Instructions are not
time: an engine's instructions cost more wall time than the adapter's (more calls and allocations per
instruction), so the bench's ratios remain the figure of record. ``PYTHONHASHSEED=0`` and one BLAS thread keep
the count repeatable. Needs valgrind (Debian's package ``valgrind``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys


def step_env(env_id: str, steps: int, seed: int = 0) -> None:
    """The measured loop: ``steps`` steps of the bench's random-legal loop on ``env_id`` (``floor``: the trivial
    engine), from ``reset(seed=seed)``."""
    import envs  # noqa: F401  (registers the env ids)
    from training.bench.speed import ADAPTER_FLOOR, _Stepper, trivial_env

    stepper = _Stepper(ADAPTER_FLOOR, seed, env=trivial_env()) if env_id == "floor" else _Stepper(env_id, seed)
    stepper.run(steps)


def instructions(env_id: str, steps: int) -> int:
    """Instructions of a fresh Python that imports the project and runs :func:`step_env` for ``steps`` steps."""
    code = f"from training.bench.instructions import step_env; step_env({env_id!r}, {steps})"
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise RuntimeError(f"callgrind printed no total:\n{out[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--first", type=int, default=2000, help="steps of the shorter run (start-up and warm-up)")
    p.add_argument("--last", type=int, default=5000, help="steps of the longer run")
    p.add_argument("env_ids", nargs="+", help="registered env ids, or 'floor' for the adapter's trivial engine")
    a = p.parse_args(argv)
    if not 0 <= a.first < a.last:
        p.exit(2, f"error: --first {a.first} and --last {a.last}: need 0 <= first < last\n")
    import gymnasium as gym

    import envs  # noqa: F401  (registers the env ids)

    known = sorted(k for k in gym.registry if k.startswith("rulebreaker/"))
    for env_id in a.env_ids:
        if env_id != "floor" and env_id not in known:
            p.exit(2, f"error: unknown env id {env_id!r}; known: floor, {', '.join(known)}\n")
    if shutil.which("valgrind") is None:
        p.exit(2, "error: valgrind is not installed (apt-get install valgrind); it counts the instructions\n")
    for env_id in a.env_ids:
        per_step = (instructions(env_id, a.last) - instructions(env_id, a.first)) / (a.last - a.first)
        print(f"{env_id} {per_step / 1000:.1f}k instructions per step", flush=True)


if __name__ == "__main__":
    main()
