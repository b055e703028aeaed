"""``odds``: median milliseconds per exact odds table of each ruleset's core mechanic."""

from __future__ import annotations

from typing import Any

from results.odds import time_benchmarks
from training.bench.registry import BenchOptions, register_benchmark


def register() -> None:
    register_benchmark("odds", "exact odds tables of each ruleset's core mechanic (icepool): median ms per table")(
        bench_odds
    )


def bench_odds(opts: BenchOptions) -> dict[str, Any]:
    return {"median_ms_per_table": {k: round(v, 3) for k, v in time_benchmarks(repeat=5).items()}}
