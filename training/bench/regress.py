"""Benchmarks of ``rulebreaker regress``: wall time per scenario, and the games a paired SPRT needs.

``regress-games``: the share of paired games whose result flips between two rule versions (the
discordance) is measured on real rule changes — each knob perturbation of the blackbird duel, replayed
on the baseline's seeds — and the SPRT's average game count for a 3-point win-rate shift at that
discordance is compared with an unpaired fixed-sample test at the same α and power
(:mod:`training.bench.sprt_sample_size`).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from envs.core.config import load_config, with_override
from envs.core.registry import all_rulesets, get_ruleset
from training.bench.registry import BenchOptions, register_benchmark
from training.bench.sprt_sample_size import compare
from training.regress import baseline_path, load_baseline, regress


def register() -> None:
    register_benchmark("regress", "wall time of a default regress run per scenario (a copy of the rules as written)")(
        bench_regress_wall
    )
    register_benchmark("regress-games", "games the paired SPRT needs for a 3-point shift vs an unpaired test")(
        bench_regress_games
    )


def bench_regress_wall(opts: BenchOptions) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, rs in sorted(all_rulesets().items()):
        for sc in rs.scenarios:
            path = baseline_path(name, sc)
            if not path.exists():
                continue
            b = load_baseline(path, rs, sc)
            t0 = time.perf_counter()
            r = regress(rs, sc, load_config(rs), b, workers=2)
            out[f"{name}/{sc}"] = {
                "seconds": round(time.perf_counter() - t0, 2),
                "games": r.games_played,
                "exit_code": r.exit_code,
            }
    return out


def bench_regress_games(opts: BenchOptions) -> dict[str, Any]:
    rs = get_ruleset("blackbird")
    b = load_baseline(baseline_path("blackbird", "duel"), rs, "duel")
    base = load_config(rs)
    discordances = {}
    for knob in rs.knobs:
        if knob.scenarios and "duel" not in knob.scenarios:
            continue
        for v in knob.values:
            try:
                cfg = with_override(base, knob.key, v)
            except Exception:  # noqa: BLE001 - a perturbation the config rejects is skipped
                continue
            r = regress(rs, "duel", cfg, b, workers=2)
            prim = [m for m in r.metrics if m.primary]
            discordances[f"{knob.key}={v}"] = round(statistics.fmean(m.discordance for m in prim), 4)
    typical = statistics.median(discordances.values())
    p0 = 0.5
    result = compare(p0, max(typical, 0.04), delta=0.03, reps=300, seed=opts.seed)
    return {"discordance_by_change": discordances, "median_discordance": typical, **result}
