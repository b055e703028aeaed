"""Throughput benchmarks (``rulebreaker bench``): figures as ratios to a reference measured in the same run.

A benchmark is a function ``fn(opts: BenchOptions) -> dict`` registered under a name with
:func:`register_benchmark` (:mod:`training.bench.registry`). The modules of this package register theirs
when it is imported (:data:`BENCH_MODULES`, each with ``register()``); another module adds its own the
same way before calling :func:`run_benchmarks`. Results are plain dicts; ratios are what to compare across
machines, since the absolute rates depend on the machine and its load. Nothing here is asserted by tests.

Built-in benchmarks:
* ``train``: MaskablePPO training steps/s on a rulebreaker scenario ÷ SB3 PPO steps/s on Gymnasium's
  Blackjack-v1, same hyperparameters, same process.
* ``inference``: a trained agent's decisions/s through the numpy fast path (per decision, and batched)
  ÷ SB3 ``predict(obs, deterministic=True, action_masks=mask)`` one observation at a time.
* ``vec``: MaskablePPO training steps/s with DummyVecEnv vs SubprocVecEnv for 2, 4 and 8 envs.
* ``odds``: median milliseconds per exact odds table (``results.odds.odds_benchmarks``).
* ``regress`` and ``regress-games``: :mod:`training.bench.regress`.
"""

from __future__ import annotations

from typing import Any

from envs.core.errors import UserError
from training.bench import odds, regress, rl
from training.bench.registry import BENCHMARKS, Benchmark, BenchOptions, pick_scenario, register_benchmark
from training.train import set_torch_threads

BENCH_MODULES = (rl, odds, regress)
"""The modules whose benchmarks ship, registered in this order (the order of ``--list`` and of a full run)."""

for _module in BENCH_MODULES:
    _module.register()

__all__ = [
    "BENCHMARKS",
    "BENCH_MODULES",
    "BenchOptions",
    "Benchmark",
    "pick_scenario",
    "register_benchmark",
    "run_benchmarks",
]


def run_benchmarks(names: list[str] | None, opts: BenchOptions) -> dict[str, Any]:
    names = names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise UserError(f"unknown benchmark(s): {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)}")
    set_torch_threads(opts.torch_threads)
    return {n: BENCHMARKS[n].fn(opts) for n in names}
