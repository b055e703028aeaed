"""How many games does the paired SPRT need to flag a win-rate shift, against an unpaired fixed-sample test?

The paired games of a real rule change tell how often a game's result flips between the two rule versions
under common random numbers (the discordance rate). Paired outcomes are then simulated with that
discordance and a shift of ``delta`` (P(variant wins, baseline loses) − P(baseline wins, variant loses) =
delta), and the SPRT of :mod:`results.sprt` is run on each stream until its verdict. The unpaired
reference is the per-arm size of a two-proportion z-test at the same α and power.
"""

from __future__ import annotations

import random
import statistics
from typing import Any

from results.sprt import Verdict, fixed_sample_size_unpaired, paired_sprt
from results.stats import quantile


def simulate_sprt(
    discordance: float,
    delta: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    reps: int = 200,
    cap: int = 50_000,
    seed: int = 0,
    look_every: int = 25,
) -> dict[str, Any]:
    if not 0 <= abs(delta) <= discordance <= 1:
        raise ValueError("need |delta| <= discordance <= 1")
    q_plus = (discordance + delta) / 2
    q_minus = (discordance - delta) / 2
    rng = random.Random(seed)
    ns: list[int] = []
    changed = 0
    for _ in range(reps):
        diffs: list[float] = []
        verdict = Verdict.UNDECIDED
        while len(diffs) < cap:
            for _ in range(look_every):
                r = rng.random()
                diffs.append(1.0 if r < q_plus else -1.0 if r < q_plus + q_minus else 0.0)
            verdict = paired_sprt(diffs, max(abs(delta), 0.03), alpha, beta).verdict
            if verdict is not Verdict.UNDECIDED:
                break
        ns.append(len(diffs))
        changed += verdict is Verdict.CHANGED
    return {
        "discordance": discordance,
        "delta": delta,
        "mean_games": statistics.fmean(ns),
        "median_games": statistics.median(ns),
        "p90_games": int(quantile(ns, 0.9)),
        "flagged": changed / reps,
        "reps": reps,
    }


def compare(
    p0: float,
    discordance: float,
    delta: float = 0.03,
    alpha: float = 0.05,
    beta: float = 0.05,
    reps: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """The paired SPRT's game count against the unpaired fixed-sample size, plus its error rates."""
    shifted = simulate_sprt(discordance, delta, alpha, beta, reps, seed=seed)
    null = simulate_sprt(discordance, 0.0, alpha, beta, reps, seed=seed + 1)
    fixed = fixed_sample_size_unpaired(p0, delta, alpha, beta)
    return {
        "p0": p0,
        "delta": delta,
        "alpha": alpha,
        "beta": beta,
        "discordance": discordance,
        "sprt_mean_games": shifted["mean_games"],
        "sprt_median_games": shifted["median_games"],
        "sprt_power": shifted["flagged"],
        "sprt_false_alarm": null["flagged"],
        "sprt_mean_games_no_change": null["mean_games"],
        "unpaired_games_per_arm": fixed,
        "ratio_unpaired_to_sprt": fixed / shifted["mean_games"],
    }
