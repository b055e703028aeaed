"""Sequential tests for paired comparisons (the chess-engine testing model).

For paired observations ``d_i = variant_i − baseline_i`` (common random numbers: the same seeds under
both rule versions), a two-sided generalised SPRT tests H0: E[d] = 0 against H1: |E[d]| = δ, using the
normal approximation of the log-likelihood ratio that fishtest-style engine testing uses:

    LLR(μ1) = (μ1 / σ²) · (Σ d_i − n · μ1 / 2)

with σ² the running variance of ``d``, floored at δ (as if at least a fraction δ of the pairs were
discordant) so that identical games conclude "unchanged" after about ``2·log((1−α)/β)/δ`` pairs
instead of at once. H1 is accepted
when either side's LLR crosses ``log((1 − β) / α)``; H0 when both fall below ``log(β / (1 − α))``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist


class Verdict(StrEnum):
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class SprtResult:
    verdict: Verdict
    n: int
    llr_up: float
    llr_down: float
    lower: float
    upper: float


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def paired_sprt(
    diffs: Sequence[float],
    delta: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    var_floor: float | None = None,
    min_n: int = 30,
) -> SprtResult:
    """Two-sided GSPRT on paired differences for a shift of at least ``delta``."""
    n = len(diffs)
    lower, upper = sprt_bounds(alpha, beta)
    if n < max(2, min_n):
        return SprtResult(Verdict.UNDECIDED, n, 0.0, 0.0, lower, upper)
    s = sum(diffs)
    mean = s / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    floor = var_floor if var_floor is not None else delta
    var = max(var, floor)
    llr_up = (delta / var) * (s - n * delta / 2)
    llr_down = (delta / var) * (-s - n * delta / 2)
    if llr_up >= upper or llr_down >= upper:
        v = Verdict.CHANGED
    elif llr_up <= lower and llr_down <= lower:
        v = Verdict.UNCHANGED
    else:
        v = Verdict.UNDECIDED
    return SprtResult(v, n, llr_up, llr_down, lower, upper)


def fixed_sample_size_unpaired(p: float, delta: float, alpha: float = 0.05, beta: float = 0.05) -> int:
    """Games per arm an unpaired two-proportion z-test needs to detect ``p`` → ``p + delta``.

    Two-sided α, power 1 − β, no continuity correction.
    """
    z_a = NormalDist().inv_cdf(1 - alpha / 2)
    z_b = NormalDist().inv_cdf(1 - beta)
    p2 = min(1.0, p + delta)
    pbar = (p + p2) / 2
    num = (z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p * (1 - p) + p2 * (1 - p2))) ** 2
    return math.ceil(num / (delta * delta))
