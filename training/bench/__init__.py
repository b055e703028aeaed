"""Throughput benchmarks (``rulebreaker bench``): figures as ratios to a reference measured in the same run.

A benchmark is a function ``fn(opts: BenchOptions) -> dict`` registered under a name with
:func:`register_benchmark` (:mod:`training.bench.registry`). The modules of this package register theirs
when it is imported (:data:`BENCH_MODULES`, each with ``register()``); another module adds its own the
same way before calling :func:`run_benchmarks`. Results are plain dicts; ratios are what to compare across
machines, since the absolute rates depend on the machine and its load. Nothing here is asserted by tests.

A bare run (``rulebreaker bench``) runs :data:`TABLE_BENCHMARKS` and prints the summary table of
:mod:`training.bench.table` (every figure of issue 16 with its goal). Built-in benchmarks:
* ``envs``, ``search``, ``games``: :mod:`training.bench.speed` (env steps/s ÷ Blackjack-v1 and ``clone()``
  cost, search-agent decisions/s, persona games/s and the ``--workers 2`` speed-up).
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
from training.bench import odds, regress, rl, speed
from training.bench.registry import BENCHMARKS, Benchmark, BenchOptions, pick_scenario, register_benchmark
from training.bench.table import TABLE_BENCHMARKS, Row, machine_info, markdown_table, rows_as_dicts, summary_rows
from training.train import set_torch_threads

BENCH_MODULES = (speed, rl, odds, regress)
"""The modules whose benchmarks ship, registered in this order (the order of ``--list`` and of a full run)."""

for _module in BENCH_MODULES:
    _module.register()

__all__ = [
    "BENCHMARKS",
    "BENCH_MODULES",
    "TABLE_BENCHMARKS",
    "BenchOptions",
    "Benchmark",
    "Row",
    "machine_info",
    "markdown_table",
    "pick_scenario",
    "register_benchmark",
    "rows_as_dicts",
    "run_benchmarks",
    "summary_rows",
]


def run_benchmarks(names: list[str] | None, opts: BenchOptions) -> dict[str, Any]:
    """Run the named benchmarks (default: the summary table's, :data:`TABLE_BENCHMARKS`) in this process."""
    names = names or [n for n in TABLE_BENCHMARKS if n in BENCHMARKS]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise UserError(f"unknown benchmark(s): {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)}")
    set_torch_threads(opts.torch_threads)
    out: dict[str, Any] = {}
    for i, n in enumerate(names):
        if opts.on_progress is not None:
            opts.on_progress(n, i, len(names))
        out[n] = BENCHMARKS[n].fn(opts)
    return out
